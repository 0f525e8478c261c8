"""The checker's overcommit accounting equals a plain model on random admit/release
sequences: after each admission, every requested resource whose node total exceeds the
node's allocatable is reported, in resource-name order (``InvariantChecker._admit`` only
enters that loop when some total is over)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.app.scenario.invariants import InvariantChecker
from emulator.app.scenario.monitor import Overcommit
from emulator.base.api.resources import node_allocatable, pod_requests
from emulator.base.apiserver.server import WriteRecord
from tests import builders

_NODES = ("n1", "n2", "n3")  # n3 is never written: an unseen node's allocatable is empty

step = st.tuples(
    st.integers(min_value=0, max_value=5),  # pod index
    st.sampled_from(_NODES),
    st.sampled_from(["100m", "1", "3"]),
    st.sampled_from(["1Gi", "20Gi"]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(step, max_size=30), st.sampled_from(["1", "4"]))
def test_overcommits_equal_the_model(steps: list[tuple[int, str, str, str]], node_cpu: str) -> None:
    checker = InvariantChecker()
    rev = 0
    alloc: dict[str, dict[str, int]] = {}
    for name in _NODES[:2]:
        rev += 1
        node = builders.node(name, cpu=node_cpu, memory="32Gi", pods="3")
        checker(WriteRecord(rev, 0.0, "create", "Node", None, node))
        alloc[name] = node_allocatable(node)
    live: dict[int, tuple[str, dict[str, int]]] = {}
    stored: dict[int, object] = {}
    want: list[Overcommit] = []
    for t, (i, node_name, cpu, memory) in enumerate(steps):
        rev += 1
        if i in live:  # delete it
            checker(WriteRecord(rev, float(t), "delete", "Pod", stored.pop(i), None))
            del live[i]
            continue
        pod = builders.pod(
            f"p{i}", uid=f"u{i}", cpu=cpu, memory=memory, node=node_name, phase="Running", start_time="x"
        )
        checker(WriteRecord(rev, float(t), "create", "Pod", None, pod))
        stored[i] = pod
        req = {**pod_requests(pod), "pods": 1}
        live[i] = (node_name, req)
        used: dict[str, int] = {}
        for n, r in live.values():
            if n == node_name:
                for k, v in r.items():
                    used[k] = used.get(k, 0) + v
        have = alloc.get(node_name, {})
        want.extend(
            Overcommit(float(t), node_name, k, used[k], have[k]) for k in sorted(req) if k in have and used[k] > have[k]
        )
    assert checker.overcommits == want
