"""The NodePool hash (kubernetes-sigs/karpenter v1.9.1 ``pkg/controllers/nodepool/hash``).

Every NodePool carries the hash of its template (requirements aside: ``hash:"ignore"``;
``template_hash``) in ``karpenter.sh/nodepool-hash`` and ``NODEPOOL_HASH_VERSION`` (v3) in
``karpenter.sh/nodepool-hash-version``; a NodeClaim gets both at creation (the provisioner's).
When a NodePool's hash version changes, its NodeClaims get the new version, and the new hash
unless they are already ``Drifted`` (upstream's ``updateNodeClaimHash``). Upstream's number is
``hashstructure``'s; ours is a SHA-256 of the same fields, so the two agree on equality, not
on digits.

This module owns the hash, its annotations and their writes (``NodePoolHash.reconcile``, run
first at every tick of the disruption side); it does not decide drift (``disruption.py``'s
``Drifted`` condition compares the hashes written here)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, Final

from msgspec.structs import replace

from emulator.base.api.codec import to_builtins
from emulator.base.api.errors import ApiError
from emulator.base.api.karpenter import NODEPOOL_LABEL, NodeClaim, NodePool

__all__ = ["NODEPOOL_HASH", "NODEPOOL_HASH_VERSION", "NODEPOOL_HASH_VERSION_KEY", "NodePoolHash", "template_hash"]

NODEPOOL_HASH: Final = "karpenter.sh/nodepool-hash"
NODEPOOL_HASH_VERSION_KEY: Final = "karpenter.sh/nodepool-hash-version"
NODEPOOL_HASH_VERSION: Final = "v3"


def _prune(value: Any) -> Any:
    """``IgnoreZeroValue``/``ZeroNil``/``SlicesAsSets``: zero values dropped, lists sorted."""
    if isinstance(value, dict):
        out = {k: _prune(v) for k, v in sorted(value.items())}
        return {k: v for k, v in out.items() if v not in (None, "", 0, False, [], {})}
    if isinstance(value, list):
        return sorted((_prune(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    return value


def template_hash(pool: NodePool) -> str:
    """``NodePool.Hash``: the template, its requirements aside (``hash:"ignore"``)."""
    doc = to_builtins(pool.spec.template) if pool.spec is not None and pool.spec.template is not None else {}
    (doc.get("spec") or {}).pop("requirements", None)
    digest = hashlib.sha256(json.dumps(_prune(doc), sort_keys=True).encode()).digest()
    return str(int.from_bytes(digest[:8], "big"))


class NodePoolHash:
    """The NodePool hash controller of one agent (``agent.client`` writes)."""

    def __init__(self, agent: Any) -> None:
        self._agent = agent
        self._digests: dict[str, tuple[NodePool, str]] = {}
        """NodePool -> (the object, its ``template_hash``)."""

    def __repr__(self) -> str:
        return f"<NodePoolHash pools={len(self._digests)}>"

    async def reconcile(self, pools: dict[str, NodePool], claims: Sequence[NodeClaim]) -> None:
        """Every NodePool's hash and version annotations up to date; a NodeClaim of a NodePool
        whose hash version changes gets the new version (and, not drifted, the new hash)."""
        for name in sorted(pools):
            pool = pools[name]
            if pool.metadata.deletion_timestamp is not None or pool.spec is None:
                continue
            kept = self._digests.get(name)
            if kept is None or kept[0] is not pool:
                kept = self._digests[name] = (pool, template_hash(pool))
            digest = kept[1]
            ann = pool.metadata.annotations
            if ann.get(NODEPOOL_HASH_VERSION_KEY) != NODEPOOL_HASH_VERSION:
                for c in claims:
                    if c.metadata.labels.get(NODEPOOL_LABEL) != name:
                        continue
                    if c.metadata.annotations.get(NODEPOOL_HASH_VERSION_KEY) == NODEPOOL_HASH_VERSION:
                        continue
                    new = {**c.metadata.annotations, NODEPOOL_HASH_VERSION_KEY: NODEPOOL_HASH_VERSION}
                    if not any(cond.type == "Drifted" for cond in c.status.conditions):
                        new[NODEPOOL_HASH] = digest
                    await self._update_meta(c, new)
            if ann.get(NODEPOOL_HASH) != digest or ann.get(NODEPOOL_HASH_VERSION_KEY) != NODEPOOL_HASH_VERSION:
                await self._update_meta(
                    pool, {**ann, NODEPOOL_HASH: digest, NODEPOOL_HASH_VERSION_KEY: NODEPOOL_HASH_VERSION}
                )

    async def _update_meta(self, obj: Any, annotations: dict[str, str]) -> None:
        try:
            await self._agent.client.update(replace(obj, metadata=replace(obj.metadata, annotations=annotations)))
        except ApiError:
            return
