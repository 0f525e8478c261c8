"""``HorizontalController``: upstream's ``pkg/controller/podautoscaler/horizontal.go`` (v1.34),
client ``controller:horizontal-pod-autoscaler``, Events as ``horizontal-pod-autoscaler``.

Every HPA is reconciled 15 s after it is seen and every 15 s after each reconcile
(``--horizontal-pod-autoscaler-sync-period``; upstream's fixed-interval rate limiter: a
newer add does not pull an HPA forward). A reconcile reads the target's scale (a Deployment,
ReplicaSet or StatefulSet: ``spec.replicas``, ``status.replicas``, the selector), computes
each metric's proposal (``metrics``) from the selector's pods (the shared pod informer) and
the resource metrics API (``Client.pod_metrics``), takes the largest, normalises it
(``behavior``), writes the new ``spec.replicas`` (the scale subresource's write) with the
Event ``SuccessfulRescale`` "New size: N; reason: ...", and writes the status when it changed
(``AbleToScale``, ``ScalingActive``, ``ScalingLimited`` with upstream's reasons).

What it watches, for cost: until the first HPA, only HPAs through its own client (a run
without HPAs reads and writes nothing more: the trace hashes of the scenarios before it did
not move); from then on the shared informers of HPAs and pods.
"""

from __future__ import annotations

import asyncio
from itertools import compress
from operator import attrgetter
from typing import Any, Final

from msgspec.structs import replace

from agents.controllers.context import ControllerContext
from agents.controllers.podautoscaler.behavior import (
    ScalingState,
    normalize,
    record_initial_recommendation,
    store_scale_event,
)
from agents.controllers.podautoscaler.conditions import set_condition
from agents.controllers.podautoscaler.metrics import MetricsComputer, MetricsError
from agents.controllers.podautoscaler.replica_calculator import PodMemo
from agents.controllers.workqueue import WorkQueue
from emulator.base.api.autoscaling import HorizontalPodAutoscaler, HorizontalPodAutoscalerStatus
from emulator.base.api.errors import ApiError, NotFound
from emulator.base.api.labelparse import format_label_selector
from emulator.base.api.labelselector import SelectorError, compile_selector
from emulator.base.api.meta import ObjectReference
from emulator.base.client.events import EventRecorder
from emulator.base.client.informer import Informer

__all__ = ["COMPONENT", "NAME", "SYNC_PERIOD", "HorizontalController"]

NAME: Final = "horizontal-pod-autoscaler"
COMPONENT: Final = "horizontal-pod-autoscaler"
SYNC_PERIOD: Final = 15.0
HPA: Final = "HorizontalPodAutoscaler"
SCALABLE: Final = {("apps", "Deployment"), ("apps", "ReplicaSet"), ("apps", "StatefulSet")}
"""The kinds with a ``scale`` subresource that the emulator serves."""
_NAMESPACE_INDEX: Final = "namespace"
_LABELS: Final = attrgetter("metadata.labels")

Key = tuple[str, str]


def _ref(hpa: HorizontalPodAutoscaler) -> ObjectReference:
    m = hpa.metadata
    return ObjectReference(api_version="autoscaling/v2", kind=HPA, namespace=m.namespace, name=m.name, uid=m.uid)


