"""The ``load`` section: what the pods use, for the resource metrics API and the HPA.

.. code-block:: yaml

    load:
      - selector: app=web                 # the pods of one namespace (default: default)
        namespace: default
        requestsPerSecond: 200            # a constant; or
        # steps: [{at: 0s, requestsPerSecond: 50}, {at: 2m, requestsPerSecond: 400}]
        # daily: [20, 15, 10, 10, 20, 60, 150, 300, 400, 420, 400, 380,    # evenly spaced over 24 h
        #         390, 400, 380, 360, 380, 420, 400, 300, 200, 120, 60, 30]  # from 00:00, interpolated
        # dayStart: 8h                    # the time of day at clock time 0 (with daily)
        perRequest: {cpu: 2m, memory: 256Ki}   # usage per request per second
        base: {cpu: 20m, memory: 64Mi}         # usage of every running pod of the selector

The traffic is spread evenly over the selector's Running and Ready pods; a pod's usage is its
``emulator.k8s.io/usage`` annotation (else the bases of the entries that select it) plus its
share of each entry's traffic (``emulator.base.api.load``). ``load_problems`` checks what spans
fields (exactly one curve, steps in time order); ``load_rules`` builds the model's rules.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

import msgspec

from emulator.app.scenario.schema.base import Duration, Spec
from emulator.base.api.core import LabelSelector
from emulator.base.api.labelselector import compile_selector
from emulator.base.api.load import LoadCurve, LoadRule

__all__ = ["LoadSpec", "LoadStep", "MilliQuantity", "load_problems", "load_rules"]

MilliQuantity = Annotated[int, msgspec.Meta(ge=0, extra={"format": "milli"})]
"""A quantity in milli-units ("250m" cpu is 250; "1Mi" memory is 1048576000)."""
Rate = Annotated[float, msgspec.Meta(ge=0, le=1e9)]


class LoadStep(Spec, frozen=True, kw_only=True):
    at: Duration
    requests_per_second: Rate


class LoadSpec(Spec, frozen=True, kw_only=True):
    selector: LabelSelector
    namespace: str = "default"
    requests_per_second: Rate | None = None
    steps: list[LoadStep] = []
    daily: list[Rate] = []
    day_start: Duration = 0.0
    per_request: dict[str, MilliQuantity] = {}
    base: dict[str, MilliQuantity] = {}


def load_problems(load: list[LoadSpec]) -> Iterator[tuple[str, str]]:
    """``(path, detail)`` for what spans an entry's fields, in file order."""
    for i, spec in enumerate(load):
        path = f"load[{i}]"
        given = [name for name, v in (("requestsPerSecond", spec.requests_per_second is not None),
                                      ("steps", bool(spec.steps)), ("daily", bool(spec.daily))) if v]  # fmt: skip
        if len(given) != 1:
            got = ", ".join(given) if given else "none"
            yield path, f"expected exactly one of requestsPerSecond, steps or daily, got {got}"
        for j in range(1, len(spec.steps)):
            if spec.steps[j].at < spec.steps[j - 1].at:
                yield f"{path}.steps[{j}].at", "expected steps in time order"


def load_rules(load: list[LoadSpec]) -> list[LoadRule]:
    return [
        LoadRule(
            namespace=spec.namespace,
            selector=compile_selector(spec.selector),
            curve=LoadCurve(
                constant=spec.requests_per_second,
                steps=tuple((s.at, s.requests_per_second) for s in spec.steps),
                daily=tuple(spec.daily),
                day_offset=spec.day_start,
            ),
            per_request={k: float(v) for k, v in spec.per_request.items()},
            base=dict(spec.base),
        )
        for spec in load
    ]
