"""A Job's per-index and policy fields as the API server validates them (upstream
``pkg/apis/batch/validation/validation.go`` ``validateJobSpec``, ``validatePodFailurePolicyRule``,
``validateSuccessPolicy``, ``validateIndexesFormat``): one error, upstream's path and message
(``jobvalidation``)."""

from __future__ import annotations

from typing import Any

import pytest

from emulator.base.api.codec import ManifestError, load_manifests
from emulator.base.api.jobvalidation import indexes_format
from tests.api.test_workload_validation import _doc

INDEXED = {"completionMode": "Indexed", "completions": 4}
FAIL_INDEX = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [42]}}]}


@pytest.mark.parametrize(
    ("spec", "path", "detail"),
    [
        pytest.param(
            {"backoffLimitPerIndex": 1},
            "spec.backoffLimitPerIndex",
            "Invalid value: 1: requires indexed completion mode",
            id="per-index-needs-indexed",
        ),
        pytest.param(
            {**INDEXED, "backoffLimitPerIndex": -1},
            "spec.backoffLimitPerIndex",
            "Invalid value: -1: must be greater than or equal to 0",
            id="per-index-negative",
        ),
        pytest.param(
            {**INDEXED, "maxFailedIndexes": 1},
            "spec.backoffLimitPerIndex",
            "Required value: when maxFailedIndexes is specified",
            id="max-failed-needs-per-index",
        ),
        pytest.param(
            {**INDEXED, "backoffLimitPerIndex": 1, "maxFailedIndexes": 5},
            "spec.maxFailedIndexes",
            "Invalid value: 5: must be less than or equal to completions",
            id="max-failed-above-completions",
        ),
        pytest.param(
            {**INDEXED, "parallelism": 100_001},
            "spec.parallelism",
            "Invalid value: 100001: must be less than or equal to 100000 when completion mode is Indexed",
            id="indexed-parallelism-cap",
        ),
        pytest.param(
            {**INDEXED, "podFailurePolicy": FAIL_INDEX},
            "spec.podFailurePolicy.rules[0].action",
            'Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set',
            id="fail-index-needs-per-index",
        ),
        pytest.param(
            {"podFailurePolicy": {"rules": [{"action": "FailPod", "onExitCodes": {"operator": "In", "values": [1]}}]}},
            "spec.podFailurePolicy.rules[0].action",
            'Unsupported value: "FailPod": supported values: "Count", "FailIndex", "FailJob", "Ignore"',
            id="unknown-action",
        ),
        pytest.param(
            {"successPolicy": {"rules": [{"succeededCount": 1}]}},
            "spec.successPolicy",
            'Invalid value: {"rules":[{"succeededCount":1}]}: requires indexed completion mode',
            id="success-policy-needs-indexed",
        ),
        pytest.param(
            {**INDEXED, "successPolicy": {"rules": []}},
            "spec.successPolicy.rules",
            "Required value: at least one rules must be specified when the successPolicy is specified",
            id="success-policy-no-rules",
        ),
        pytest.param(
            {**INDEXED, "successPolicy": {"rules": [{}]}},
            "spec.successPolicy.rules[0]",
            "Required value: at least one of succeededCount or succeededIndexes must be specified",
            id="success-rule-empty",
        ),
        pytest.param(
            {**INDEXED, "successPolicy": {"rules": [{"succeededIndexes": "0-4"}]}},
            "spec.successPolicy.rules[0].succeededIndexes",
            'Invalid value: "0-4": error parsing succeededIndexes: too large index: "4"',
            id="success-indexes-past-completions",
        ),
        pytest.param(
            {**INDEXED, "successPolicy": {"rules": [{"succeededCount": 5}]}},
            "spec.successPolicy.rules[0].succeededCount",
            "Invalid value: 5: must be less than or equal to 4 (the number of specified completions)",
            id="success-count-above-completions",
        ),
        pytest.param(
            {**INDEXED, "successPolicy": {"rules": [{"succeededIndexes": "1,3", "succeededCount": 3}]}},
            "spec.successPolicy.rules[0].succeededCount",
            "Invalid value: 3: must be less than or equal to 2 "
            "(the number of indexes in the specified succeededIndexes field)",
            id="success-count-above-listed",
        ),
    ],
)
def test_refused(spec: dict[str, Any], path: str, detail: str) -> None:
    with pytest.raises(ManifestError) as err:
        load_manifests(_doc("Job", spec), source="m.yaml")
    assert (err.value.path, err.value.detail) == (path, detail)


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({**INDEXED, "backoffLimitPerIndex": 1, "maxFailedIndexes": 4}, id="per-index"),
        pytest.param({**INDEXED, "backoffLimitPerIndex": 0, "podFailurePolicy": FAIL_INDEX}, id="fail-index"),
        pytest.param(
            {**INDEXED, "successPolicy": {"rules": [{"succeededIndexes": "0,2-3", "succeededCount": 2}]}},
            id="success-policy",
        ),
    ],
)
def test_accepted(spec: dict[str, Any]) -> None:
    (obj,) = load_manifests(_doc("Job", spec), source="m.yaml")
    assert obj.kind == "Job"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("", (0, None), id="empty"),
        pytest.param("0,2-4,6", (5, None), id="total"),
        pytest.param(
            "1-2-3",
            (
                0,
                'the fragment "1-2-3" violates the requirement that an index interval '
                "can have at most two parts separated by '-'",
            ),
            id="three-parts",
        ),
        pytest.param("a", (0, 'cannot convert string to integer for index: "a"'), id="not-a-number"),
        pytest.param("3,1", (0, "non-increasing order, previous: 3, current: 1"), id="decreasing"),
        pytest.param("2-2", (0, "non-increasing order, previous: 2, current: 2"), id="empty-interval"),
        pytest.param("7", (0, 'too large index: "7"'), id="too-large"),
    ],
)
def test_indexes_format(text: str, want: tuple[int, str | None]) -> None:
    assert indexes_format(text, 7) == want
