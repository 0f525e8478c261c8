"""Karpenter (kubernetes-sigs/karpenter v1.9.1) as an agent.

==================  ==========================================================================
module              owns (upstream source)
==================  ==========================================================================
``provisioner``     the agent: batcher, NodeClaim creation and lifecycle, NodePool status writes
                    (``pkg/controllers/provisioning``, ``pkg/controllers/nodeclaim/lifecycle``)
``scheduling``      the batch's simulation: options per NodePool, bin-packing, limits
                    (``pkg/controllers/provisioning/scheduling``)
``disruption``      Consolidatable and Drifted, expiration, the disruption controller's loop
                    (``nodeclaim/disruption``, ``nodeclaim/expiration``,
                    ``disruption/controller.go``)
``nodepoolhash``    the NodePool hash and its annotations (``nodepool/hash``)
``consolidation``   the methods: emptiness, drift, multi- and single-node consolidation, their
                    validation (``pkg/controllers/disruption``)
``candidates``      candidates, PDB limits (``helpers.go`` ``GetCandidates``)
``budgetmapping``   the budget mapping per NodePool (``helpers.go`` ``BuildDisruptionBudgetMapping``)
``passindex``       what the disruption pass keeps from the informers' handlers (this project's:
                    the pass costs what changed, issue 28's speed)
``termination``     a deleted NodeClaim's drain (``terminationGracePeriod``), the wait for its
                    VolumeAttachments, instance deletion, the Drained, VolumesDetached and
                    InstanceTerminating conditions (``nodeclaim/lifecycle``, ``node/termination``)
``conditions``      operatorpkg's condition rules (``status/condition_set.go``)
``nodepoolstatus``  NodePool conditions and counters, which NodePools provision
                    (``nodepool/{validation,readiness,registrationhealth,counter}``)
``budgets``         a NodePool's allowed disruptions per reason, cron schedules on the clock
                    (``pkg/apis/v1/nodepool.go``)
``queue``           the orchestration queue (``disruption/queue.go``)
``fits``            the simulations' searches answered from each pod shape's fitting nodes
                    (this project's: the same answers as searching, issue 28's speed)
``events``          Karpenter's Events and their dedupe (``pkg/events``, ``disruption/events``)
==================  ==========================================================================
"""

from __future__ import annotations

from agents.autoscaler.karpenter.provisioner import BATCH_IDLE, BATCH_MAX, PRICE_LABEL, Karpenter, KarpenterCloud

__all__ = ["BATCH_IDLE", "BATCH_MAX", "PRICE_LABEL", "Karpenter", "KarpenterCloud"]
