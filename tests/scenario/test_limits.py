"""The scenario limits (``emulator/app/scenario/limits.py``): exact messages, paths, and the
boundaries on both sides, through the loader; and NaN, which passes every comparison."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Annotated

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.app.scenario import limits
from emulator.app.scenario.loader import ScenarioError, load_scenario_text
from emulator.app.scenario.schema import CreatePods, Scenario
from emulator.cli import main

POD = "{containers: [{name: c, image: i}]}"


def load(text: str) -> Scenario:
    return load_scenario_text(text, "s.yaml", Path("."))


def pods(count: int = 2, extra: str = "") -> str:
    return f"createPods: {{count: {count}, namePrefix: p, template: {{spec: {POD}}}{extra}}}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "settle: 24h0m0.001s",
            's.yaml: settle: expected a duration of at most 24h0m0s, got "24h0m0.001s"',
            id="settle",
        ),
        pytest.param(
            "until: 86401",
            "s.yaml: until: expected a duration of at most 24h0m0s, got 86401",
            id="until-seconds",
        ),
        pytest.param(
            f"steps: [{{at: 25h, {pods()}}}]",
            's.yaml: steps[0].at: expected a duration of at most 24h0m0s, got "25h"',
            id="at",
        ),
        pytest.param(
            "steps: [{sleep: 12h}, {sleep: 12h}, {sleep: 1s}]",
            "s.yaml: steps[2].sleep: the timeline reaches 24h0m1s here, past the limit of 24h0m0s (1 day); "
            "shorten it, or set until to end the run earlier",
            id="horizon-sleeps",
        ),
        pytest.param(
            f"steps: [{{at: 23h, sleep: 1h}}, {{{pods(3, ', ratePerSecond: 0.001')}}}]",
            "s.yaml: steps[1].createPods: the timeline reaches 24h33m20s here, past the limit of 24h0m0s (1 day); "
            "shorten it, or set until to end the run earlier",
            id="horizon-paced-pods",
        ),
        pytest.param(
            f"steps: [{{{pods(2, ', ratePerSecond: 0.00001')}}}]",
            "s.yaml: steps[0].createPods.ratePerSecond: expected at least one pod a day "
            "(a rate >= 1/86400 per second), got 1e-05",
            id="rate",
        ),
        pytest.param(
            "kubelet: {heartbeatInterval: 999ms}",
            "s.yaml: kubelet.heartbeatInterval: expected 0 (off) or a duration >= 1s, got 999ms",
            id="heartbeat",
        ),
        pytest.param(
            "kubelet: {nodeStatusReportFrequency: 1ns}",
            "s.yaml: kubelet.nodeStatusReportFrequency: expected 0 (off) or a duration >= 1s, got 1ns",
            id="status-report",
        ),
        pytest.param(
            "steps: [{fault: {watchCut: {agent: runner, every: 10ms}}}]",
            "s.yaml: steps[0].fault.watchCut.every: expected a duration >= 1s, got 10ms",
            id="watch-cut-every",
        ),
        pytest.param(
            "faults: [{imagePullSlow: {factor: 1000001}}]",
            "s.yaml: faults[0].imagePullSlow.factor: expected a factor of at most 1000000, got 1e+06",
            id="factor",
        ),
        pytest.param(
            "schedulerOptions: {instances: 101}",
            "s.yaml: schedulerOptions.instances: at most 100 scheduler instances in all, got 101",
            id="instances",
        ),
        pytest.param(
            "schedulerOptions: {instances: 50}\nsteps: [{fault: {scheduler: {instances: 51}}}]",
            "s.yaml: steps[0].fault.scheduler.instances: at most 100 scheduler instances in all, got 101 "
            "with the earlier ones",
            id="instances-total",
        ),
        pytest.param(
            "nodes: [{count: 60000, namePrefix: a, template: {}}, {count: 40001, namePrefix: b, template: {}}]",
            "s.yaml: nodes[1].count: at most 100,000 nodes in all, got 100,001",
            id="nodes-total",
        ),
        pytest.param(
            "steps: ["
            + ", ".join([f"{{{pods(1_000_000)}}}, {{delete: {{kind: Pod, selector: ''}}}}"] * 10)
            + f", {{{pods(1)}}}]",
            "s.yaml: steps[20].createPods.count: at most 10,000,000 createPods pods in all, got 10,000,001",
            id="pods-total",
        ),
        pytest.param(
            "latency: {api: {mean: .nan}}",
            "s.yaml: latency.api.mean: expected a finite duration, got NaN",
            id="nan-duration",
        ),
        pytest.param(
            "faults: [{apiError: {probability: .nan}}]",
            "s.yaml: faults[0].apiError.probability: expected a finite number, got NaN",
            id="nan-probability",
        ),
        pytest.param(
            "faults: [{apiError: {probability: -.inf}}]",
            "s.yaml: faults[0].apiError.probability: expected a finite number, got -Infinity",
            id="minus-inf-probability",
        ),
        pytest.param(
            f"steps: [{{{pods(2, ', ratePerSecond: 1' + '0' * 400)}}}]",
            "s.yaml: steps[0].createPods.ratePerSecond: expected a finite number, got 1" + "0" * 400,
            id="int-beyond-float",
        ),
    ],
)
def test_limits_refused_with_path_and_maximum(text: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load(f"name: x\n{text}\n")
    assert re.sub(r"^(\S+?):\d+:\d+: ", r"\1: ", str(info.value)) == message  # the position is pinned elsewhere


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("settle: 24h\nuntil: 86400", id="a-day"),
        pytest.param("steps: [{sleep: 12h}, {sleep: 12h}]", id="horizon-exactly-a-day"),
        pytest.param("until: 10s\nsteps: [{sleep: 24h}, {sleep: 24h}]", id="until-ends-first"),
        pytest.param(f"steps: [{{{pods(2, ', ratePerSecond: 0.0000116')}}}]", id="about-one-a-day"),
        pytest.param("kubelet: {heartbeatInterval: 0, nodeStatusReportFrequency: 0}", id="periods-off"),
        pytest.param("kubelet: {heartbeatInterval: 1s, nodeStatusReportFrequency: 1s}", id="periods-at-minimum"),
        pytest.param("faults: [{watchCut: {agent: runner, every: 1s}}]", id="cut-every-second"),
        pytest.param("faults: [{imagePullSlow: {factor: 1000000}}]", id="factor-max"),
        pytest.param("schedulerOptions: {instances: 99}\nfaults: [{scheduler: {instances: 1}}]", id="instances-100"),
        pytest.param("nodes: [{count: 100000, namePrefix: a, template: {}}]", id="nodes-100000"),
    ],
)
def test_limits_accept_up_to_the_boundary(text: str) -> None:
    load(f"name: x\n{text}\n")


def test_limits_are_what_the_readme_says() -> None:
    """The README's Limits table names these values: change both together."""
    assert limits.MAX_SECONDS == 86400
    assert limits.MIN_PERIOD_SECONDS == 1
    assert limits.MIN_RATE_PER_SECOND == 1 / 86400
    assert limits.MAX_SCHEDULER_INSTANCES == 100
    assert (limits.MAX_GROUP_NODES, limits.MAX_TOTAL_NODES) == (100_000, 100_000)
    assert (limits.MAX_CREATE_PODS, limits.MAX_TOTAL_PODS) == (1_000_000, 10_000_000)
    assert limits.MAX_FACTOR == 1_000_000
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    rows = ("24h (1 day)", "1s", "1 pod a day", "100", "100,000", "1,000,000 / 10,000,000", "1,000,000")
    for row in (*rows, "9223372036854775"):
        assert f"| {row} |" in readme


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_msgspec_meta_alone_does_not_refuse_every_non_finite_float(value: float) -> None:
    """Why the loader checks finiteness itself: ``Meta(ge=0)`` refuses NaN (NaN >= 0 is
    false) but lets infinity through, and ``le`` alone lets NaN through."""
    at_least_zero = Annotated[float, msgspec.Meta(ge=0)]
    at_most_one = Annotated[float, msgspec.Meta(le=1)]
    if math.isnan(value):
        assert math.isnan(msgspec.convert(value, float))
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert(value, at_least_zero)
    else:
        assert msgspec.convert(value, at_least_zero) == value
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert(value, at_most_one)


