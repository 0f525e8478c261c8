"""The ``karpenter.sh/v1`` custom resources, NodePool and NodeClaim (kubernetes-sigs/karpenter
v1.9.1 CRDs, served as apiextensions-apiserver serves a CRD with a status subresource).

Both are cluster-scoped and start at generation 1 (a spec change bumps it). Create drops the
client's status (``customResourceStrategy.PrepareForCreate`` with the status subresource on);
the CRD's structural defaults are applied on create and update (``default_karpenter``); the
CRDs' ``oldSelf`` rules are checked on update (``validate_karpenter_update``).
"""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from emulator.base.api.karpenter import NodeClaimStatus, NodePoolStatus, default_karpenter
from emulator.base.api.validation import validate_karpenter_update, validate_update
from emulator.base.apiserver.registry.strategy import Strategy

__all__ = ["NodeClaimStrategy", "NodePoolStrategy"]


class _KarpenterStrategy(Strategy):
    namespaced = False
    generation_on_create = True
    empty_status: Any = None

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        if not restore:
            obj = replace(obj, status=self.empty_status)
        return default_karpenter(obj)

    def prepare_for_update(self, current: Any, candidate: Any) -> Any:
        return default_karpenter(candidate)

    def validate_update(self, current: Any, candidate: Any) -> None:
        validate_update(candidate)
        validate_karpenter_update(current, candidate)


class NodePoolStrategy(_KarpenterStrategy):
    kind = "NodePool"
    empty_status = NodePoolStatus()


class NodeClaimStrategy(_KarpenterStrategy):
    kind = "NodeClaim"
    empty_status = NodeClaimStatus()
