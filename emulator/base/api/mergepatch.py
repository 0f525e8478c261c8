"""JSON merge patch (RFC 7386), as ``kubectl patch --type merge`` and upstream's apiserver apply
it (evanphx/json-patch ``MergePatch``): the one implementation, for the HTTP ``PATCH``
(``emulator.base.http.patch``) and the scenario's ``update`` steps (``emulator.app.scenario.patch``).

It owns the algorithm on JSON-like values only: no decoding into Structs, no validation, no
Go-flavoured messages (those are its callers').

=========================  ===================================================
patch value                effect on the target
=========================  ===================================================
a mapping                  merged key by key into the target's mapping (a
                           target that is not a mapping is replaced by ``{}``
                           first)
``null`` under a key       the key is removed
anything else              replaces the value whole, copied (lists are never
                           merged)
=========================  ===================================================
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["merge_patch"]


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 ``MergePatch(target, patch)``. Neither argument is changed, and the result
    shares no mutable value with ``patch`` (values it takes from ``target`` are shared)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out
