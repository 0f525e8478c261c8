"""Taints and tolerations (``emulator.base.api.taints``) against upstream ``ToleratesTaint``."""

from __future__ import annotations

import pytest

from emulator.base.api.core import (
    Node,
    Taint,
    Toleration,
)
from emulator.base.api.taints import find_untolerated_taint, toleration_tolerates_taint, tolerations_tolerate_taint
from tests import builders


def node(name: str = "n1", labels: dict[str, str] | None = None) -> Node:
    return builders.node(name, cpu=None, memory=None, pods=None, labels=labels)


# --- taints and tolerations -------------------------------------------------------------


def tol(key: str = "", operator: str = "", value: str = "", effect: str = "") -> Toleration:
    return builders.toleration(key, value, effect=effect, operator=operator)


DEDICATED = Taint(key="dedicated", value="gpu", effect="NoSchedule")


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        pytest.param(tol(operator="Exists"), DEDICATED, True, id="exists-empty-key-tolerates-all"),
        pytest.param(
            tol(operator="Exists"),
            Taint(key="x", effect="NoExecute", value="y"),
            True,
            id="exists-empty-key-any-effect",
        ),
        pytest.param(
            tol(operator="Exists", effect="NoExecute"),
            DEDICATED,
            False,
            id="exists-empty-key-effect-mismatch",
        ),
        pytest.param(tol(key="dedicated", operator="Exists"), DEDICATED, True, id="exists-ignores-value"),
        pytest.param(tol(key="other", operator="Exists"), DEDICATED, False, id="exists-key-mismatch"),
        pytest.param(
            tol(key="dedicated", operator="Equal", value="gpu", effect="NoSchedule"),
            DEDICATED,
            True,
            id="equal-all-match",
        ),
        pytest.param(
            tol(key="dedicated", operator="Equal", value="gpu"),
            DEDICATED,
            True,
            id="empty-effect-matches-all-effects",
        ),
        pytest.param(
            tol(key="dedicated", operator="Equal", value="cpu"),
            DEDICATED,
            False,
            id="equal-value-mismatch",
        ),
        pytest.param(tol(key="dedicated", value="gpu"), DEDICATED, True, id="empty-operator-means-equal"),
        pytest.param(tol(key="dedicated", value=""), DEDICATED, False, id="empty-operator-compares-value"),
        pytest.param(
            tol(key="dedicated", operator="Equal", value="gpu", effect="NoExecute"),
            DEDICATED,
            False,
            id="effect-mismatch",
        ),
        pytest.param(
            tol(key="dedicated", operator="Equal", value="gpu", effect="PreferNoSchedule"),
            DEDICATED,
            False,
            id="prefer-effect-mismatch",
        ),
        pytest.param(
            tol(key="dedicated", operator="Equal"),
            Taint(key="dedicated", effect="NoSchedule"),
            True,
            id="equal-empty-values",
        ),
        pytest.param(tol(key="dedicated", operator="Gt", value="1"), DEDICATED, False, id="unknown-operator"),
    ],
)
def test_toleration_tolerates_taint(toleration: Toleration, taint: Taint, expected: bool) -> None:
    assert toleration_tolerates_taint(toleration, taint) is expected


NOT_READY = Taint(key="node.kubernetes.io/not-ready", effect="NoExecute")
PREFER = Taint(key="soft", effect="PreferNoSchedule")
HARD = ("NoSchedule", "NoExecute")


@pytest.mark.parametrize(
    ("taints", "tolerations", "effects", "expected"),
    [
        pytest.param([], [], HARD, None, id="no-taints"),
        pytest.param([DEDICATED, NOT_READY], [], HARD, DEDICATED, id="first-untolerated"),
        pytest.param(
            [DEDICATED, NOT_READY],
            [tol(key="dedicated", operator="Exists")],
            HARD,
            NOT_READY,
            id="skips-tolerated",
        ),
        pytest.param([PREFER, NOT_READY], [], HARD, NOT_READY, id="effect-filter-skips-prefer"),
        pytest.param([PREFER], [], HARD, None, id="only-filtered-taints"),
        pytest.param([DEDICATED, NOT_READY], [tol(operator="Exists")], HARD, None, id="tolerate-everything"),
        pytest.param([DEDICATED, NOT_READY], [], ("NoExecute",), NOT_READY, id="noexecute-only"),
        pytest.param([DEDICATED], [], (), None, id="no-effects-selected"),
    ],
)
def test_find_untolerated_taint(
    taints: list[Taint],
    tolerations: list[Toleration],
    effects: tuple[str, ...],
    expected: Taint | None,
) -> None:
    assert find_untolerated_taint(taints, tolerations, effects) == expected


def test_tolerations_tolerate_taint() -> None:
    assert not tolerations_tolerate_taint([], DEDICATED)
    assert tolerations_tolerate_taint([tol(key="x", operator="Exists"), tol(operator="Exists")], DEDICATED)
