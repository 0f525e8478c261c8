"""``meta.k8s.io/v1`` Tables: what ``kubectl get`` prints, computed on the server as upstream does.

Owns the column definitions and the cells of every served resource, following upstream's
printers (``pkg/printers/internalversion/printers.go``) and ``duration.HumanDuration``, and the
Table envelope: ``metadata`` (resourceVersion, continue), ``columnDefinitions`` (left out of
watch events after the first, ``headers=False``) and each row's ``object`` by ``includeObject``:

===============  ===========================================================================
includeObject    ``rows[].object``
===============  ===========================================================================
``None``         ``null`` (upstream's empty RawExtension)
``Metadata``     ``PartialObjectMetadata`` with the full ObjectMeta (kubectl's ``-A`` NAMESPACE
                 column and ``--show-labels`` read it); the server's default
``Object``       the whole object as wire JSON with apiVersion and kind (``--sort-by``)
===============  ===========================================================================

Like upstream's apiserver, every row carries the ``-o wide`` cells too (priority 1 columns):
kubectl hides them unless asked. Cells are strings, except where upstream prints an int64 or a
bool (DaemonSet/ReplicaSet counts, PDB allowed disruptions, PriorityClass value/global default,
Event count, CronJob active).

Where upstream reads a field the emulator does not model, the cell is what upstream prints for
the field's zero value: pods have no ``readinessGates`` (``<none>``) and no ``signal`` on a
terminated state (``ExitCode:N``); ``status.podIPs[0]`` is ``status.podIP``; services have no
``externalIPs`` nor load-balancer status (``<none>``, ``<pending>`` for LoadBalancer) and
``clusterIPs[0]`` is ``spec.clusterIP``. Column descriptions derived from upstream's OpenAPI
docs are shortened to their first sentence.

Does not own: content negotiation (which request gets a Table), selectors, paging or watch
(``server``/``query``/``watch``); ``metadata.managedFields`` (``patch``; passed in as
``managed_fields``). Pure: no clock reads (``now`` is given), no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import msgspec

from emulator.api.apps import DaemonSet, Deployment, ReplicaSet, StatefulSet
from emulator.api.batch import CronJob, Job
from emulator.api.codec import enc_hook, to_builtins
from emulator.api.core import Container, ContainerStateTerminated, Event, LabelSelector, Namespace, Node, Pod
from emulator.api.errors import BadRequest
from emulator.api.intstr import IntOrString
from emulator.api.meta import ObjectMeta
from emulator.api.policy import PodDisruptionBudget
from emulator.api.scheduling import Lease, PriorityClass
from emulator.api.services import Service
from emulator.http.resources import Resource
from emulator.runtime.clock import parse_timestamp

__all__ = ["INCLUDE_OBJECT", "columns", "human_duration", "row_cells", "table"]

INCLUDE_OBJECT: Final = ("None", "Metadata", "Object")
NONE: Final = "<none>"

# --- column definitions ------------------------------------------------------------------

_NAME_DOC: Final = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name automatically."
)
_AGE_DOC: Final = "CreationTimestamp is a timestamp representing the server time when this object was created."
_CONTAINERS_DOC: Final = "Names of each container in the template."
_IMAGES_DOC: Final = "Images referenced by each container in the template."
_SELECTOR_DOC: Final = "A label query over pods that should match the replica count."


def _col(
    name: str, type_: str = "string", description: str = "", *, fmt: str = "", priority: int = 0
) -> dict[str, Any]:
    return {"name": name, "type": type_, "format": fmt, "description": description, "priority": priority}


_NAME: Final = _col("Name", "string", _NAME_DOC, fmt="name")
_AGE: Final = _col("Age", "string", _AGE_DOC)
_WIDE_CONTAINERS: Final = (
    _col("Containers", "string", _CONTAINERS_DOC, priority=1),
    _col("Images", "string", _IMAGES_DOC, priority=1),
)

_COLUMNS: Final[dict[str, tuple[dict[str, Any], ...]]] = {
    "Pod": (
        _NAME,
        _col("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
        _col("Status", "string", "The aggregate status of the containers in this pod."),
        _col(
            "Restarts",
            "string",
            "The number of times the containers in this pod have been restarted and when the last "
            "container in this pod has restarted.",
        ),
        _AGE,
        _col("IP", "string", "podIP address allocated to the pod.", priority=1),
        _col("Node", "string", "NodeName indicates in which node this pod is scheduled.", priority=1),
        _col(
            "Nominated Node",
            "string",
            "nominatedNodeName is set only when this pod preempts other pods on the node.",
            priority=1,
        ),
        _col(
            "Readiness Gates",
            "string",
            "If specified, all readiness gates will be evaluated for pod readiness.",
            priority=1,
        ),
    ),
    "Node": (
        _NAME,
        _col("Status", "string", "The status of the node"),
        _col("Roles", "string", "The roles of the node"),
        _AGE,
        _col("Version", "string", "Kubelet Version reported by the node."),
        _col("Internal-IP", "string", "List of addresses reachable to the node.", priority=1),
        _col("External-IP", "string", "List of addresses reachable to the node.", priority=1),
        _col("OS-Image", "string", "OS Image reported by the node from /etc/os-release.", priority=1),
        _col("Kernel-Version", "string", "Kernel Version reported by the node from 'uname -r'.", priority=1),
        _col("Container-Runtime", "string", "ContainerRuntime Version reported by the node.", priority=1),
    ),
    "Namespace": (_NAME, _col("Status", "string", "The status of the namespace"), _AGE),
    "Event": (
        _col("Last Seen", "string", "The time at which the most recent occurrence of this event was recorded."),
        _col("Type", "string", "Type of this event (Normal, Warning), new types could be added in the future"),
        _col("Reason", "string", "This should be a short, machine understandable string."),
        _col("Object", "string", "The object that this event is about."),
        _col("Subobject", "string", "If referring to a piece of an object instead of an entire object.", priority=1),
        _col("Source", "string", "The component reporting this event.", priority=1),
        _col("Message", "string", "A human-readable description of the status of this operation."),
        _col(
            "First Seen",
            "string",
            "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
            priority=1,
        ),
        _col("Count", "string", "The number of times this event has occurred.", priority=1),
        _col("Name", "string", _NAME_DOC, fmt="name", priority=1),
    ),
    "Service": (
        _NAME,
        _col("Type", "string", "type determines how the Service is exposed."),
        _col("Cluster-IP", "string", "clusterIP is the IP address of the service."),
        _col(
            "External-IP",
            "string",
            "externalIPs is a list of IP addresses for which nodes in the cluster will also accept "
            "traffic for this service.",
        ),
        _col("Port(s)", "string", "The list of ports that are exposed by this service."),
        _AGE,
        _col(
            "Selector",
            "string",
            "Route service traffic to pods with label keys and values matching this selector.",
            priority=1,
        ),
    ),
    "Deployment": (
        _NAME,
        _col("Ready", "string", "Number of the pod with ready state"),
        _col("Up-to-date", "string", "Total number of non-terminated pods targeted by this deployment."),
        _col("Available", "string", "Total number of available pods targeted by this deployment."),
        _AGE,
        *_WIDE_CONTAINERS,
        _col("Selector", "string", "Label selector for pods.", priority=1),
    ),
    "ReplicaSet": (
        _NAME,
        _col("Desired", "integer", "Replicas is the number of desired replicas."),
        _col("Current", "integer", "Replicas is the most recently observed number of replicas."),
        _col("Ready", "integer", "The number of ready replicas for this replica set."),
        _AGE,
        *_WIDE_CONTAINERS,
        _col("Selector", "string", _SELECTOR_DOC, priority=1),
    ),
    "StatefulSet": (
        _NAME,
        _col("Ready", "string", "Number of the pod with ready state"),
        _AGE,
        *_WIDE_CONTAINERS,
    ),
    "DaemonSet": (
        _NAME,
        _col("Desired", "integer", "The total number of nodes that should be running the daemon pod."),
        _col("Current", "integer", "The number of nodes that are running at least 1 daemon pod."),
        _col("Ready", "integer", "The number of nodes that should be running the daemon pod and have one ready."),
        _col("Up-to-date", "integer", "The total number of nodes that are running updated daemon pod"),
        _col(
            "Available", "integer", "The number of nodes that should be running the daemon pod and have one available."
        ),
        _col("Node Selector", "string", "NodeSelector is a selector which must be true for the pod to fit on a node."),
        _AGE,
        *_WIDE_CONTAINERS,
        _col("Selector", "string", "A label query over pods that are managed by the daemon set.", priority=1),
    ),
    "Job": (
        _NAME,
        _col("Status", "string", "Status of the job."),
        _col("Completions", "string", "The number of pods which reached phase Succeeded."),
        _col("Duration", "string", "Time required to complete the job."),
        _AGE,
        *_WIDE_CONTAINERS,
        _col("Selector", "string", "A label query over pods that should match the pod count.", priority=1),
    ),
    "CronJob": (
        _NAME,
        _col("Schedule", "string", "The schedule in Cron format."),
        _col("Timezone", "string", "The time zone name for the given schedule."),
        _col("Suspend", "boolean", "This flag tells the controller to suspend subsequent executions."),
        _col("Active", "integer", "A list of pointers to currently running jobs."),
        _col("Last Schedule", "string", "Information when was the last time the job was successfully scheduled."),
        _AGE,
        *_WIDE_CONTAINERS,
        _col("Selector", "string", "A label query over pods that should match the pod count.", priority=1),
    ),
    "PodDisruptionBudget": (
        _NAME,
        _col("Min Available", "string", "The minimum number of pods that must be available."),
        _col("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
        _col("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
        _AGE,
    ),
    "PriorityClass": (
        _NAME,
        _col("Value", "integer", "value represents the integer value of this priority class."),
        _col(
            "Global-Default",
            "boolean",
            "globalDefault specifies whether this PriorityClass should be considered as the default priority.",
        ),
        _AGE,
        _col("PreemptionPolicy", "string", "preemptionPolicy is the Policy for preempting pods with lower priority."),
    ),
    "Lease": (
        _NAME,
        _col("Holder", "string", "holderIdentity contains the identity of the holder of a current lease."),
        _AGE,
    ),
}

_DEFAULT_COLUMNS: Final = (
    _NAME,
    _col("Created At", "date", _AGE_DOC),
)


def columns(resource: Resource) -> tuple[dict[str, Any], ...]:
    """The column definitions of ``resource`` (upstream's default Name/Created At if it has no printer)."""
    return _COLUMNS.get(resource.kind, _DEFAULT_COLUMNS)


# --- durations ---------------------------------------------------------------------------


def human_duration(seconds: float) -> str:
    """apimachinery's ``duration.HumanDuration``: ``5s``, ``3m20s``, ``15m``, ``5h3m``, ``2d5h``, ``3y``.

    Two significant units while they matter, one afterwards; up to 1 s in the future is ``0s``,
    further is ``<invalid>``.
    """
    whole = int(seconds)  # Go's int(d.Seconds()): truncated toward zero
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        s = whole % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


class _Since:
    """``translateTimestampSince`` against one ``now``, parsing each distinct timestamp once
    (a list's objects share few creation seconds)."""

    __slots__ = ("_memo", "now")

    def __init__(self, now: float) -> None:
        self.now = now
        self._memo: dict[str, str] = {}

    def __call__(self, stamp: str | None) -> str:
        if not stamp:
            return "<unknown>"
        text = self._memo.get(stamp)
        if text is None:
            text = self._memo[stamp] = human_duration(self.now - parse_timestamp(stamp))
        return text


# --- shared cell helpers -----------------------------------------------------------------


def _containers(containers: Sequence[Container]) -> tuple[str, str]:
    return ",".join(c.name for c in containers), ",".join(c.image for c in containers)


def _labels(labels: dict[str, str]) -> str:
    """``labels.FormatLabels``: sorted ``k=v`` joined by commas, ``<none>`` when empty."""
    if not labels:
        return NONE
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def _selector(selector: LabelSelector | None) -> str:
    """``metav1.FormatLabelSelector``: ``<none>`` for nil or empty, else the selector string with
    matchLabels and expressions sorted by key (``a=b,c in (x,y),!d``)."""
    if selector is None:
        return NONE
    parts: list[tuple[str, str]] = [(k, f"{k}={v}") for k, v in selector.match_labels.items()]
    for req in selector.match_expressions:
        values = ",".join(sorted(req.values))
        match req.operator:
            case "In":
                parts.append((req.key, f"{req.key} in ({values})"))
            case "NotIn":
                parts.append((req.key, f"{req.key} notin ({values})"))
            case "Exists":
                parts.append((req.key, req.key))
            case "DoesNotExist":
                parts.append((req.key, f"!{req.key}"))
            case _:
                return "<error>"
    text = ",".join(p for _, p in sorted(parts, key=lambda kp: kp[0]))
    return text or NONE


def _selector_string(selector: LabelSelector | None) -> str:
    """``LabelSelectorAsSelector(...).String()`` as printDeployment uses it: nil selects nothing
    (``""``), empty selects everything (``""``)."""
    text = _selector(selector)
    return "" if text == NONE else text


def _intstr(value: IntOrString | None) -> str:
    if value is None:
        return "N/A"
    return str(value)


# --- rows per kind -----------------------------------------------------------------------

_POD_DONE: Final = {
    "Succeeded": [
        {"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}
    ],
    "Failed": [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}],
}


def _pod_cells(pod: Pod, since: _Since) -> list[Any]:
    spec, status = pod.spec, pod.status
    restarts = 0
    sidecar_restarts = 0
    ready = 0
    total = len(spec.containers)
    last_restart = 0.0  # clock seconds of the latest lastState.terminated.finishedAt; 0: none
    last_sidecar_restart = 0.0
    phase = status.phase
    reason = status.reason or phase
    for cond in status.conditions:
        if cond.type == "PodScheduled" and cond.reason == "SchedulingGated":
            reason = "SchedulingGated"

    sidecars = {c.name for c in spec.init_containers if c.restart_policy == "Always"}
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
    if restarts and last_restart:
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
        return 0.0
    return parse_timestamp(terminated.finished_at)


def _condition_true(pod: Pod, type_: str) -> bool:
    for cond in pod.status.conditions:
        if cond.type == type_:
            return cond.status == "True"
    return False


def _node_cells(node: Node, since: _Since) -> list[Any]:
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


def _namespace_cells(ns: Namespace, since: _Since) -> list[Any]:
    return [ns.metadata.name, ns.status.phase, since(ns.metadata.creation_timestamp)]


def _event_cells(ev: Event, since: _Since) -> list[Any]:
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


def _service_cells(svc: Service, since: _Since) -> list[Any]:
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
        _labels(spec.selector),
    ]


