"""The kubelet's status builders' short cuts against the plain builders.

``pending_status`` takes what it reads of the spec (container statuses, the kubelet's
conditions before their transition times) from a memo kept per pair of container lists, and
``succeeded_status`` its conditions from one built once: both must give what the plain
builders give, whatever the pod (init containers and sidecars, several containers, restart
policy, resources, probes, volumes, prior conditions), on a memo hit as on a miss, also for
pods that share their spec's lists, and after the kubelet's resize decoration.
``with_resize_status`` marks the conditions observed in the same copy of the status that
decorates it: the same as decorating, then ``_observed``, for any record and generation, and
its one frame the same as ``with_resize_status_reference`` (its helpers' frames);
``merge_conditions`` the same as ``merge_conditions_reference`` (comprehensions)."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.kubelet import podstatus
from agents.kubelet.lifecycle import lifecycle_of
from agents.kubelet.podrun import PodRun
from agents.kubelet.podstatus import (
    CONTAINERS_READY,
    INITIALIZED,
    READY,
    READY_TO_START,
    merge_conditions,
    merge_conditions_reference,
    pending_status,
    pending_status_reference,
    running_status,
    succeeded_status,
)
from agents.kubelet.prober import prober_for
from agents.kubelet.resize import (
    _RESIZE_CONDITIONS,
    POD_RESIZE_IN_PROGRESS,
    POD_RESIZE_PENDING,
    _decorate,
    _has_resize_condition,
    _observed,
    resizable,
    with_resize_status,
    with_resize_status_reference,
)
from agents.kubelet.runstatus import run_status
from emulator.base.api.core import Container, ContainerResizePolicy, Pod, PodCondition, PodStatus, ResourceRequirements
from emulator.base.api.probe import ExecAction, Probe
from emulator.base.api.volumes import Volume
from tests import builders

T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:05Z", "2026-01-01T00:01:00Z"

NAMES = st.sampled_from(["web", "a-proxy", "z-log", "main", "side", "init-db", "c"])


@st.composite
def containers(draw: st.DrawFn, *, init: bool) -> list[Container]:
    names = draw(st.lists(NAMES, min_size=0 if init else 1, max_size=3, unique=True))
    out = []
    for name in names:
        c = builders.container(
            name,
            image=draw(st.sampled_from(["busybox", "app:1", "registry.k8s.io/pause:3.10.1"])),
            cpu=draw(st.sampled_from([None, "100m", 1])),
            memory=draw(st.sampled_from([None, "64Mi"])),
            restart_policy=draw(st.sampled_from([None, "Always"])) if init else None,
        )
        if draw(st.booleans()):
            probe = Probe(exec=ExecAction(command=["true"]), period_seconds=5)
            c = replace(c, readiness_probe=probe, startup_probe=probe if draw(st.booleans()) else None)
        if draw(st.booleans()):
            policy = ContainerResizePolicy(resource_name="cpu", restart_policy="RestartContainer")
            c = replace(c, resize_policy=[policy])
        out.append(c)
    return out


CONDITIONS_POOL = [
    PodCondition(type="PodScheduled", status="True", last_transition_time=T0),
    PodCondition(type=READY, status="False", last_transition_time=T0),
    PodCondition(type=INITIALIZED, status="True", last_transition_time=T1),
    PodCondition(type=READY_TO_START, status="False", last_transition_time=""),
    PodCondition(type="DisruptionTarget", status="True", reason="x", last_transition_time=T1),
    PodCondition(type=CONTAINERS_READY, status="True", last_transition_time=T0),
    PodCondition(type=READY, status="True", last_transition_time=T1, observed_generation=1),
]
CONDITIONS = st.lists(st.sampled_from(CONDITIONS_POOL[:6]), max_size=4, unique_by=lambda c: c.type)


@st.composite
def pods(draw: st.DrawFn) -> Pod:
    p = builders.pod(
        draw(st.sampled_from(["p", "q"])),
        node="node-1",
        containers=draw(containers(init=False)),
        init_containers=draw(containers(init=True)),
        phase=draw(st.sampled_from(["", "Pending"])),
        conditions=draw(CONDITIONS),
    )
    spec = replace(p.spec, restart_policy=draw(st.sampled_from(["Always", "OnFailure", "Never"])))
    if draw(st.booleans()):
        spec = replace(spec, volumes=[Volume(name="data")])
    return replace(p, spec=spec, status=replace(p.status, qos_class=draw(st.sampled_from(["", "Burstable"]))))


def _facts(draw_ip: bool) -> dict[str, str]:
    return {"host_ip": "172.16.0.2", "pod_ip": "10.0.2.2" if draw_ip else "", "start_time": T1}


@given(pod=pods(), other=pods(), ip=st.booleans(), generation=st.sampled_from([0, 1, 3]))
def test_pending_status_equals_the_plain_builder(pod: Pod, other: Pod, ip: bool, generation: int) -> None:
    podstatus._PENDING_MEMO.clear()
    facts = _facts(ip)
    expected = pending_status_reference(pod, now=T2, **facts)
    assert pending_status(pod, now=T2, **facts) == expected  # a miss
    assert pending_status(pod, now=T2, **facts) == expected  # a hit
    # another pod with the same spec lists (one template): its own status, its own metadata
    lists = {"containers": pod.spec.containers, "init_containers": pod.spec.init_containers}
    twin = replace(other, spec=replace(other.spec, **lists))
    assert pending_status(twin, now=T1, **facts) == pending_status_reference(twin, now=T1, **facts)
    # the same regular containers with other init containers: not the first pod's parts
    mixed = replace(pod, spec=replace(pod.spec, init_containers=other.spec.init_containers))
    assert pending_status(mixed, now=T2, **facts) == pending_status_reference(mixed, now=T2, **facts)
    # equal lists that are other objects: a miss, the same status
    copy = replace(pod, spec=replace(pod.spec, containers=list(pod.spec.containers)))
    assert pending_status(copy, now=T2, **facts) == expected
    # the kubelet's resize decoration on top, as every status write does it
    rec = SimpleNamespace(allocated=resizable(pod), actuated=None, resize_conditions={})
    decorated = with_resize_status(rec, pending_status(pod, now=T2, **facts), generation)
    assert decorated == with_resize_status(rec, pending_status_reference(pod, now=T2, **facts), generation)


@given(pod=pods())
def test_a_memoised_status_shares_no_list_with_another(pod: Pod) -> None:
    """The status' lists are its own: a later status of a twin pod does not alias them."""
    first = pending_status(pod, now=T1, **_facts(True))
    second = pending_status(pod, now=T1, **_facts(True))
    assert first.container_statuses is not second.container_statuses
    assert first.init_container_statuses is not second.init_container_statuses
    assert first.conditions is not second.conditions


