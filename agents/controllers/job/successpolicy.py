"""``spec.successPolicy`` of an Indexed Job, as upstream's ``success_policy.go`` (pure).

The rules are tried in order; the first that the succeeded indexes satisfy ends the Job
early: ``SuccessCriteriaMet`` with reason ``SuccessPolicy`` and message ``Matched rules at
index <i>``, its remaining pods deleted, then ``Complete`` (same reason) once none is
terminating.

=================================  ===================================================
rule                               satisfied when
=================================  ===================================================
``succeededIndexes``               every listed index (below completions) succeeded
``succeededIndexes`` + ``Count``   at least ``succeededCount`` of the listed ones did
``succeededCount``                 at least that many indexes succeeded
=================================  ===================================================

A rule whose ``succeededIndexes`` lists no index below completions never matches; no rule
matches before some index succeeded.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Final

from agents.controllers.job.indexes import parse_intervals
from emulator.base.api.batch import SuccessPolicy

__all__ = ["SUCCESS_POLICY", "match_success_policy"]

SUCCESS_POLICY: Final = "SuccessPolicy"
"""The reason of ``SuccessCriteriaMet`` and ``Complete`` (upstream ``JobReasonSuccessPolicy``)."""


def match_success_policy(policy: SuccessPolicy | None, completions: int, succeeded: Set[int]) -> str | None:
    """Upstream ``matchSuccessPolicy``: the message of the first rule met, else None."""
    if policy is None or not succeeded:
        return None
    for index, rule in enumerate(policy.rules):
        if rule.succeeded_indexes is not None:
            required = parse_intervals(rule.succeeded_indexes, completions)
            if not required:
                continue
            matched = len(required & succeeded)
            if matched >= (len(required) if rule.succeeded_count is None else rule.succeeded_count):
                return f"Matched rules at index {index}"
        elif rule.succeeded_count is not None and len(succeeded) >= rule.succeeded_count:
            return f"Matched rules at index {index}"
    return None
