"""``TerminatedOrder``: the terminated pods' deletion order kept in a heap fed by the
informers' handlers gives, at every pass, the first pods of the full sort upstream's
``gcTerminated`` makes (``byEvictionAndCreationTimestamp``, then the namespace)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.controllers.podgc import TerminatedOrder, _evicted_then_oldest
from emulator.base.api.core import Pod
from tests.builders import pod

Store = dict[tuple[str, str], Pod]


def _pod(name: str, namespace: str, created: int, phase: str, evicted: bool) -> Pod:
    p = pod(name, node="n1", phase=phase, reason="Evicted" if evicted else "", namespace=namespace)
    stamp = f"2026-01-01T00:{created // 60:02d}:{created % 60:02d}Z"
    return replace(p, metadata=replace(p.metadata, creation_timestamp=stamp))


def _sorted(stores: list[Store]) -> list[Pod]:
    pods = [p for store in stores for p in store.values()]
    pods.sort(key=lambda p: (*_evicted_then_oldest(p), p.metadata.namespace))
    return pods


_op = st.tuples(
    st.sampled_from(["add", "add", "add", "update", "delete", "first"]),
    st.sampled_from(["a", "b", "c", "d", "e", "f"]),
    st.sampled_from(["default", "kube-system"]),
    st.integers(0, 40),
    st.sampled_from(["Succeeded", "Failed"]),
    st.booleans(),
    st.integers(0, 8),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_op, max_size=120))
def test_first_n_is_the_head_of_the_full_sort(ops: list[tuple[str, str, str, int, str, bool, int]]) -> None:
    succeeded: Store = {}
    failed: Store = {}
    stores = [succeeded, failed]
    order = TerminatedOrder(stores)
    for verb, name, ns, created, phase, evicted, n in ops:
        key = (ns, name)
        store = succeeded if phase == "Succeeded" else failed
        other = failed if store is succeeded else succeeded
        if verb == "add" and key not in other:
            new = _pod(name, ns, created, phase, evicted)
            old = store.get(key)
            store[key] = new
            if old is None:
                order.add(new)
            else:
                order.update(old, new)
        elif verb == "update" and key in store:
            old = store[key]
            new = _pod(name, ns, created, phase, evicted)
            store[key] = new
            order.update(old, new)
        elif verb == "delete":
            store.pop(key, None)
        elif verb == "first":
            assert order.first(n) == _sorted(stores)[:n]
            assert len(order) == len(succeeded) + len(failed)
    assert order.first(100) == _sorted(stores)


def test_stale_entries_do_not_pile_up_below_the_threshold() -> None:
    """A run that never reaches the threshold never pops: deleted pods' entries are dropped by
    rebuilding once they outnumber the pods."""
    store: Store = {}
    order = TerminatedOrder([store])
    for i in range(5_000):
        p = _pod(f"p{i}", "default", i % 3600, "Succeeded", False)
        store[("default", f"p{i}")] = p
        order.add(p)
        if i >= 10:
            del store[("default", f"p{i - 10}")]
    assert len(order) == 10
    assert len(order._heap) <= 64 + 2 * 10 + 1
    assert order.first(3) == _sorted([store])[:3]