def _deployment_cells(d: Deployment, since: _Since) -> list[Any]:
    names, images = _containers(d.spec.template.spec.containers)
    desired = d.spec.replicas if d.spec.replicas is not None else 1
    return [
        d.metadata.name,
        f"{d.status.ready_replicas}/{desired}",
        d.status.updated_replicas,
        d.status.available_replicas,
        since(d.metadata.creation_timestamp),
        names,
        images,
        _selector_string(d.spec.selector),
    ]


def _replicaset_cells(rs: ReplicaSet, since: _Since) -> list[Any]:
    names, images = _containers(rs.spec.template.spec.containers)
    return [
        rs.metadata.name,
        rs.spec.replicas if rs.spec.replicas is not None else 1,
        rs.status.replicas,
        rs.status.ready_replicas,
        since(rs.metadata.creation_timestamp),
        names,
        images,
        _selector(rs.spec.selector),
    ]


def _statefulset_cells(ss: StatefulSet, since: _Since) -> list[Any]:
    names, images = _containers(ss.spec.template.spec.containers)
    desired = ss.spec.replicas if ss.spec.replicas is not None else 1
    return [
        ss.metadata.name,
        f"{ss.status.ready_replicas}/{desired}",
        since(ss.metadata.creation_timestamp),
        names,
        images,
    ]


