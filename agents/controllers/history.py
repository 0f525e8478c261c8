"""Revisions of a pod template, as upstream's ``pkg/controller/history`` keeps them.

The StatefulSet and DaemonSet controllers tell pods of the current template from older ones
by the label ``controller-revision-hash``, and keep each template they have run as a
``ControllerRevision`` API object named ``<owner>-<hash>``: ``data`` is the strategic merge
patch that restores the template (upstream's ``getPatch``: ``{"spec": {"template": {...,
"$patch": "replace"}}}``, every field of the template, modelled or not), ``revision`` its number.
That is what ``kubectl rollout history`` lists and ``kubectl rollout undo`` patches back.

What this module owns: the hash (FNV-1a 32 of the template's canonical JSON, unmodelled fields
included, written with ``rand.SafeEncodeString``'s alphabet as upstream's
``HashControllerRevision`` and ``ComputeHash`` write theirs: the same shape, not the same digits,
since upstream hashes Go's serialisation), the revision name, the revision's data, and the
history's upkeep (``sync_history``: upstream DaemonSet ``constructHistory``/``snapshot``, the
StatefulSet's ``getStatefulSetRevisions``; ``truncate_history``: ``cleanupHistory``/
``truncateHistory``). It does not own when a revision becomes current (the controllers).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from typing import Any, Final

import msgspec
from msgspec.structs import replace

from emulator.base.api.apps import ControllerRevision
from emulator.base.api.codec import dec_hook, enc_hook, to_builtins
from emulator.base.api.errors import AlreadyExists, NotFound
from emulator.base.api.meta import ObjectMeta, OwnerReference
from emulator.base.api.podtemplate import PodTemplateSpec
from emulator.base.api.unmodelled import capture_spec, lift_spec
from emulator.base.client.client import Client

__all__ = [
    "CONTROLLER_REVISION_HASH",
    "revision_data",
    "revision_name",
    "revision_template",
    "sync_history",
    "template_hash",
    "truncate_history",
]

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


# --- ControllerRevision objects ----------------------------------------------------------


def revision_data(template: PodTemplateSpec) -> dict[str, Any]:
    """Upstream ``getPatch``: the strategic merge patch that restores ``template`` whole."""
    wire: dict[str, Any] = to_builtins(template)
    if isinstance(wire.get("spec"), dict):
        wire["spec"] = lift_spec(wire["spec"])
    return {"spec": {"template": {**wire, "$patch": "replace"}}}


def revision_template(rev: ControllerRevision) -> PodTemplateSpec | None:
    """The template a revision's ``data`` restores (None if it holds none)."""
    spec = (rev.data or {}).get("spec")
    written = spec.get("template") if isinstance(spec, dict) else None
    if not isinstance(written, dict):
        return None
    written = {k: v for k, v in written.items() if k != "$patch"}
    try:
        template = msgspec.convert(written, PodTemplateSpec, dec_hook=dec_hook)
    except msgspec.ValidationError:
        return None
    return replace(template, spec=capture_spec(template.spec, written.get("spec")))


def _by_revision(rev: ControllerRevision) -> tuple[int, str]:
    return (rev.revision, rev.metadata.name)


async def sync_history(
    client: Client,
    owned: Iterable[ControllerRevision],
    owner: Any,
    template: PodTemplateSpec,
    name: str,
    hash_: str,
) -> tuple[ControllerRevision, list[ControllerRevision]]:
    """The revision of ``template`` (created, or renumbered to be the newest), and the others,
    oldest first: upstream DaemonSet ``constructHistory`` and ``snapshot``, which the
    StatefulSet's ``getStatefulSetRevisions`` matches (an equal revision that is not the newest
    gets the next number: how ``rollout undo`` shows up in ``rollout history``)."""
    data = revision_data(template)
    revisions = sorted(owned, key=_by_revision)
    current = [r for r in revisions if r.data == data]
    old = [r for r in revisions if r.data != data]
    following = max((r.revision for r in old), default=0) + 1
    if current:
        cur = current[-1]
        if cur.revision < following:
            cur = await client.update(replace(cur, revision=following))
        return cur, old
    meta = owner.metadata
    ref = OwnerReference(
        api_version=owner.api_version,
        kind=owner.kind,
        name=meta.name,
        uid=meta.uid,
        controller=True,
        block_owner_deletion=True,
    )
    rev = ControllerRevision(
        metadata=ObjectMeta(
            name=name,
            namespace=meta.namespace,
            labels={**template.metadata.labels, CONTROLLER_REVISION_HASH: hash_},
            annotations=dict(meta.annotations),
            owner_references=[ref],
        ),
        data=data,
        revision=following,
    )
    try:
        return await client.create(rev), old
    except AlreadyExists:
        existing: ControllerRevision = await client.get("ControllerRevision", name, meta.namespace)
        if existing.data != data:
            raise
        return existing, old


async def truncate_history(
    client: Client, old: Sequence[ControllerRevision], live: Iterable[str], limit: int | None
) -> None:
    """Delete the oldest revisions no pod runs (``live``: revision hashes or names in use)
    past ``revisionHistoryLimit`` (default 10): upstream DaemonSet ``cleanupHistory``,
    StatefulSet ``truncateHistory``."""
    keep = frozenset(live)
    dead = [
        r
        for r in sorted(old, key=_by_revision)
        if r.metadata.name not in keep and r.metadata.labels.get(CONTROLLER_REVISION_HASH) not in keep
    ]
    for rev in dead[: max(0, len(dead) - (10 if limit is None else max(limit, 0)))]:
        with contextlib.suppress(NotFound):
            await client.delete("ControllerRevision", rev.metadata.name, rev.metadata.namespace)
