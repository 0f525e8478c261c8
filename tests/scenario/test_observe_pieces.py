"""``add_pieces`` (the observer's logged pieces added by numpy) against ``TimeWeighted.add``
piece by piece: the same bits in every field, the same keys in the same order."""

from __future__ import annotations

import random
import struct
from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.app.scenario.observe_metrics import TimeWeighted, add_pieces


def _bits(tw: TimeWeighted) -> tuple[object, ...]:
    def b(x: float) -> bytes:
        return struct.pack("<d", x)

    return b(tw.total), b(tw.integral), b(tw.peak), [(k, b(v)) for k, v in tw.spent.items()]


def _both(start: list[list[tuple[float, float]]], pieces: list[tuple[float, tuple[float, ...]]]) -> None:
    """Both ways from the same summaries (``start``: pieces already added one by one)."""
    ref = [TimeWeighted() for _ in range(4)]
    new = [TimeWeighted() for _ in range(4)]
    for i, added in enumerate(start):
        for value, d in added:
            ref[i].add(value, d)
            new[i].add(value, d)
    log: array[float] = array("d")
    for d, values in pieces:
        for summary, value in zip(ref, values, strict=True):
            summary.add(value, d)
        log.append(d)
        log.extend(values)
    add_pieces(new, log)
    assert not log
    assert [_bits(s) for s in new] == [_bits(s) for s in ref]


_value = st.one_of(
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
    st.sampled_from([0.0, 0.1, 1 / 3, 0.5, 0.99995, 0.00005, 1.0]),
    st.integers(min_value=0, max_value=1200).map(float),
)
_d = st.one_of(st.floats(min_value=1e-9, max_value=4000.0), st.sampled_from([0.02, 0.1, 1.0, 1e-6]))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.tuples(_value, _d), max_size=6), min_size=4, max_size=4),
    st.lists(st.tuples(_d, st.tuples(_value, _value, _value, _value)), max_size=60),
)
def test_add_pieces_is_add_in_order(start: list[list[tuple[float, float]]], pieces: list) -> None:
    _both(start, pieces)


def test_add_pieces_long_log() -> None:
    """A churn-like log: shares drifting by small steps, a few repeats, 20,000 pieces."""
    rng = random.Random(7)
    pieces = []
    shares = [0.3, 0.4, 0.0, 500.0]
    for _ in range(20_000):
        shares = [min(1.0, max(0.0, s + rng.choice((-1, 1)) * 0.000025)) for s in shares[:3]] + [
            float(max(0, int(shares[3]) + rng.choice((-1, 0, 1))))
        ]
        pieces.append((rng.choice((0.02, 0.01, rng.random() * 0.05)), tuple(shares)))
    _both([[(0.25, 3.0)], [], [(1.0, 0.5)], [(7.0, 2.0)]], pieces)


def test_add_pieces_empty_log_changes_nothing() -> None:
    tw = TimeWeighted(1.0, 0.5, 0.5, {5000: 1.0})
    add_pieces([tw], array("d"))
    assert (tw.total, tw.integral, tw.peak, tw.spent) == (1.0, 0.5, 0.5, {5000: 1.0})
