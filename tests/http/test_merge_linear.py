"""Strategic merge and server-side apply are linear in list length (issue 24 #3): list items are
looked up by merge key through an index built once, never by a scan per patch item. Counted,
not timed: the key computations per merge grow with n, not n squared. Plus properties of the
keyed merge on random lists (the result is the old first-match merge's)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.base.apiserver.server import ApiServer
from emulator.base.http import apply, patch
from emulator.base.http.apply import FieldManagers
from emulator.base.http.resources import RESOURCES
from emulator.base.runtime.clock import StoppedClock
from tests.builders import namespace

POD = next(r for r in RESOURCES if r.kind == "Pod" and not r.group)


def _containers(names: list[str], image: str) -> list[dict[str, Any]]:
    return [{"name": n, "image": image} for n in names]


def _counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    count = [0]
    real = getattr(module, name)

    def counted(*args: Any) -> Any:
        count[0] += 1
        return real(*args)

    monkeypatch.setattr(module, name, counted)
    return count


@pytest.mark.parametrize("n", [1000, 4000])
def test_strategic_merge_keys_each_item_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    live = {"spec": {"containers": _containers([f"c{i}" for i in range(n)], "a")}}
    body = {"spec": {"containers": _containers([f"c{i}" for i in reversed(range(n))], "b")}}
    calls = _counting(monkeypatch, patch, "_hashable")
    merged = patch.strategic_merge("Pod", live, body)
    assert [c["image"] for c in merged["spec"]["containers"]] == ["b"] * n
    assert [c["name"] for c in merged["spec"]["containers"]] == [f"c{i}" for i in reversed(range(n))]
    assert calls[0] <= 20 * n


@pytest.mark.parametrize("n", [500, 2000])
def test_apply_keys_each_item_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    managers = FieldManagers()
    base = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}}
    everything = {**base, "spec": {"containers": _containers([f"c{i}" for i in range(n)], "a")}}
    current = managers.apply(POD, None, everything, manager="two", force=False, time="t0")
    current["metadata"]["uid"] = "u1"
    managers.update(POD, None, current, manager="two", operation="Apply", time="t0")
    half = {**base, "spec": {"containers": _containers([f"c{i}" for i in range(0, n, 2)], "b")}}
    calls = _counting(monkeypatch, apply, "key_step")
    result = managers.apply(POD, current, half, manager="two", force=False, time="t1")
    # the odd items, applied before and no longer, are removed (one pass over the list)
    assert result["spec"]["containers"] == _containers([f"c{i}" for i in range(0, n, 2)], "b")
    assert calls[0] <= 20 * n


def _first_match(live: list[dict[str, Any]], items: list[dict[str, Any]]) -> dict[str, str]:
    """The old merge, item by item: the first live item with the name takes the image, else appended."""
    out = [dict(v) for v in live]
    for item in items:
        for existing in out:
            if existing["name"] == item["name"]:
                existing.update(item)
                break
        else:
            out.append(dict(item))
    return {v["name"]: v["image"] for v in out}


_NAMES = st.lists(st.sampled_from("abcdefgh"), max_size=8)


@settings(max_examples=200, deadline=None)
@given(live=_NAMES, plain=_NAMES, deleted=_NAMES)
def test_keyed_merge_matches_the_first_match_merge(live: list[str], plain: list[str], deleted: list[str]) -> None:
    live_items = _containers(list(dict.fromkeys(live)), "old")
    items = _containers(plain, "new")
    body = [*items, *({"name": n, "$patch": "delete"} for n in deleted)]
    merged = patch.strategic_merge("Pod", {"spec": {"containers": live_items}}, {"spec": {"containers": body}})
    kept = [v for v in live_items if v["name"] not in deleted]
    result = merged["spec"].get("containers", [])
    assert {v["name"]: v["image"] for v in result} == _first_match(kept, items)
    assert len(result) == len({v["name"] for v in result})
    server_only = [v["name"] for v in result if v["name"] not in plain]
    assert server_only == [v["name"] for v in kept if v["name"] not in plain]


@settings(max_examples=100, deadline=None)
@given(first=_NAMES, second=_NAMES, seed=st.integers(0, 1000))
def test_apply_owns_exactly_what_each_manager_applies(first: list[str], second: list[str], seed: int) -> None:
    api = ApiServer(StoppedClock(), random.Random(seed))
    api.create(namespace("default"))
    managers = FieldManagers()
    meta = {"name": "p", "namespace": "default"}
    base = {"apiVersion": "v1", "kind": "Pod", "metadata": meta}
    one = {**base, "spec": {"containers": _containers(list(dict.fromkeys(first)), "a")}}
    created = managers.apply(POD, None, one, manager="one", force=False, time="t0")
    created["metadata"] = {**meta, "uid": "u1"}
    managers.update(POD, None, created, manager="one", operation="Apply", time="t0")
    two = {**base, "spec": {"containers": _containers(list(dict.fromkeys(second)), "a")}}
    result = managers.apply(POD, created, two, manager="two", force=True, time="t1")
    names = [c["name"] for c in result["spec"]["containers"]]
    assert sorted(names) == sorted(set(first) | set(second))
    assert names[: len(set(first))] == list(dict.fromkeys(first))
