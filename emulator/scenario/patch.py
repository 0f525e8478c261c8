"""JSON merge patch (RFC 7386), as ``kubectl patch --type merge`` applies it, for ``update`` steps.

What this module owns: ``merge_patch`` (pure, on JSON-like values) and ``patched`` (an API
object through its manifest form and back). It does not write: the runner updates the
result, and the API server validates it as any update.

=========================  ===================================================
patch value                effect on the target
=========================  ===================================================
a mapping                  merged key by key into the target's mapping (a
                           target that is not a mapping is replaced by ``{}``
                           first)
``null`` under a key       the key is removed
anything else              replaces the value whole (lists are never merged)
=========================  ===================================================
"""

from __future__ import annotations

from typing import Any

import msgspec

from emulator.api.codec import convert, to_builtins
from emulator.api.errors import Invalid
from emulator.inputs import msgspec_error

__all__ = ["merge_patch", "patched"]


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 ``MergePatch(target, patch)``; neither argument is changed."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def patched(obj: Any, patch: dict[str, Any]) -> Any:
    """``obj`` with ``patch`` merged into its manifest form, decoded as the same kind;
    a value of the wrong type is ``Invalid`` at its field."""
    doc = merge_patch(to_builtins(obj), patch)
    try:
        return convert(doc, type(obj))
    except msgspec.ValidationError as err:
        message, path = msgspec_error(err)
        raise Invalid.at(obj.kind, obj.metadata.name, path, message) from None