def _daemonset_cells(ds: DaemonSet, since: _Since) -> list[Any]:
    names, images = _containers(ds.spec.template.spec.containers)
    st = ds.status
    return [
        ds.metadata.name,
        st.desired_number_scheduled,
        st.current_number_scheduled,
        st.number_ready,
        st.updated_number_scheduled,
        st.number_available,
        _labels(ds.spec.template.spec.node_selector),
        since(ds.metadata.creation_timestamp),
        names,
        images,
        _selector(ds.spec.selector),
    ]


def _job_condition(job: Job, type_: str) -> bool:
    for cond in job.status.conditions:
        if cond.type == type_:
            return cond.status == "True"
    return False


def _job_cells(job: Job, since: _Since) -> list[Any]:
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
    names, images = _containers(spec.template.spec.containers)
    return [
        job.metadata.name,
        status,
        completions,
        duration,
        since(job.metadata.creation_timestamp),
        names,
        images,
        _selector(spec.selector),
    ]


def _bool_ptr(value: bool | None) -> str:
    if value is None:
        return "<unset>"
    return "True" if value else "False"


def _cronjob_cells(cj: CronJob, since: _Since) -> list[Any]:
    spec = cj.spec
    last = since(cj.status.last_schedule_time) if cj.status.last_schedule_time else NONE
    job_spec = spec.job_template.spec
    names, images = _containers(job_spec.template.spec.containers)
    return [
        cj.metadata.name,
        spec.schedule,
        spec.time_zone if spec.time_zone is not None else NONE,
        _bool_ptr(spec.suspend),
        len(cj.status.active),
        last,
        since(cj.metadata.creation_timestamp),
        names,
        images,
        _selector(job_spec.selector),
    ]


