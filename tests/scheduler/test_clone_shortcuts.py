"""The snapshot clone's shortcuts against their plain forms.

* ``HostPortInfo.__bool__`` (read by ``NodeTable._flag`` on every row update) is ``len > 0``
  after any sequence of ``add`` / ``remove`` (removing ports never added included); its
  ``clone`` holds the same ports and is independent of the original.
* ``Resource.clone`` (three a NodeInfo clone) equals ``Resource(...)`` with a copy of the
  scalar resources, and shares no dict with the original.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agents.scheduler.framework.types import HostPortInfo, Resource

PORTS = st.tuples(st.sampled_from(["", "0.0.0.0", "10.0.0.1"]), st.sampled_from(["", "TCP", "UDP"]), st.integers(1, 3))


@given(st.lists(st.tuples(st.booleans(), PORTS), max_size=30))
def test_host_ports_truth_is_a_non_zero_length(ops: list[tuple[bool, tuple[str, str, int]]]) -> None:
    h = HostPortInfo()
    for add, (ip, proto, port) in ops:
        (h.add if add else h.remove)(ip, proto, port)
        assert bool(h) is (len(h) > 0)
        c = h.clone()
        assert c._ports == h._ports
        assert bool(c) is bool(h)
        c.add("10.9.9.9", "TCP", 9)
        assert len(c) == len(h) + 1  # the clone is its own
        for bucket, other in zip(h._ports.values(), c._ports.values(), strict=False):
            assert bucket is not other


@given(
    st.integers(0, 10**12),
    st.integers(0, 10**12),
    st.integers(0, 10**12),
    st.integers(0, 200),
    st.dictionaries(st.sampled_from(["example.com/gpu", "hugepages-2Mi"]), st.integers(0, 8)),
)
def test_resource_clone_is_a_copy(cpu: int, mem: int, eph: int, pods: int, scalars: dict[str, int]) -> None:
    r = Resource(cpu, mem, eph, pods, scalars)
    c = r.clone()
    assert c == Resource(cpu, mem, eph, pods, dict(scalars))
    assert type(c) is Resource
    assert c.scalar_resources is not r.scalar_resources
    c.add("example.com/gpu", 1)
    c.add("cpu", 1)
    assert r == Resource(cpu, mem, eph, pods, scalars)