def test_the_memo_is_bounded() -> None:
    podstatus._PENDING_MEMO.clear()
    kept = []
    for i in range(podstatus._PENDING_MEMO_SIZE + 5):
        pod = builders.pod("p", node="n", containers=[builders.container(f"c{i}")])
        kept.append(pod)
        assert pending_status(pod, now=T0, **_facts(True)) == pending_status_reference(pod, now=T0, **_facts(True))
    assert len(podstatus._PENDING_MEMO) <= podstatus._PENDING_MEMO_SIZE


@given(pod=pods(), ip=st.booleans())
def test_succeeded_status_equals_the_plain_builder(pod: Pod, ip: bool) -> None:
    running = replace(pod, status=running_status(pod, now=T1, **_facts(ip)))
    owned = [
        PodCondition(type=READY_TO_START, status="False"),
        PodCondition(type=INITIALIZED, status="True", reason="PodCompleted"),
        PodCondition(type=READY, status="False", reason="PodCompleted"),
        PodCondition(type=CONTAINERS_READY, status="False", reason="PodCompleted"),
    ]
    done = succeeded_status(running, now=T2)
    assert done.conditions == merge_conditions(running.status.conditions, owned, T2)
    assert done.phase == "Succeeded"
    assert [cs.state.terminated.finished_at for cs in done.container_statuses if cs.state.terminated] == [T2] * len(
        running.status.container_statuses
    )


def _decorated_then_observed(rec: SimpleNamespace, status: PodStatus, generation: int) -> PodStatus:
    """``with_resize_status`` as two steps: the decoration's copy, then ``_observed``'s."""
    alloc = rec.allocated
    if alloc is None:
        return _observed(status, generation)
    actuated = rec.actuated or alloc
    containers = [_decorate(cs, alloc, actuated) for cs in status.container_statuses]
    inits = [_decorate(cs, alloc, actuated) for cs in status.init_container_statuses]
    conds = rec.resize_conditions
    conditions = status.conditions
    if conds or _has_resize_condition(conditions):
        conditions = [c for c in conditions if c.type not in _RESIZE_CONDITIONS]
        conditions += [conds[t] for t in _RESIZE_CONDITIONS if t in conds]
    status = replace(status, container_statuses=containers, init_container_statuses=inits, conditions=conditions)
    return _observed(status, generation)


RESIZE_CONDITIONS = st.dictionaries(
    st.sampled_from([POD_RESIZE_PENDING, POD_RESIZE_IN_PROGRESS]),
    st.builds(
        PodCondition,
        type=st.just(POD_RESIZE_PENDING),
        status=st.just("True"),
        reason=st.sampled_from(["", "Deferred", "Infeasible"]),
        observed_generation=st.sampled_from([0, 1, 2]),
    ),
    max_size=2,
).map(lambda d: {t: replace(c, type=t) for t, c in d.items()})