class HorizontalController:
    """The HPA controller; ``run()`` until cancelled."""

    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        self.client = ctx.client(NAME)
        self.clock = ctx.clock
        self.recorder = EventRecorder(self.client, ctx.clock, COMPONENT, aggregate=True)
        self.queue: WorkQueue[Key] = WorkQueue(ctx.clock, self.client.name)
        self.hpas: Informer | None = None
        self.pods: Informer | None = None
        self._trigger: asyncio.Task[None] | None = None
        self.states: dict[Key, ScalingState] = {}
        self.memos: dict[Key, PodMemo] = {}
        """Per HPA, what its syncs read of each pod object (``replica_calculator.PodMemo``)."""
        self.counts = dict.fromkeys(("syncs", "rescales", "statusWrites", "errors"), 0)

    def __repr__(self) -> str:
        return f"<HorizontalController {self.counts} {self.queue!r}>"

    def statistics(self) -> dict[str, Any]:
        return {**self.counts, "queue": len(self.queue)} if self.counts["syncs"] else {}

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            trigger = Informer(self.client, HPA)
            trigger.add_handlers(lambda _obj: self._activate(), None, None)
            self._trigger = tg.create_task(trigger.run(), name=f"{self.client.name}:{HPA}")
            self.queue.run_workers(tg, 1, self._process)

    def _activate(self) -> None:
        if self.hpas is not None:
            return
        if self._trigger is not None:
            self._trigger.cancel()
        informers = self.ctx.informers
        self.pods = informers.handlers("Pod", indexers={_NAMESPACE_INDEX: lambda p: [p.metadata.namespace]})
        self.hpas = informers.handlers(HPA, self._enqueue, lambda _o, h: self._enqueue(h), self._deleted)

    def _enqueue(self, hpa: HorizontalPodAutoscaler) -> None:
        self.queue.add_after((hpa.metadata.namespace, hpa.metadata.name), SYNC_PERIOD)

    def _deleted(self, hpa: HorizontalPodAutoscaler) -> None:
        self.queue.forget((hpa.metadata.namespace, hpa.metadata.name))

    async def _process(self, key: Key) -> None:
        assert self.hpas is not None
        assert self.pods is not None
        await self.hpas.synced.wait()
        await self.pods.synced.wait()
        self.counts["syncs"] += 1
        hpa = self.hpas.get(key[1], key[0])
        if hpa is None:
            self.states.pop(key, None)
            self.memos.pop(key, None)
            return
        try:
            await self.reconcile(hpa, key)
        except ApiError:
            self.counts["errors"] += 1
        self.queue.add_after(key, SYNC_PERIOD)

    # --- reconcileAutoscaler ----------------------------------------------------------------

    async def _failed_get_scale(self, hpa: HorizontalPodAutoscaler, message: str) -> None:
        await self.recorder.event(_ref(hpa), "Warning", "FailedGetScale", message)
        conditions = set_condition(
            hpa.status.conditions,
            "AbleToScale",
            "False",
            "FailedGetScale",
            f"the HPA controller was unable to get the target's current scale: {message}",
            self.clock.timestamp(),
        )
        await self._write_status(hpa, replace(hpa.status, conditions=conditions))

    async def reconcile(self, hpa: HorizontalPodAutoscaler, key: Key) -> None:
        ref = hpa.spec.scale_target_ref
        ns = hpa.metadata.namespace
        group = ref.api_version.rpartition("/")[0] if "/" in ref.api_version else ""
        if (group, ref.kind) not in SCALABLE:
            await self._failed_get_scale(hpa, f'no matches for kind "{ref.kind}" in group "{group}"')
            return
        try:
            target = await self.client.get(ref.kind, ref.name, ns)
        except NotFound as err:
            await self._failed_get_scale(hpa, err.message)
            return
        now_ts = self.clock.timestamp()
        conditions = set_condition(
            hpa.status.conditions,
            "AbleToScale",
            "True",
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale",
            now_ts,
        )
        current = target.spec.replicas if target.spec.replicas is not None else 1
        state = self.states.setdefault(key, ScalingState())
        now = self.clock.now()
        record_initial_recommendation(state, current, now)
        low = hpa.spec.min_replicas if hpa.spec.min_replicas is not None else 1
        high = hpa.spec.max_replicas
        statuses = list(hpa.status.current_metrics)
        rescale_reason = ""
        rescale = True
        desired = 0
        if current == 0 and low != 0:
            rescale = False
            conditions = set_condition(
                conditions,
                "ScalingActive",
                "False",
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero",
                now_ts,
            )
        elif current > high:
            rescale_reason, desired = "Current number of replicas above Spec.MaxReplicas", high
        elif current < low:
            rescale_reason, desired = "Current number of replicas below Spec.MinReplicas", low
        else:
            selector_text = format_label_selector(target.spec.selector) if target.spec.selector is not None else ""
            memo = self.memos.setdefault(key, PodMemo())
            memo.next_sync()
            computer = MetricsComputer(self.client, self.recorder, self.clock, _ref(hpa), memo)
            try:
                if not selector_text:
                    await self.recorder.event(_ref(hpa), "Warning", "SelectorRequired", "selector is required")
                    raise MetricsError(
                        "selector is required", "InvalidSelector", "the HPA target's scale is missing a selector"
                    )
                try:
                    selector = compile_selector(target.spec.selector)
                except SelectorError as err:
                    msg = f"couldn't convert selector into a corresponding internal selector object: {err}"
                    await self.recorder.event(_ref(hpa), "Warning", "InvalidSelector", msg)
                    raise MetricsError(msg, "InvalidSelector", msg) from None
                assert self.pods is not None
                # by name: the index lists them by (namespace, name), all of namespace ns
                listed = self.pods.by_index(_NAMESPACE_INDEX, ns)
                pods = list(compress(listed, map(selector.matches, map(_LABELS, listed))))
                result = await computer.compute(hpa, current, target.status.replicas, selector, pods)
            except MetricsError as err:
                conditions = set_condition(conditions, "ScalingActive", "False", err.reason, err.message, now_ts)
                metrics = err.statuses or statuses
                status = replace(hpa.status, current_replicas=current, current_metrics=metrics, conditions=conditions)
                await self._write_status(hpa, status)
                await self.recorder.event(_ref(hpa), "Warning", "FailedComputeMetricsReplicas", err.text)
                return
            conditions = set_condition(
                conditions,
                "ScalingActive",
                "True",
                "ValidMetricFound",
                f"the HPA was able to successfully calculate a replica count from {result.metric}",
                now_ts,
            )
            statuses = result.statuses
            if result.replicas > desired:
                desired = result.replicas
            if desired > current:
                rescale_reason = f"{result.metric} above target"
            if desired < current:
                rescale_reason = "All metrics below target"
            n = normalize(state, hpa.spec.behavior, current, desired, low, high, now)
            conditions = set_condition(conditions, "AbleToScale", "True", n.able_reason, n.able_message, now_ts)
            limited = "True" if n.limited else "False"
            conditions = set_condition(
                conditions, "ScalingLimited", limited, n.limited_reason, n.limited_message, now_ts
            )
            desired = n.replicas
            rescale = desired != current
        last_scale = hpa.status.last_scale_time
        if rescale:
            try:
                await self.client.update(replace(target, spec=replace(target.spec, replicas=desired)))
            except ApiError as err:
                msg = f"New size: {desired}; reason: {rescale_reason}; error: {err.message}"
                await self.recorder.event(_ref(hpa), "Warning", "FailedRescale", msg)
                conditions = set_condition(
                    conditions,
                    "AbleToScale",
                    "False",
                    "FailedUpdateScale",
                    f"the HPA controller was unable to update the target scale: {err.message}",
                    now_ts,
                )
                await self._write_status(hpa, replace(hpa.status, current_replicas=current, conditions=conditions))
                raise
            conditions = set_condition(
                conditions,
                "AbleToScale",
                "True",
                "SucceededRescale",
                f"the HPA controller was able to update the target scale to {desired}",
                now_ts,
            )
            await self.recorder.event(
                _ref(hpa), "Normal", "SuccessfulRescale", f"New size: {desired}; reason: {rescale_reason}"
            )
            store_scale_event(state, hpa.spec.behavior, current, desired, now)
            self.counts["rescales"] += 1
            last_scale = now_ts
        else:
            desired = current
        status = HorizontalPodAutoscalerStatus(
            current_replicas=current,
            desired_replicas=desired,
            last_scale_time=last_scale,
            current_metrics=statuses,
            conditions=conditions,
        )
        await self._write_status(hpa, status)

    async def _write_status(self, hpa: HorizontalPodAutoscaler, status: HorizontalPodAutoscalerStatus) -> None:
        """``updateStatusIfNeeded``."""
        if status == hpa.status:
            return
        self.counts["statusWrites"] += 1
        try:
            await self.client.update_status(replace(hpa, status=status))
        except ApiError as err:
            await self.recorder.event(_ref(hpa), "Warning", "FailedUpdateStatus", err.message)
            raise