def _pdb_cells(pdb: PodDisruptionBudget, since: _Since) -> list[Any]:
    return [
        pdb.metadata.name,
        _intstr(pdb.spec.min_available),
        _intstr(pdb.spec.max_unavailable),
        pdb.status.disruptions_allowed,
        since(pdb.metadata.creation_timestamp),
    ]


def _priorityclass_cells(pc: PriorityClass, since: _Since) -> list[Any]:
    return [
        pc.metadata.name,
        pc.value,
        pc.global_default,
        since(pc.metadata.creation_timestamp),
        pc.preemption_policy or "",
    ]


def _lease_cells(lease: Lease, since: _Since) -> list[Any]:
    return [lease.metadata.name, lease.spec.holder_identity or "", since(lease.metadata.creation_timestamp)]


def _default_cells(obj: Any, since: _Since) -> list[Any]:
    meta: ObjectMeta = obj.metadata
    return [meta.name, meta.creation_timestamp]


_ROWS: Final[dict[str, Callable[[Any, _Since], list[Any]]]] = {
    "Pod": _pod_cells,
    "Node": _node_cells,
    "Namespace": _namespace_cells,
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
}


def row_cells(resource: Resource, obj: Any, *, now: float) -> list[Any]:
    """One object's cells, every column's (wide ones included), as upstream's printer makes them."""
    return _ROWS.get(resource.kind, _default_cells)(obj, _Since(now))


