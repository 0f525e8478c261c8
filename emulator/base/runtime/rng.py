"""Seeded randomness: one scenario seed, one independent stream per component.

This module owns how random streams are derived. A run has one integer seed; each component
(``"scheduler"``, ``"kubelet:node-3"``, ``"client:latency"``) draws from its own
``random.Random`` seeded by ``derive_seed(seed, name)``. Streams are independent, so adding
draws to one component never shifts another's numbers, and the derivation is SHA-256 of
``f"{seed}/{name}"``, never ``hash()``, so it is the same in every process whatever
``PYTHONHASHSEED`` is. UIDs come from a stream too
(``emulator.base.apiserver.uids.fast_uid``), never from ``uuid.uuid4()``.

It does not own where the seed comes from (the scenario) or which names components use.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

__all__ = ["Seeds", "derive_seed", "stream"]


def derive_seed(seed: int, name: str) -> int:
    """A 64-bit seed for component ``name`` of a run seeded with ``seed``; stable everywhere."""
    digest = hashlib.sha256(f"{seed}/{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def stream(seed: int, name: str) -> random.Random:
    """A fresh random stream for component ``name``: same seed and name, same numbers."""
    return random.Random(derive_seed(seed, name))


@dataclass(frozen=True, slots=True)
class Seeds:
    """A run's seed, handing out one stream per component name."""

    seed: int

    def stream(self, name: str) -> random.Random:
        """A fresh stream for ``name`` (each call starts the sequence anew)."""
        return stream(self.seed, name)
