"""Object UIDs, as ``str(uuid.UUID(int=rng.getrandbits(128), version=4))`` makes them,
without building a ``uuid.UUID``.

That expression is the reference (``new_uid`` in ``tests/references.py``). ``fast_uid`` draws
the same 128 bits, sets the same variant and version bits as ``uuid.UUID(int=..., version=4)``
and formats the hex digits directly, so the same generator state gives the same string and
leaves the generator in the same state.
"""

from __future__ import annotations

import random
from typing import Final

__all__ = ["fast_uid"]

_CLEAR: Final = ~((0xC000 << 48) | (0xF000 << 64)) & ((1 << 128) - 1)
"""Clears the variant bits (clock_seq_hi) and the version nibble (time_hi)."""
_SET: Final = (0x8000 << 48) | (4 << 76)
"""RFC 4122 variant, version 4."""


def fast_uid(rng: random.Random) -> str:
    """The UUID string ``str(uuid.UUID(int=rng.getrandbits(128), version=4))`` would be."""
    h = ((rng.getrandbits(128) & _CLEAR) | _SET).to_bytes(16, "big").hex()  # faster than the ``:032x`` format
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