@pytest.mark.parametrize(
    ("until", "message"),
    [
        pytest.param("25h", "expected a duration of at most 24h0m0s, got '25h'", id="past-a-day"),
        pytest.param(
            "1" + "0" * 309 + "s",
            "durations must be at most 2562047h47m16.854775807s (Go's time.Duration range)",
            id="310-digits",
        ),
    ],
)
def test_run_until_obeys_the_same_cap(capsys: pytest.CaptureFixture[str], until: str, message: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "scenarios/quickstart.yaml", "--until", until])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


FLOAT_FIELDS = [
    pytest.param("faults: [{{apiError: {{probability: {v}}}}}]", id="probability"),
    pytest.param("faults: [{{imagePullSlow: {{factor: {v}}}}}]", id="factor"),
    pytest.param(
        "steps: [{{createPods: {{count: 2, namePrefix: p, ratePerSecond: {v}, "
        "template: {{spec: {{containers: [{{name: c, image: i}}]}}}}}}}}]",
        id="rate",
    ),
    pytest.param("latency: {{api: {{mean: {v}}}}}", id="latency-mean"),
    pytest.param("settle: {v}", id="settle"),
]


@pytest.mark.parametrize("template", FLOAT_FIELDS)
def test_float_field_templates_load_an_ordinary_value(template: str) -> None:
    """The property below is not vacuous: each template loads with an ordinary number."""
    load(f"name: x\n{template.format(v='0.5')}\n")


@pytest.mark.parametrize("template", FLOAT_FIELDS)
@given(value=st.floats(allow_nan=True, allow_infinity=True) | st.integers(min_value=-(10**400), max_value=10**400))
def test_any_number_in_a_float_field_is_refused_or_finite_and_bounded(template: str, value: float) -> None:
    text = (
        repr(value)
        if isinstance(value, int)
        else {"nan": ".nan", "inf": ".inf", "-inf": "-.inf"}.get(repr(value), repr(value))
    )
    if "e" in text and "." not in text:  # YAML 1.1 reads a float without a dot as a string
        text = text.replace("e", ".0e")
    try:
        scenario = load(f"name: x\n{template.format(v=text)}\n")
    except ScenarioError as err:
        path = err.path  # always names the field
    else:
        path = ""
    if path:
        return
    numbers = [scenario.settle, scenario.latency.api.mean]
    for fault in scenario.faults:
        numbers.extend(getattr(fault, name) for name in ("probability", "factor") if hasattr(fault, name))
    numbers.extend(s.rate_per_second for s in scenario.steps if isinstance(s, CreatePods) and s.rate_per_second)
    assert all(n is None or (math.isfinite(n) and n >= 0) for n in numbers)
    assert scenario.settle <= limits.MAX_SECONDS
    assert scenario.latency.api.mean <= limits.MAX_SECONDS
