"""An ``update`` step's patch applied to an API object: ``patched``, the object through its
manifest form, ``emulator.base.api.mergepatch.merge_patch`` (RFC 7386, as ``kubectl patch --type
merge`` applies it; its table says what each patch value does) and back to the same kind.

It does not write: the runner updates the result, and the API server validates it as any
update.
"""

from __future__ import annotations

from typing import Any

import msgspec

from emulator.base.api.codec import convert, to_builtins
from emulator.base.api.errors import Invalid
from emulator.base.api.mergepatch import merge_patch
from emulator.base.api.unmodelled import capture, lift
from emulator.base.inputs import msgspec_error

__all__ = ["patched"]


def patched(obj: Any, patch: dict[str, Any]) -> Any:
    """``obj`` with ``patch`` merged into its manifest form, decoded as the same kind;
    a value of the wrong type is ``Invalid`` at its field."""
    doc = merge_patch(lift(to_builtins(obj)), patch)
    try:
        return capture(convert(doc, type(obj)), doc)
    except msgspec.ValidationError as err:
        message, path = msgspec_error(err)
        raise Invalid.at(obj.kind, obj.metadata.name, path, message) from None
