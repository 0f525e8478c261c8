"""Upstream's printers for the served kinds: the cells of one object's Table row.

Owns each kind's row (``pkg/printers/internalversion/printers.go`` in kubernetes/kubernetes,
v1.32: printPod's STATUS and RESTARTS logic, printNode's STATUS and ROLES, the workloads'
READY/UP-TO-DATE/CONTAINERS/IMAGES/SELECTOR, ...) and every column's cell including the
``-o wide`` ones (the apiserver always prints wide; kubectl hides priority-1 columns). The
formatting helpers every row shares (ages, labels, selectors) are ``emulator.base.http.cells``';
the column definitions and the Table envelope ``emulator.base.http.tables``'.

Cells are strings, except where upstream prints an int64 or a bool (DaemonSet/ReplicaSet
counts, Deployment UP-TO-DATE/AVAILABLE, PDB allowed disruptions, PriorityClass value and
global default, Event count, CronJob active). Where upstream reads a field the emulator does
not model, the cell is what upstream prints for the field's zero value: pods have no
``readinessGates`` (``<none>``) and a terminated state has no ``signal`` (``ExitCode:N``);
``status.podIPs[0]`` is ``status.podIP``; services have no ``externalIPs`` nor load-balancer
status (``<none>``; ``<pending>`` for LoadBalancer) and ``clusterIPs[0]`` is
``spec.clusterIP``; a Service without ``spec.type`` prints as the apiserver defaults it
(``ClusterIP``).

Pure: ``now`` is given, no clock reads, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

from emulator.base.api.apps import ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet
from emulator.base.api.batch import CronJob, Job
from emulator.base.api.config import ConfigMap, Secret
from emulator.base.api.core import ContainerStateTerminated, Event, Namespace, Node, Pod
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.policy import PodDisruptionBudget
from emulator.base.api.scheduling import Lease, PriorityClass
from emulator.base.api.services import Service
from emulator.base.http.autoscalingprinters import AUTOSCALING_ROWS
from emulator.base.http.cells import (
    NONE,
    Since,
    bool_ptr,
    containers,
    format_labels,
    format_selector,
    human_duration,
    intstr,
    selector_string,
)
from emulator.base.http.karpenterprinters import KARPENTER_ROWS
from emulator.base.http.resourceprinters import RESOURCE_ROWS
from emulator.base.http.storageprinters import STORAGE_ROWS
from emulator.base.runtime.clock import parse_timestamp

__all__ = ["cells_of"]

_NEVER: Final = -math.inf  # Go's zero time.Time: before every timestamp

# --- rows per kind -----------------------------------------------------------------------


def _pod_cells(pod: Pod, since: Since) -> list[Any]:
    spec, status = pod.spec, pod.status
    restarts = 0
    sidecar_restarts = 0
    ready = 0
    total = len(spec.containers)
    last_restart = _NEVER  # the latest lastState.terminated.finishedAt, in clock seconds
    last_sidecar_restart = _NEVER
    phase = status.phase
    reason = status.reason or phase
    for cond in status.conditions:
        if cond.reason == "SchedulingGated" and cond.type == "PodScheduled":
            reason = "SchedulingGated"

    sidecars = {c.name for c in spec.init_containers if c.restart_policy == "Always"} if spec.init_containers else ()
    total += len(sidecars)

    initializing = False
    for i, cs in enumerate(status.init_container_statuses):
        restarts += cs.restart_count
        finished = _finished_at(cs.last_state.terminated)
        last_restart = max(last_restart, finished)
        sidecar = cs.name in sidecars
        if sidecar:
            sidecar_restarts += cs.restart_count
            last_sidecar_restart = max(last_sidecar_restart, finished)
        state = cs.state
        if state.terminated is not None and state.terminated.exit_code == 0:
            continue
        if sidecar and cs.started:
            if cs.ready:
                ready += 1
            continue
        if state.terminated is not None:
            t = state.terminated
            reason = f"Init:{t.reason}" if t.reason else f"Init:ExitCode:{t.exit_code}"
        elif state.waiting is not None and state.waiting.reason and state.waiting.reason != "PodInitializing":
            reason = f"Init:{state.waiting.reason}"
        else:
            reason = f"Init:{i}/{len(spec.init_containers)}"
        initializing = True
        break

    if not initializing or _condition_true(pod, "Initialized"):
        restarts = sidecar_restarts
        last_restart = last_sidecar_restart
        has_running = False
        for cs in reversed(status.container_statuses):
            restarts += cs.restart_count
            if cs.last_state.terminated is not None:
                last_restart = max(last_restart, _finished_at(cs.last_state.terminated))
            state = cs.state
            if state.waiting is not None and state.waiting.reason:
                reason = state.waiting.reason
            elif state.terminated is not None:
                t = state.terminated
                reason = t.reason or f"ExitCode:{t.exit_code}"
            elif cs.ready and state.running is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _condition_true(pod, "Ready") else "NotReady"

    if pod.metadata.deletion_timestamp is not None:
        if status.reason == "NodeLost":
            reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            reason = "Terminating"

    restarts_text = str(restarts)
    if restarts and last_restart != _NEVER:
        restarts_text = f"{restarts} ({human_duration(since.now - last_restart)} ago)"
    return [
        pod.metadata.name,
        f"{ready}/{total}",
        reason,
        restarts_text,
        since(pod.metadata.creation_timestamp),
        status.pod_ip or NONE,
        spec.node_name or NONE,
        status.nominated_node_name or NONE,
        NONE,
    ]


def _finished_at(terminated: ContainerStateTerminated | None) -> float:
    if terminated is None or not terminated.finished_at:
        return _NEVER
    return parse_timestamp(terminated.finished_at)


def _condition_true(pod: Pod, type_: str) -> bool:
    for cond in pod.status.conditions:
        if cond.type == type_:
            return cond.status == "True"
    return False


def _node_cells(node: Node, since: Since) -> list[Any]:
    status: list[str] = []
    for cond in node.status.conditions:
        if cond.type == "Ready":
            status = ["Ready" if cond.status == "True" else "NotReady"]
    if not status:
        status = ["Unknown"]
    if node.spec.unschedulable:
        status.append("SchedulingDisabled")
    roles: set[str] = set()
    for key, value in node.metadata.labels.items():
        if key.startswith("node-role.kubernetes.io/"):
            role = key[len("node-role.kubernetes.io/") :]
            if role:
                roles.add(role)
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    info = node.status.node_info
    internal = external = NONE
    for address in node.status.addresses:
        if address.type == "InternalIP" and internal == NONE:
            internal = address.address
        elif address.type == "ExternalIP" and external == NONE:
            external = address.address
    return [
        node.metadata.name,
        ",".join(status),
        ",".join(sorted(roles)) or NONE,
        since(node.metadata.creation_timestamp),
        info.kubelet_version if info else "",
        internal,
        external,
        (info.os_image if info else "") or "<unknown>",
        (info.kernel_version if info else "") or "<unknown>",
        (info.container_runtime_version if info else "") or "<unknown>",
    ]


def _namespace_cells(ns: Namespace, since: Since) -> list[Any]:
    return [ns.metadata.name, ns.status.phase, since(ns.metadata.creation_timestamp)]


def _configmap_cells(cm: ConfigMap, since: Since) -> list[Any]:
    return [cm.metadata.name, len(cm.data) + len(cm.binary_data), since(cm.metadata.creation_timestamp)]


def _secret_cells(secret: Secret, since: Since) -> list[Any]:
    return [secret.metadata.name, secret.type, len(secret.data), since(secret.metadata.creation_timestamp)]


def _event_cells(ev: Event, since: Since) -> list[Any]:
    first = since(ev.first_timestamp) if ev.first_timestamp else since(ev.event_time)
    last = since(ev.last_timestamp) if ev.last_timestamp else first
    count = ev.count
    if ev.series is not None:
        last = since(ev.series.last_observed_time)
        count = ev.series.count
    elif count == 0:
        count = 1
    obj = ev.involved_object
    target = f"{obj.kind.lower()}/{obj.name}" if obj.name else obj.kind.lower()
    component = ev.source.component or ev.reporting_component
    instance = ev.source.host or ev.reporting_instance
    source = f"{component}, {instance}" if instance else component
    return [
        last,
        ev.type,
        ev.reason,
        target,
        obj.field_path,
        source,
        ev.message.strip(),
        first,
        count,
        ev.metadata.name,
    ]


def _service_cells(svc: Service, since: Since) -> list[Any]:
    spec = svc.spec
    type_ = spec.type or "ClusterIP"  # the apiserver defaults it
    match type_:
        case "ClusterIP" | "NodePort":
            external = NONE
        case "LoadBalancer":
            external = "<pending>"
        case "ExternalName":
            external = spec.external_name
        case _:
            external = "<unknown>"
    ports = ",".join(
        f"{p.port}:{p.node_port}/{p.protocol or 'TCP'}" if p.node_port > 0 else f"{p.port}/{p.protocol or 'TCP'}"
        for p in spec.ports
    )
    return [
        svc.metadata.name,
        type_,
        spec.cluster_ip or NONE,
        external,
        ports or NONE,
        since(svc.metadata.creation_timestamp),
        format_labels(spec.selector),
    ]


def _deployment_cells(d: Deployment, since: Since) -> list[Any]:
    names, images = containers(d.spec.template.spec.containers)
    desired = d.spec.replicas if d.spec.replicas is not None else 1
    return [
        d.metadata.name,
        f"{d.status.ready_replicas}/{desired}",
        d.status.updated_replicas,
        d.status.available_replicas,
        since(d.metadata.creation_timestamp),
        names,
        images,
        selector_string(d.spec.selector),
    ]


def _replicaset_cells(rs: ReplicaSet, since: Since) -> list[Any]:
    names, images = containers(rs.spec.template.spec.containers)
    return [
        rs.metadata.name,
        rs.spec.replicas if rs.spec.replicas is not None else 1,
        rs.status.replicas,
        rs.status.ready_replicas,
        since(rs.metadata.creation_timestamp),
        names,
        images,
        format_selector(rs.spec.selector),
    ]


def _statefulset_cells(ss: StatefulSet, since: Since) -> list[Any]:
    names, images = containers(ss.spec.template.spec.containers)
    desired = ss.spec.replicas if ss.spec.replicas is not None else 1
    return [
        ss.metadata.name,
        f"{ss.status.ready_replicas}/{desired}",
        since(ss.metadata.creation_timestamp),
        names,
        images,
    ]


def _daemonset_cells(ds: DaemonSet, since: Since) -> list[Any]:
    names, images = containers(ds.spec.template.spec.containers)
    st = ds.status
    return [
        ds.metadata.name,
        st.desired_number_scheduled,
        st.current_number_scheduled,
        st.number_ready,
        st.updated_number_scheduled,
        st.number_available,
        format_labels(ds.spec.template.spec.node_selector),
        since(ds.metadata.creation_timestamp),
        names,
        images,
        format_selector(ds.spec.selector),
    ]


def _job_condition(job: Job, type_: str) -> bool:
    for cond in job.status.conditions:
        if cond.type == type_:
            return cond.status == "True"
    return False


def _job_cells(job: Job, since: Since) -> list[Any]:
    spec, st = job.spec, job.status
    if spec.completions is not None:
        completions = f"{st.succeeded}/{spec.completions}"
    elif (spec.parallelism or 0) > 1:
        completions = f"{st.succeeded}/1 of {spec.parallelism}"
    else:
        completions = f"{st.succeeded}/1"
    if st.start_time is None:
        duration = ""
    elif st.completion_time is None:
        duration = since(st.start_time)
    else:
        duration = human_duration(parse_timestamp(st.completion_time) - parse_timestamp(st.start_time))
    if _job_condition(job, "Complete"):
        status = "Complete"
    elif _job_condition(job, "Failed"):
        status = "Failed"
    elif job.metadata.deletion_timestamp is not None:
        status = "Terminating"
    elif _job_condition(job, "Suspended"):
        status = "Suspended"
    elif _job_condition(job, "FailureTarget"):
        status = "FailureTarget"
    else:
        status = "Running"
    names, images = containers(spec.template.spec.containers)
    return [
        job.metadata.name,
        status,
        completions,
        duration,
        since(job.metadata.creation_timestamp),
        names,
        images,
        format_selector(spec.selector),
    ]


def _cronjob_cells(cj: CronJob, since: Since) -> list[Any]:
    spec = cj.spec
    last = since(cj.status.last_schedule_time) if cj.status.last_schedule_time else NONE
    job_spec = spec.job_template.spec
    names, images = containers(job_spec.template.spec.containers)
    return [
        cj.metadata.name,
        spec.schedule,
        spec.time_zone if spec.time_zone is not None else NONE,
        bool_ptr(spec.suspend),
        len(cj.status.active),
        last,
        since(cj.metadata.creation_timestamp),
        names,
        images,
        format_selector(job_spec.selector),
    ]


def _pdb_cells(pdb: PodDisruptionBudget, since: Since) -> list[Any]:
    return [
        pdb.metadata.name,
        intstr(pdb.spec.min_available),
        intstr(pdb.spec.max_unavailable),
        pdb.status.disruptions_allowed,
        since(pdb.metadata.creation_timestamp),
    ]


def _priorityclass_cells(pc: PriorityClass, since: Since) -> list[Any]:
    return [
        pc.metadata.name,
        pc.value,
        pc.global_default,
        since(pc.metadata.creation_timestamp),
        pc.preemption_policy or "",
    ]


def _lease_cells(lease: Lease, since: Since) -> list[Any]:
    return [lease.metadata.name, lease.spec.holder_identity or "", since(lease.metadata.creation_timestamp)]


def _controllerrevision_cells(rev: ControllerRevision, since: Since) -> list[Any]:
    """Upstream ``printControllerRevision``: the controller as ``<kind>.<group>/<name>``
    (``formatResourceName``), ``<none>`` without one."""
    ref = next((r for r in rev.metadata.owner_references if r.controller), None)
    controller = "<none>"
    if ref is not None:
        group = ref.api_version.rpartition("/")[0]
        controller = f"{ref.kind.lower()}{'.' + group if group else ''}/{ref.name}"
    return [rev.metadata.name, controller, rev.revision, since(rev.metadata.creation_timestamp)]


def _default_cells(obj: Any, since: Since) -> list[Any]:
    meta: ObjectMeta = obj.metadata
    return [meta.name, meta.creation_timestamp]


_ROWS: Final[dict[str, Callable[[Any, Since], list[Any]]]] = {
    "Pod": _pod_cells,
    "Node": _node_cells,
    "Namespace": _namespace_cells,
    "ConfigMap": _configmap_cells,
    "Secret": _secret_cells,
    "Event": _event_cells,
    "Service": _service_cells,
    "Deployment": _deployment_cells,
    "ReplicaSet": _replicaset_cells,
    "StatefulSet": _statefulset_cells,
    "DaemonSet": _daemonset_cells,
    "Job": _job_cells,
    "CronJob": _cronjob_cells,
    "PodDisruptionBudget": _pdb_cells,
    "PriorityClass": _priorityclass_cells,
    "Lease": _lease_cells,
    "ControllerRevision": _controllerrevision_cells,
    **STORAGE_ROWS,
    **RESOURCE_ROWS,
    **AUTOSCALING_ROWS,
    **KARPENTER_ROWS,
}


def cells_of(kind: str) -> Callable[[Any, Since], list[Any]]:
    """The row printer of ``kind`` (upstream's default printer, Name and Created At, if none)."""
    return _ROWS.get(kind, _default_cells)
