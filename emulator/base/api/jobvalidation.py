"""The API server's checks of a Job spec's per-index and policy fields (upstream
``pkg/apis/batch/validation/validation.go`` ``validateJobSpec``, ``validatePodFailurePolicyRule``,
``validateSuccessPolicy``, ``validateIndexesFormat``), each problem as ``(path, detail)`` with
upstream's path and wording; ``workloadvalidation`` calls them in upstream's order.

=========================  ===========================================================
field                      checks
=========================  ===========================================================
backoffLimitPerIndex       ≥ 0; Indexed only
maxFailedIndexes           ≥ 0; needs backoffLimitPerIndex; Indexed only; ≤ completions
                           and ≤ 100000 (≤ 10000 when completions > 100000, where it is
                           required and parallelism ≤ 10000)
parallelism                ≤ 100000 for an Indexed Job
podFailurePolicy           ≤ 20 rules; each action one of Count, FailIndex, FailJob,
                           Ignore, FailIndex only with backoffLimitPerIndex
successPolicy              Indexed only; 1 to 20 rules, each with succeededIndexes
                           (well-formed, ordered, below completions) and/or
                           succeededCount (≥ 0, ≤ completions, ≤ the indexes listed)
=========================  ===========================================================

Values that upstream prints with Go's ``%v`` are printed as such for integers and quoted
strings; the successPolicy struct as JSON, as ``workloadvalidation`` prints structs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

import msgspec

from emulator.base.api.batch import JobSpec
from emulator.base.api.labels import go_quote

__all__ = ["index_count_problems", "indexes_format", "policy_problems"]

Problem = tuple[str, str]

MAX_PARALLELISM_INDEXED: Final = 100_000
MAX_FAILED_INDEXES: Final = 100_000
COMPLETIONS_SOFT_LIMIT: Final = 100_000
PARALLELISM_HIGH_COMPLETIONS: Final = 10_000
MAX_FAILED_INDEXES_HIGH_COMPLETIONS: Final = 10_000
MAX_POD_FAILURE_POLICY_RULES: Final = 20
MAX_SUCCESS_POLICY_RULES: Final = 20
MAX_SUCCEEDED_INDEXES_BYTES: Final = 64 * 1024
ACTIONS: Final = ("Count", "FailIndex", "FailJob", "Ignore")
_INT: Final = re.compile(r"[+-]?[0-9]+")
_JSON: Final = msgspec.json.Encoder()


def _indexed(spec: JobSpec) -> bool:
    return spec.completion_mode == "Indexed"


def index_count_problems(spec: JobSpec, path: str) -> Iterator[Problem]:
    """``backoffLimitPerIndex`` and ``maxFailedIndexes`` alone (before completionMode)."""
    per_index, max_failed = spec.backoff_limit_per_index, spec.max_failed_indexes
    if per_index is not None and per_index < 0:
        yield f"{path}.backoffLimitPerIndex", f"Invalid value: {per_index}: must be greater than or equal to 0"
    if max_failed is not None:
        if max_failed < 0:
            yield f"{path}.maxFailedIndexes", f"Invalid value: {max_failed}: must be greater than or equal to 0"
        if per_index is None:
            yield f"{path}.backoffLimitPerIndex", "Required value: when maxFailedIndexes is specified"


def _indexed_problems(spec: JobSpec, path: str) -> Iterator[Problem]:
    """The completionMode-dependent checks of ``validateJobSpec``."""
    completions, parallelism, max_failed = spec.completions, spec.parallelism, spec.max_failed_indexes
    if not _indexed(spec):
        for field, value in (("backoffLimitPerIndex", spec.backoff_limit_per_index), ("maxFailedIndexes", max_failed)):
            if value is not None:
                yield f"{path}.{field}", f"Invalid value: {value}: requires indexed completion mode"
        return
    if parallelism is not None and parallelism > MAX_PARALLELISM_INDEXED:
        detail = f"must be less than or equal to {MAX_PARALLELISM_INDEXED} when completion mode is Indexed"
        yield f"{path}.parallelism", f"Invalid value: {parallelism}: {detail}"
    if completions is not None and max_failed is not None and max_failed > completions:
        yield f"{path}.maxFailedIndexes", f"Invalid value: {max_failed}: must be less than or equal to completions"
    if max_failed is not None and max_failed > MAX_FAILED_INDEXES:
        yield (
            f"{path}.maxFailedIndexes",
            f"Invalid value: {max_failed}: must be less than or equal to {MAX_FAILED_INDEXES}",
        )
    if completions is not None and completions > COMPLETIONS_SOFT_LIMIT and spec.backoff_limit_per_index is not None:
        high = f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
        if max_failed is None:
            yield (
                f"{path}.maxFailedIndexes",
                f"Required value: must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}",
            )
        if parallelism is not None and parallelism > PARALLELISM_HIGH_COMPLETIONS:
            detail = f"must be less than or equal to {PARALLELISM_HIGH_COMPLETIONS} {high}"
            yield f"{path}.parallelism", f"Invalid value: {parallelism}: {detail}"
        if max_failed is not None and max_failed > MAX_FAILED_INDEXES_HIGH_COMPLETIONS:
            detail = f"must be less than or equal to {MAX_FAILED_INDEXES_HIGH_COMPLETIONS} {high}"
            yield f"{path}.maxFailedIndexes", f"Invalid value: {max_failed}: {detail}"


def indexes_format(text: str, completions: int) -> tuple[int, str | None]:
    """Upstream ``validateIndexesFormat``: (how many indexes ``text`` lists, the error or None)."""
    if not text:
        return 0, None
    last: int | None = None
    total = 0
    for part in text.split(","):
        limits = part.split("-")
        if len(limits) > 2:
            rule = "violates the requirement that an index interval can have at most two parts separated by '-'"
            return 0, f"the fragment {go_quote(part)} {rule}"
        values: list[int] = []
        for raw in limits:
            if not _INT.fullmatch(raw):
                return 0, f"cannot convert string to integer for index: {go_quote(raw)}"
            value = int(raw)
            if value >= completions:
                return 0, f"too large index: {go_quote(raw)}"
            if last is not None and last >= value:
                return 0, f"non-increasing order, previous: {last}, current: {value}"
            last = value
            values.append(value)
        total += values[-1] - values[0] + 1
    return total, None


def _success_policy_problems(spec: JobSpec, path: str) -> Iterator[Problem]:
    policy = spec.success_policy
    if policy is None:
        return
    if not _indexed(spec):
        yield path, f"Invalid value: {_JSON.encode(policy).decode()}: requires indexed completion mode"
        return
    rules_path = f"{path}.rules"
    if not policy.rules:
        yield rules_path, "Required value: at least one rules must be specified when the successPolicy is specified"
    if len(policy.rules) > MAX_SUCCESS_POLICY_RULES:
        yield rules_path, f"Too many: {len(policy.rules)}: must have at most {MAX_SUCCESS_POLICY_RULES} items"
    completions = spec.completions or 0
    for i, rule in enumerate(policy.rules):
        at = f"{rules_path}[{i}]"
        if rule.succeeded_count is None and rule.succeeded_indexes is None:
            yield at, "Required value: at least one of succeededCount or succeededIndexes must be specified"
        total = 0
        if rule.succeeded_indexes is not None:
            text = rule.succeeded_indexes
            if len(text.encode()) > MAX_SUCCEEDED_INDEXES_BYTES:
                yield f"{at}.succeededIndexes", f"Too long: may not be more than {MAX_SUCCEEDED_INDEXES_BYTES} bytes"
            total, error = indexes_format(text, completions)
            if error is not None:
                detail = f"error parsing succeededIndexes: {error}"
                yield f"{at}.succeededIndexes", f"Invalid value: {go_quote(text)}: {detail}"
        count = rule.succeeded_count
        if count is not None:
            count_path = f"{at}.succeededCount"
            if count < 0:
                yield count_path, f"Invalid value: {count}: must be greater than or equal to 0"
            if count > completions:
                detail = f"must be less than or equal to {completions} (the number of specified completions)"
                yield count_path, f"Invalid value: {count}: {detail}"
            if rule.succeeded_indexes is not None and count > total:
                listed = "(the number of indexes in the specified succeededIndexes field)"
                detail = f"must be less than or equal to {total} {listed}"
                yield count_path, f"Invalid value: {count}: {detail}"


def policy_problems(spec: JobSpec, path: str) -> Iterator[Problem]:
    """The completionMode-dependent checks, then ``podFailurePolicy``'s rule actions and
    ``successPolicy`` (after completionMode, before the template)."""
    yield from _indexed_problems(spec, path)
    policy = spec.pod_failure_policy
    if policy is not None:
        rules_path = f"{path}.podFailurePolicy.rules"
        if len(policy.rules) > MAX_POD_FAILURE_POLICY_RULES:
            yield rules_path, f"Too many: {len(policy.rules)}: must have at most {MAX_POD_FAILURE_POLICY_RULES} items"
        for i, rule in enumerate(policy.rules):
            at = f"{rules_path}[{i}].action"
            if rule.action == "":
                yield at, "Required value: valid values: " + go_quote_list(ACTIONS)
            elif rule.action == "FailIndex":
                if spec.backoff_limit_per_index is None:
                    yield at, 'Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set'
            elif rule.action not in ACTIONS:
                yield (
                    at,
                    f"Unsupported value: {go_quote(rule.action)}: supported values: "
                    + ", ".join(go_quote(a) for a in ACTIONS),
                )
    yield from _success_policy_problems(spec, f"{path}.successPolicy")


def go_quote_list(values: tuple[str, ...]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(go_quote(v) for v in values) + "]"