@given(
    pod=pods(),
    stage=st.sampled_from(["pending", "running", "succeeded"]),
    admitted=st.booleans(),
    resized=st.booleans(),
    actuated=st.sampled_from(["same", "none", "other"]),
    resize_conditions=RESIZE_CONDITIONS,
    prior=st.lists(
        st.sampled_from([POD_RESIZE_PENDING, POD_RESIZE_IN_PROGRESS, READY, "DisruptionTarget"]), max_size=2
    ),
    observed=st.sampled_from([0, 1, 2]),
    generation=st.sampled_from([0, 1, 2, 5]),
)
def test_with_resize_status_equals_decorating_then_observing(
    pod: Pod,
    stage: str,
    admitted: bool,
    resized: bool,
    actuated: str,
    resize_conditions: dict[str, PodCondition],
    prior: list[str],
    observed: int,
    generation: int,
) -> None:
    facts = _facts(True)
    status = pending_status_reference(pod, now=T1, **facts)
    if stage != "pending":
        status = running_status(pod, now=T1, **facts)
    if stage == "succeeded":
        status = succeeded_status(replace(pod, status=status), now=T2)
    extra = [PodCondition(type=t, status="True", observed_generation=observed) for t in prior]
    status = replace(status, conditions=status.conditions + extra, observed_generation=observed)
    alloc = resizable(pod) if admitted else None
    if alloc is not None and resized:
        alloc = {name: ResourceRequirements(requests=builders.quantities(cpu="250m")) for name in alloc}
    other = {name: ResourceRequirements() for name in alloc or {}}
    rec = SimpleNamespace(
        allocated=alloc,
        actuated={"same": alloc, "none": None, "other": other}[actuated],
        resize_conditions=resize_conditions,
    )
    assert with_resize_status(rec, status, generation) == _decorated_then_observed(rec, status, generation)
    # the one frame against the same steps through their helpers
    assert with_resize_status(rec, status, generation) == with_resize_status_reference(rec, status, generation)


OWNED = st.lists(
    st.sampled_from(
        [
            PodCondition(type=READY_TO_START, status="False"),
            PodCondition(type=READY_TO_START, status="True"),
            PodCondition(type=INITIALIZED, status="True", reason="PodCompleted"),
            PodCondition(type=INITIALIZED, status="False", reason="ContainersNotInitialized", message="m"),
            PodCondition(type=READY, status="True"),
            PodCondition(type=READY, status="False", reason="ContainersNotReady", message="[web]"),
            PodCondition(type=CONTAINERS_READY, status="False"),
            PodCondition(type=CONTAINERS_READY, status="True", observed_generation=4),
        ]
    ),
    max_size=4,
    unique_by=lambda c: c.type,
)


@given(
    old=st.lists(st.sampled_from(CONDITIONS_POOL), max_size=6),
    owned=OWNED,
    now=st.sampled_from([T1, T2]),
    generation=st.sampled_from([0, 1, 4]),
)
def test_merge_conditions_equals_its_plain_form(
    old: list[PodCondition], owned: list[PodCondition], now: str, generation: int
) -> None:
    """``merge_conditions``' lookups filled by loops against the comprehensions (duplicate types in
    ``old`` included: the last one wins in both)."""
    assert merge_conditions(old, owned, now, generation) == merge_conditions_reference(old, owned, now, generation)
    assert merge_conditions(old, tuple(owned), now, generation) == merge_conditions_reference(
        old, owned, now, generation
    )


def _stamp(t: float) -> str:
    return f"2026-01-01T00:{int(t) // 60:02d}:{int(t) % 60:02d}Z"


@given(
    pod=pods(),
    generation=st.sampled_from([0, 1, 2, 7]),
    admitted=st.booleans(),
    resize_conditions=RESIZE_CONDITIONS,
    advance=st.sampled_from([0.0, 1.0, 30.0, 90.0]),
)
def test_builders_marking_the_generation_write_what_the_write_marks(
    pod: Pod, generation: int, admitted: bool, resize_conditions: dict[str, PodCondition], advance: float
) -> None:
    """A builder given the pod's ``generation`` marks its conditions observed itself; what
    the kubelet writes (``with_resize_status`` on top, as ``PodWorker.write_status`` does) is
    the same as from the builder without it."""
    pod = replace(pod, metadata=replace(pod.metadata, generation=generation))
    rec = SimpleNamespace(
        allocated=resizable(pod) if admitted else None, actuated=None, resize_conditions=resize_conditions
    )

    def written(status: PodStatus) -> PodStatus:
        return with_resize_status(rec, status, generation)

    facts = _facts(True)
    pending = pending_status(pod, now=T1, generation=generation, **facts)
    assert written(pending) == written(pending_status(pod, now=T1, **facts))
    life, _bad = lifecycle_of(pod)
    run = PodRun.start(pod.spec, life, "p_default(u)", 5.0, prober_for(pod.spec.containers, life, "10.0.2.2"))
    run.advance(5.0 + advance)
    at = 5.0 + advance
    running = run_status(pod, run, stamp=_stamp, now=at, generation=generation, **facts)
    assert written(running) == written(run_status(pod, run, stamp=_stamp, now=at, **facts))
    done = replace(pod, status=running)
    assert written(succeeded_status(done, now=T2, generation=generation)) == written(succeeded_status(done, now=T2))
