"""KeyedHeap: less order, first-added tie-break, in-place update, delete from the middle."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.scheduler.queue import KeyedHeap


@dataclass
class Item:
    key: str
    prio: int


def make_heap() -> KeyedHeap[Item]:
    return KeyedHeap(lambda i: i.key, lambda a, b: a.prio < b.prio)


def drain(h: KeyedHeap[Item]) -> list[str]:
    out = []
    while (i := h.pop()) is not None:
        out.append(i.key)
    return out


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        pytest.param([("a", 3), ("b", 1), ("c", 2)], ["b", "c", "a"], id="by-less"),
        pytest.param([("a", 1), ("b", 1), ("c", 1), ("d", 0)], ["d", "a", "b", "c"], id="ties-first-added-first"),
        pytest.param([], [], id="empty"),
    ],
)
def test_pop_order(items: list[tuple[str, int]], expected: list[str]) -> None:
    h = make_heap()
    for k, p in items:
        h.add_or_update(Item(k, p))
    assert h.ordered() == [h.get(k) for k in expected]  # ordered() does not consume
    assert len(h) == len(items)
    assert drain(h) == expected
    assert h.peek() is None


def test_update_in_place_resifts_and_keeps_tie_rank() -> None:
    h = make_heap()
    items = {k: Item(k, 5) for k in "abcd"}
    for i in items.values():
        h.add_or_update(i)
    items["d"].prio = 0
    h.add_or_update(items["d"])
    items["a"].prio = 9
    h.add_or_update(items["a"])
    assert drain(h) == ["d", "b", "c", "a"]


def test_update_with_new_object_replaces() -> None:
    h = make_heap()
    h.add_or_update(Item("a", 1))
    h.add_or_update(Item("b", 2))
    h.add_or_update(Item("a", 3))
    assert len(h) == 2
    got = h.get("a")
    assert got is not None
    assert got.prio == 3
    assert drain(h) == ["b", "a"]


def test_delete_from_middle() -> None:
    h = make_heap()
    for k, p in [("a", 1), ("b", 2), ("c", 3), ("d", 4), ("e", 5)]:
        h.add_or_update(Item(k, p))
    assert h.delete("c") == Item("c", 3)
    assert h.delete("c") is None
    assert "c" not in h
    assert "d" in h
    assert drain(h) == ["a", "b", "d", "e"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["add", "delete", "pop"]), st.integers(0, 9), st.integers(0, 4)),
        max_size=60,
    )
)
def test_matches_a_sorted_reference(ops: list[tuple[str, int, int]]) -> None:
    h = make_heap()
    ref: dict[str, tuple[int, int]] = {}  # key -> (prio, first-added seq)
    seq = 0
    for op, k, p in ops:
        key = f"k{k}"
        if op == "add":
            if key not in ref:
                ref[key] = (p, seq)
                seq += 1
            else:
                ref[key] = (p, ref[key][1])
            h.add_or_update(Item(key, p))
        elif op == "delete":
            assert (h.delete(key) is not None) == (key in ref)
            ref.pop(key, None)
        else:
            got = h.pop()
            if not ref:
                assert got is None
            else:
                want = min(ref, key=lambda x: ref[x])
                assert got is not None
                assert got.key == want
                del ref[want]
        assert len(h) == len(ref)
    assert drain(h) == sorted(ref, key=lambda x: ref[x])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["add", "add", "update", "delete", "pop"]), st.integers(0, 9), st.integers(0, 3)),
        max_size=80,
    )
)
def test_rank_gives_the_same_array_and_pops_as_less(ops: list[tuple[str, int, int]]) -> None:
    """A heap comparing ``rank`` tuples behaves exactly as one calling ``less``: same pops, and the
    same array after every step (so the same sift steps), in-place updates included."""
    by_less = make_heap()
    by_rank: KeyedHeap[Item] = KeyedHeap(lambda i: i.key, lambda a, b: a.prio < b.prio, lambda i: i.prio)
    mirror: dict[str, tuple[Item, Item]] = {}
    for op, k, p in ops:
        key = f"k{k}"
        if op == "add":
            a, b = Item(key, p), Item(key, p)
            mirror[key] = (a, b)
            by_less.add_or_update(a)
            by_rank.add_or_update(b)
        elif op == "update" and key in mirror:
            a, b = mirror[key]
            a.prio = b.prio = p  # changed in place, then re-sifted
            by_less.add_or_update(a)
            by_rank.add_or_update(b)
        elif op == "delete":
            mirror.pop(key, None)
            assert by_less.delete(key) == by_rank.delete(key)
        elif op == "pop":
            got_less, got_rank = by_less.pop(), by_rank.pop()
            assert got_less == got_rank
            if got_less is not None:
                del mirror[got_less.key]
        assert [(i.key, i.prio) for i in by_less] == [(i.key, i.prio) for i in by_rank]
    assert drain(by_less) == drain(by_rank)