# --- the Table ---------------------------------------------------------------------------


def _row_object(obj: Any, include_object: str, managed_fields: Callable[[str], list[dict[str, Any]]] | None) -> Any:
    if include_object == "None":
        return None
    if include_object == "Object":
        full: dict[str, Any] = to_builtins(obj)
        if managed_fields is not None:
            _add_managed_fields(full.setdefault("metadata", {}), obj.metadata.uid, managed_fields)
        return full
    meta: dict[str, Any] = msgspec.to_builtins(obj.metadata, enc_hook=enc_hook)
    if managed_fields is not None:
        _add_managed_fields(meta, obj.metadata.uid, managed_fields)
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta}


def _add_managed_fields(meta: dict[str, Any], uid: str, managed_fields: Callable[[str], list[dict[str, Any]]]) -> None:
    entries = managed_fields(uid)
    if entries:
        meta["managedFields"] = entries


def table(
    resource: Resource,
    objects: Sequence[Any],
    *,
    now: float,
    include_object: str = "Metadata",
    resource_version: str = "",
    continue_token: str = "",
    headers: bool = True,
    managed_fields: Callable[[str], list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The ``meta.k8s.io/v1`` Table of ``objects`` (the store's structs of ``resource``'s kind).

    ``now`` is the clock's time for the AGE-like cells; ``include_object`` is the request's
    ``includeObject`` (``None``/``Metadata``/``Object``; ``""`` is ``Metadata``; anything else is
    upstream's 400 ``BadRequest``); ``resource_version`` is the list's, or for one object (a
    ``get`` or a watch event) the object's own, as upstream's TableConvertor sets it;
    ``headers=False`` leaves out
    ``columnDefinitions`` (watch events after the first, upstream's ``NoHeaders``);
    ``managed_fields(uid)``, when given, supplies ``metadata.managedFields`` for row objects.
    """
    if include_object not in INCLUDE_OBJECT:
        if include_object:
            raise BadRequest(
                "Unable to convert to Table as requested: includeObject: Invalid value: "
                f"\"{include_object}\": must be 'Metadata', 'Object', 'None', or empty"
            )
        include_object = "Metadata"
    cells_of = _ROWS.get(resource.kind, _default_cells)
    since = _Since(now)
    rows: list[dict[str, Any]] = []
    for obj in objects:
        row: dict[str, Any] = {
            "cells": cells_of(obj, since),
            "object": _row_object(obj, include_object, managed_fields),
        }
        if resource.kind == "Pod":
            done = _POD_DONE.get(obj.status.phase)
            if done is not None:
                row["conditions"] = done
        rows.append(row)
    metadata: dict[str, str] = {}
    if resource_version:
        metadata["resourceVersion"] = resource_version
    if continue_token:
        metadata["continue"] = continue_token
    out: dict[str, Any] = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata}
    if headers:
        out["columnDefinitions"] = [dict(c) for c in columns(resource)]
    out["rows"] = rows
    return out
