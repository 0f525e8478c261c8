"""``pod_ip_range`` (lazy) is ``pod_ip_pool`` (the reference list), and ``PodIPs`` hands out the
same addresses whichever of the two backs it."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.kubelet.nodestatus import PodIPs, pod_ip_pool, pod_ip_range

v4 = st.builds(
    lambda addr, prefix: str(ipaddress.ip_network(f"{ipaddress.IPv4Address(addr)}/{prefix}", strict=False)),
    st.integers(min_value=0, max_value=2**32 - 1),
    st.integers(min_value=20, max_value=32),
)
v6 = st.builds(
    lambda addr, prefix: str(ipaddress.ip_network(f"{ipaddress.IPv6Address(addr)}/{prefix}", strict=False)),
    st.integers(min_value=0, max_value=2**128 - 1),
    st.integers(min_value=118, max_value=128),
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(v4, v6))
def test_range_equals_pool(cidr: str) -> None:
    pool = pod_ip_pool(cidr)
    lazy = pod_ip_range(cidr)
    assert len(lazy) == len(pool)
    assert list(lazy) == pool
    assert lazy[:] == pool[:]
    assert lazy[1:7:2] == pool[1:7:2]
    if pool:
        assert lazy[-1] == pool[-1]


@settings(max_examples=200, deadline=None)
@given(v4, st.lists(st.one_of(st.just(None), st.integers(min_value=0, max_value=40)), max_size=80))
def test_pod_ips_hand_out_the_reference_addresses(cidr: str, ops: list[int | None]) -> None:
    """``None`` allocates; an int releases the address handed out that many allocations ago."""
    fast, ref = PodIPs(cidr), PodIPs(cidr)
    ref._pool = pod_ip_pool(cidr)
    ref._size = len(ref._pool)  # the reference list, indexed as ``allocate`` does
    given_out: list[str] = []
    for op in ops:
        if op is None:
            ip = fast.allocate()
            assert ip == ref.allocate()
            given_out.append(ip)
        elif op < len(given_out):
            fast.release(given_out[-1 - op])
            ref.release(given_out[-1 - op])
        assert len(fast) == len(ref)


@pytest.mark.parametrize(
    ("cidr", "first", "last", "count"),
    [
        pytest.param("10.1.45.0/24", "10.1.45.2", "10.1.45.254", 253, id="slash-24"),
        pytest.param("10.0.0.0/16", "10.0.0.2", "10.0.4.1", 1024, id="capped-at-1024"),
        pytest.param("10.0.0.0/30", "10.0.0.2", "10.0.0.2", 1, id="slash-30"),
    ],
)
def test_range_bounds(cidr: str, first: str, last: str, count: int) -> None:
    r = pod_ip_range(cidr)
    assert (r[0], r[-1], len(r)) == (first, last, count)
    with pytest.raises(IndexError):
        r[count]
