"""``NodeAffinityArgs.addedAffinity`` is validated (upstream ``ValidateNodeAffinityArgs``): an
unknown operator or a weight out of 1–100 was accepted before the hostile corpus found it."""

from __future__ import annotations

from typing import Any

import pytest

from agents.scheduler.args import ConfigError, NodeAffinityArgs, decode_args

REQ = "args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
PREF = "args.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution"


def _required(*exprs: dict[str, Any]) -> dict[str, Any]:
    return {
        "addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": list(exprs)}]}
        }
    }


def _preferred(weight: int) -> dict[str, Any]:
    term = {"weight": weight, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}
    return {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param(
            _required({"key": "a", "operator": "Foo"}),
            f"{REQ}.nodeSelectorTerms[0].matchExpressions[0].operator: "
            'Invalid value: "Foo": not a valid selector operator',
            id="operator",
        ),
        pytest.param(
            _required({"key": "a", "operator": "In"}),
            f"{REQ}.nodeSelectorTerms[0].matchExpressions[0].values: "
            "Required value: must be specified when `operator` is 'In' or 'NotIn'",
            id="in-without-values",
        ),
        pytest.param(
            {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}},
            f"{REQ}.nodeSelectorTerms: Required value: must have at least one node selector term",
            id="no-terms",
        ),
        pytest.param(_preferred(101), f"{PREF}[0].weight: Invalid value: 101: must be in the range 1-100", id="weight"),
    ],
)
def test_added_affinity_is_validated(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        decode_args(NodeAffinityArgs, raw)
    assert str(info.value) == message


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(None, id="none"),
        pytest.param(_required({"key": "a", "operator": "In", "values": ["b"]}), id="required"),
        pytest.param(_preferred(100), id="preferred"),
    ],
)
def test_valid_added_affinity_passes(raw: dict[str, Any] | None) -> None:
    assert isinstance(decode_args(NodeAffinityArgs, raw), NodeAffinityArgs)
