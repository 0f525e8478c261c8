"""Revisions of a pod template, as upstream's ``pkg/controller/history`` names them.

The StatefulSet and DaemonSet controllers tell pods of the current template from older ones
by the label ``controller-revision-hash``. Upstream keeps each template as a
``ControllerRevision`` object named ``<owner>-<hash>``; the emulated API has no such kind, so
a controller keeps the revision *name* (in the owner's status and the pods' label) and, for
the templates it must recreate pods from, an in-memory history (``RevisionHistory``).

What this module owns: the hash (FNV-1a 32 of the template's canonical JSON, written with
``rand.SafeEncodeString``'s alphabet as upstream's ``HashControllerRevision`` and
``ComputeHash`` write theirs: the same shape, not the same digits, since upstream hashes Go's
serialisation), the revision name, and the history. It does not own when a revision becomes
current (the controllers).
"""

from __future__ import annotations

from typing import Final

import msgspec

from emulator.base.api.codec import enc_hook
from emulator.base.api.podtemplate import PodTemplateSpec

__all__ = ["CONTROLLER_REVISION_HASH", "RevisionHistory", "revision_name", "template_hash"]

CONTROLLER_REVISION_HASH: Final = "controller-revision-hash"
"""Upstream ``apps.ControllerRevisionHashLabelKey`` (also ``DefaultDaemonSetUniqueLabelKey``)."""

_ALPHANUMS: Final = "bcdfghjklmnpqrstvwxz2456789"
"""``k8s.io/apimachinery/pkg/util/rand``'s alphabet: no vowels, no 0/1/3 (no words)."""
_FNV_OFFSET: Final = 0x811C9DC5
_FNV_PRIME: Final = 0x01000193
_ENCODER: Final = msgspec.json.Encoder(order="deterministic", enc_hook=enc_hook)
"""Quantities (container requests and limits) are written as their text, as on the wire."""


def _fnv1a32(data: bytes) -> int:
    h = _FNV_OFFSET
    for b in data:
        h = ((h ^ b) * _FNV_PRIME) & 0xFFFFFFFF
    return h


def _safe_encode(s: str) -> str:
    """``rand.SafeEncodeString``: each byte mapped onto the alphabet."""
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in s)


def template_hash(template: PodTemplateSpec, collision_count: int | None = None) -> str:
    """The hash of ``template`` (and ``collision_count`` when set), e.g. ``7c5ddbdf54``."""
    data = _ENCODER.encode(template)
    if collision_count is not None:
        data += str(collision_count).encode()
    return _safe_encode(str(_fnv1a32(data)))


def revision_name(owner: str, template: PodTemplateSpec, collision_count: int | None = None) -> str:
    """``<owner>-<hash>``: the name upstream gives the template's ControllerRevision."""
    return f"{owner}-{template_hash(template, collision_count)}"


class RevisionHistory:
    """The templates a controller has seen, by revision name (the stand-in for the
    ControllerRevisions it would list). Bounded per owner by ``revisionHistoryLimit`` + 1."""

    def __init__(self) -> None:
        self._by_owner: dict[str, dict[str, PodTemplateSpec]] = {}

    def __repr__(self) -> str:
        return f"<RevisionHistory owners={len(self._by_owner)}>"

    def record(self, owner_uid: str, name: str, template: PodTemplateSpec, limit: int = 10) -> None:
        revs = self._by_owner.setdefault(owner_uid, {})
        revs.pop(name, None)
        revs[name] = template  # newest last
        while len(revs) > max(limit, 0) + 1:
            del revs[next(iter(revs))]

    def get(self, owner_uid: str, name: str) -> PodTemplateSpec | None:
        return self._by_owner.get(owner_uid, {}).get(name)

    def forget(self, owner_uid: str) -> None:
        self._by_owner.pop(owner_uid, None)
