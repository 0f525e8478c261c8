"""FitError's message, pinned to upstream's exact text (v1.34 ``framework/types.go``
``FitError.Error``: the PostFilter message follows after one space, with no period of its own),
and Diagnosis bookkeeping."""

from __future__ import annotations

import pytest

from agents.scheduler.framework.diagnosis import Diagnosis, FitError
from agents.scheduler.framework.interface import NodeToStatus
from agents.scheduler.framework.types import Code, Status
from emulator.base.api.codec import convert
from emulator.base.api.core import Pod

U, UU = Code.Unschedulable, Code.UnschedulableAndUnresolvable
TAINT = "node(s) had untolerated taint(s)"
POD = convert({"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": []}}, Pod)


def fit_error(
    statuses: dict[str, tuple[str, ...]],
    num_all: int,
    *,
    absent: Status | None = None,
    pre: str = "",
    post: str = "",
) -> FitError:
    nts = NodeToStatus({n: Status(U, *reasons) for n, reasons in statuses.items()}, absent)
    return FitError(POD, num_all, Diagnosis(nts, pre_filter_msg=pre, post_filter_msg=post))


@pytest.mark.parametrize(
    ("err", "want"),
    [
        pytest.param(
            fit_error({"n1": (TAINT,), "n2": ("Insufficient cpu",), "n3": ("Insufficient cpu",)}, 3),
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.",
            id="reference-example",
        ),
        pytest.param(
            fit_error({"n1": ("Insufficient cpu", "Insufficient memory"), "n2": ("Insufficient cpu",)}, 2),
            "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.",
            id="one-node-several-reasons",
        ),
        pytest.param(
            fit_error({f"m{i}": ("Insufficient memory",) for i in range(10)} | {"c1": ("X",), "c2": ("X",)}, 12),
            "0/12 nodes are available: 10 Insufficient memory, 2 X.",
            id="sorted-as-strings-not-numbers",
        ),
        pytest.param(
            fit_error({"n1": ("Insufficient cpu",)}, 5, absent=Status(UU, "node(s) didn't satisfy plugin(s) [A]")),
            "0/5 nodes are available: 1 Insufficient cpu, 4 node(s) didn't satisfy plugin(s) [A].",
            id="absent-nodes-counted",
        ),
        pytest.param(
            fit_error({"n1": ("Insufficient cpu",)}, 3),
            "0/3 nodes are available: 1 Insufficient cpu.",
            id="absent-default-status-has-no-reason",
        ),
        pytest.param(
            fit_error(
                {},
                3,
                absent=Status(UU, "node(s) didn't satisfy plugin(s) [A B] simultaneously"),
                pre="node(s) didn't satisfy plugin(s) [A B] simultaneously",
            ),
            "0/3 nodes are available: node(s) didn't satisfy plugin(s) [A B] simultaneously.",
            id="pre-filter-message-replaces-histogram",
        ),
        pytest.param(
            fit_error(
                {"n1": (TAINT,), "n2": ("Insufficient cpu",), "n3": ("Insufficient cpu",)},
                3,
                post="preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
                "2 No preemption victims found for incoming pod.",
            ),
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
            "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
            "2 No preemption victims found for incoming pod.",
            id="preemption-suffix-one-period",
        ),
        pytest.param(
            fit_error(
                {"n1": (TAINT,), "n2": ("node(s) didn't match Pod's node affinity/selector",)} | {"n3": (TAINT,)},
                3,
                post="no new claims to deallocate, preemption: 0/3 nodes are available: "
                "3 Preemption is not helpful for scheduling.",
            ),
            # Seen from real v1.34 clusters (issue 23), taint and affinity counts swapped.
            "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
            "2 node(s) had untolerated taint(s). no new claims to deallocate, preemption: "
            "0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
            id="dra-then-preemption-as-v1.34",
        ),
        pytest.param(
            fit_error({}, 2, absent=Status(UU, "gated"), pre="gated", post="preemption: not eligible"),
            "0/2 nodes are available: gated. preemption: not eligible",
            id="pre-filter-and-post-filter",
        ),
    ],
)
def test_fit_error_message(err: FitError, want: str) -> None:
    assert str(err) == want
    assert err.message() == want


def test_histogram_counts_absent_nodes() -> None:
    err = fit_error({"n1": ("a",), "n2": ("a", "b")}, 4, absent=Status(UU, "c"))
    assert err.reasons_histogram() == {"a": 2, "b": 1, "c": 2}


@pytest.mark.parametrize(
    ("statuses", "want_unschedulable", "want_pending"),
    [
        pytest.param([Status(U, "x", plugin="A")], {"A"}, set(), id="unschedulable"),
        pytest.param([Status(UU, "x", plugin="B")], {"B"}, set(), id="unresolvable"),
        pytest.param([Status(Code.Pending, "x", plugin="C")], set(), {"C"}, id="pending"),
        pytest.param([Status(U, "x")], set(), set(), id="no-plugin-ignored"),
        pytest.param([Status(Code.Error, "x", plugin="D")], set(), set(), id="error-ignored"),
    ],
)
def test_add_plugin_status(statuses: list[Status], want_unschedulable: set[str], want_pending: set[str]) -> None:
    d = Diagnosis()
    for s in statuses:
        d.add_plugin_status(s)
    assert (d.unschedulable_plugins, d.pending_plugins) == (want_unschedulable, want_pending)


def test_node_to_status() -> None:
    nts = NodeToStatus()
    nts.set("n1", Status(U, "x"))
    assert (nts.get("n1").reasons, nts.get("n2").code, len(nts)) == (("x",), UU, 1)
    nts.set_absent_nodes_status(Status(U, "absent"))
    assert nts.get("n2").reasons == ("absent",)
    assert [n for n, _ in nts.explicit_nodes()] == ["n1"]
