"""Karpenter (kubernetes-sigs/karpenter v1.9.1) as an agent.

=================  ==========================================================================
module             owns (upstream source)
=================  ==========================================================================
``provisioner``    the agent: batcher, NodeClaim creation and lifecycle, NodePool counters
                   (``pkg/controllers/provisioning``, ``pkg/controllers/nodeclaim/lifecycle``)
``scheduling``     the batch's simulation: options per NodePool, bin-packing, limits
                   (``pkg/controllers/provisioning/scheduling``)
``disruption``     Consolidatable, expiration, emptiness within budgets, termination
                   (``pkg/controllers/disruption``, ``nodeclaim/expiration``, ``node/termination``)
=================  ==========================================================================
"""

from __future__ import annotations

from agents.autoscaler.karpenter.provisioner import BATCH_IDLE, BATCH_MAX, PRICE_LABEL, Karpenter, KarpenterCloud

__all__ = ["BATCH_IDLE", "BATCH_MAX", "PRICE_LABEL", "Karpenter", "KarpenterCloud"]
