"""The Deployment controller's pure helpers against upstream's rules: fenceposts, new
ReplicaSet sizes, proportions, the pod-template-hash, revision annotations, conditions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.controllers.deployment.util import (
    DESIRED_REPLICAS,
    MAX_REPLICAS,
    REVISION,
    REVISION_HISTORY,
    compute_hash,
    equal_ignore_hash,
    max_surge,
    max_unavailable,
    new_condition,
    new_rs_annotations,
    new_rs_new_replicas,
    replica_set_proportion,
    resolve_fenceposts,
    set_condition,
)
from emulator.base.api.apps import DeploymentStatus, ReplicaSet, ReplicaSetSpec
from emulator.base.api.meta import ObjectMeta
from tests.builders import container
from tests.controllers.appsworld import deployment, template

ALPHABET = set("bcdfghjklmnpqrstvwxz2456789")


@pytest.mark.parametrize(
    ("surge", "unavailable", "desired", "expected"),
    [
        pytest.param("25%", "25%", 10, (3, 2), id="percent-surge-up-unavailable-down"),
        pytest.param("25%", "25%", 1, (1, 0), id="one-replica"),
        pytest.param(0, "10%", 5, (0, 1), id="both-zero-after-rounding-unavailable-1"),
        pytest.param(0, 0, 5, (0, 1), id="both-zero"),
        pytest.param(2, 1, 10, (2, 1), id="absolute"),
        pytest.param("100%", 0, 3, (3, 0), id="blue-green"),
    ],
)
def test_resolve_fenceposts(surge: int | str, unavailable: int | str, desired: int, expected: tuple[int, int]) -> None:
    assert resolve_fenceposts(surge, unavailable, desired) == expected


def test_max_unavailable_is_capped_by_replicas_and_zero_for_recreate() -> None:
    assert max_unavailable(deployment("d", 2, max_surge=0, max_unavailable=5)) == 2
    assert max_unavailable(deployment("d", 0, max_surge=1, max_unavailable=1)) == 0
    assert max_unavailable(deployment("d", 3, strategy="Recreate")) == 0
    assert max_surge(deployment("d", 3, strategy="Recreate")) == 0


def rs(name: str, replicas: int, **annotations: str) -> ReplicaSet:
    return ReplicaSet(metadata=ObjectMeta(name=name, annotations=annotations), spec=ReplicaSetSpec(replicas=replicas))


@pytest.mark.parametrize(
    ("replicas", "surge", "sizes", "new", "expected"),
    [
        pytest.param(10, 3, [10], 0, 3, id="surge-bound"),
        pytest.param(10, 3, [8], 3, 5, id="after-old-scaled-down"),
        pytest.param(10, 3, [10], 3, 3, id="at-ceiling"),
        pytest.param(3, 5, [0], 0, 3, id="not-past-desired"),
    ],
)
def test_new_rs_new_replicas(replicas: int, surge: int, sizes: list[int], new: int, expected: int) -> None:
    d = deployment("d", replicas, max_surge=surge, max_unavailable=0)
    new_rs = rs("new", new)
    olds = [rs(f"old-{i}", n) for i, n in enumerate(sizes)]
    assert new_rs_new_replicas(d, [*olds, new_rs], new_rs) == expected


@pytest.mark.parametrize(
    ("size", "replicas", "before", "to_add", "added", "expected"),
    [
        pytest.param(8, 15, "13", 5, 0, 3, id="documented-old"),
        pytest.param(5, 15, "13", 5, 3, 2, id="documented-new"),
        pytest.param(5, 15, "13", 5, 4, 1, id="capped-by-what-is-left"),
        pytest.param(8, 5, "13", -5, 0, -3, id="down"),
        pytest.param(8, 0, "13", -8, 0, -8, id="to-zero"),
        pytest.param(0, 15, "13", 5, 0, 0, id="empty-never-grows"),
    ],
)
def test_replica_set_proportion(size: int, replicas: int, before: str, to_add: int, added: int, expected: int) -> None:
    d = deployment("d", replicas, max_surge=3, max_unavailable=2)
    assert replica_set_proportion(rs("x", size, **{MAX_REPLICAS: before}), d, to_add, added) == expected


def test_hash_uses_the_alphabet_and_changes_with_template_and_collisions() -> None:
    t = template({"app": "web"})
    h = compute_hash(t, None)
    assert set(h) <= ALPHABET
    assert 1 <= len(h) <= 10
    assert compute_hash(t, None) == h
    assert compute_hash(t, 1) != h
    assert compute_hash(template({"app": "web"}, image="nginx:2"), None) != h


def test_hash_of_a_template_with_resources() -> None:
    """Regression: quantities are encoded (the hash raised TypeError on any request)."""
    t = template({"app": "web"})
    with_requests = replace(t, spec=replace(t.spec, containers=[container(cpu="100m", memory="1Gi")]))
    assert set(compute_hash(with_requests, None)) <= ALPHABET


@given(st.dictionaries(st.sampled_from("abc"), st.sampled_from("xyz"), max_size=3), st.text("abc", max_size=4))
def test_equal_ignore_hash_ignores_only_the_hash_label(labels: dict[str, str], h: str) -> None:
    t = template(labels)
    hashed = template({**labels, "pod-template-hash": h})
    assert equal_ignore_hash(t, hashed)
    assert not equal_ignore_hash(t, template({**labels, "other": "1"}))


def test_new_rs_annotations_keep_a_rollback_history() -> None:
    d = deployment("d", 3, max_surge=1, max_unavailable=0)
    d = replace(d, metadata=replace(d.metadata, annotations={"team": "a", REVISION: "9"}))
    fresh: dict[str, str] = {}
    assert new_rs_annotations(d, fresh, 1, exists=False)
    assert fresh == {"team": "a", REVISION: "1", DESIRED_REPLICAS: "3", MAX_REPLICAS: "4"}
    assert not new_rs_annotations(d, fresh, 1, exists=True)
    assert new_rs_annotations(d, fresh, 3, exists=True)  # rolled back to: 1 goes to the history
    assert (fresh[REVISION], fresh[REVISION_HISTORY]) == ("3", "1")
    new_rs_annotations(d, fresh, 5, exists=True)
    assert (fresh[REVISION], fresh[REVISION_HISTORY]) == ("5", "1,3")


def test_set_condition_keeps_transition_time_when_only_the_reason_changes() -> None:
    s = set_condition(DeploymentStatus(), new_condition("Progressing", "True", "A", "a", "t1"))
    same = set_condition(s, new_condition("Progressing", "True", "A", "other", "t2"))
    assert same is s
    moved = set_condition(s, new_condition("Progressing", "True", "B", "b", "t3"))
    (c,) = moved.conditions
    assert (c.reason, c.last_transition_time, c.last_update_time) == ("B", "t1", "t3")
    flipped = set_condition(moved, new_condition("Progressing", "False", "C", "c", "t4"))
    assert flipped.conditions[0].last_transition_time == "t4"
