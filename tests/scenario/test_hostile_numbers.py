"""Hostile numbers through the command line: each file either is refused (exit 2, one
``error:`` line naming the file and the path) or runs to completion, fast.

Regressions from issue 10 (a traceback, a hang, or a NaN accepted) and ~40 more of the same
family: negative and negative-zero durations, huge ints where floats are expected, ``1e400``,
``0x10``, booleans where numbers are expected, floats where counts are expected, quantities
past an int64 milli-value or below a milli, NaN and infinities, periods of a nanosecond.
Each case runs ``emulator.cli.main`` in-process (``validate`` then ``run``) in a thread with
a deadline, so a hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest

from emulator.cli import main

DEADLINE = 60.0
"""Wall seconds a case may take (each takes well under a second when it works)."""

CPU_310 = "1" * 310
HUGE = "1" + "0" * 400
"""An int beyond any float and any int64."""
PAST_INT64 = str(2**63 + 5)


NODE_IMAGE_UINT64_MAX = """name: images
nodes:
  - count: 3
    namePrefix: n
    template:
      status:
        capacity: {cpu: "4", pods: "10"}
        images: [{names: [img], sizeBytes: 18446744073709551615}]
steps:
  - createPods: {count: 3, namePrefix: q, template: {spec: {containers: [{name: c, image: img}]}}}
"""
"""Regression: ImageLocality's scaled size of this image overflowed the NodeTable's int64."""


def pod_spec(field: str) -> str:
    """The base scenario with ``field`` (one line of YAML) added to the pod template's spec."""
    return scenario().replace("spec:\n          containers", f"spec:\n          {field}\n          containers")


def scenario(
    top: str = "",
    *,
    capacity: str = 'cpu: "4", memory: 8Gi, pods: "110"',
    requests: str = "cpu: 100m",
    create: str = "",
    steps: str = "",
) -> str:
    """A small scenario: one node, two pods; each argument replaces or adds one part."""
    kubelet = "" if "kubelet:" in top else "kubelet: {heartbeatInterval: 10s}"
    return f"""name: hostile
{kubelet}
{top}
nodes:
  - count: 1
    namePrefix: n
    template:
      status:
        capacity: {{{capacity}}}
steps:
  - createPods:
      count: 2
      namePrefix: p
{create}
      template:
        spec:
          containers:
            - name: c
              image: img
              resources: {{requests: {{{requests}}}}}
{steps}
"""


REFUSED = [
    # durations and instants
    pytest.param(scenario("settle: 1" + "0" * 309 + "s"), "settle", id="settle-310-digits"),
    pytest.param(scenario("settle: 1" + "0" * 400), "settle", id="settle-huge-int"),
    pytest.param(scenario("settle: -1s"), "settle", id="settle-negative"),
    pytest.param(scenario("settle: -0s"), "settle", id="settle-negative-zero-text"),
    pytest.param(scenario("until: 1.0e+400"), "until", id="until-1e400"),
    pytest.param(scenario("until: .inf"), "until", id="until-inf"),
    pytest.param(scenario("until: .nan"), "until", id="until-nan"),
    pytest.param(scenario("until: true"), "until", id="until-bool"),
    pytest.param(scenario("until: 25h"), "until", id="until-past-a-day"),
    pytest.param(scenario(steps="  - {at: 1.0e+16, sleep: 1s}"), "steps[1].at", id="at-1e16"),
    pytest.param(scenario(steps="  - sleep: 1.0e+300"), "steps[1].sleep", id="sleep-1e300"),
    pytest.param(scenario(steps="  - sleep: 25h"), "steps[1].sleep", id="sleep-past-a-day"),
    pytest.param(scenario(steps="  - sleep: 24h\n  - sleep: 1s"), "steps[2].sleep", id="sleeps-add-up-past-a-day"),
    pytest.param(
        scenario(steps="  - waitFor: {condition: podsRunning, timeout: 1.0e+300}"),
        "steps[1].waitFor.timeout",
        id="timeout-1e300",
    ),
    pytest.param(scenario("latency: {api: {mean: 25h}}"), "latency.api.mean", id="latency-past-a-day"),
    pytest.param(scenario("latency: {watch: {jitter: .nan}}"), "latency.watch.jitter", id="jitter-nan"),
    pytest.param(
        scenario("schedulerOptions: {cycleCost: {perNode: 1.0e+300}}"),
        "schedulerOptions.cycleCost.perNode",
        id="cycle-cost-1e300",
    ),
    pytest.param(scenario(create="      runDuration: 25h"), "steps[0].createPods.runDuration", id="run-duration"),
    pytest.param(
        "name: a\nobjects:\n  - {apiVersion: v1, kind: Pod, metadata: {name: p, annotations: "
        '{emulator.k8s.io/run-duration: "25h"}}, spec: {containers: [{name: c, image: i}]}}\n',
        'objects[0].metadata.annotations["emulator.k8s.io/run-duration"]',
        id="run-duration-annotation",
    ),
    # periods
    pytest.param(scenario("kubelet: {heartbeatInterval: 1ns}"), "kubelet.heartbeatInterval", id="heartbeat-1ns"),
    pytest.param(
        scenario("kubelet: {nodeStatusReportFrequency: 100ms}"),
        "kubelet.nodeStatusReportFrequency",
        id="status-report-100ms",
    ),
    pytest.param(
        scenario("faults: [{watchCut: {agent: runner, every: 1ns}}]"), "faults[0].watchCut.every", id="cut-every-1ns"
    ),
    # rates, probabilities, factors
    pytest.param(scenario(create="      ratePerSecond: 1.0e-300"), "ratePerSecond", id="rate-1e-300"),
    pytest.param(scenario(create="      ratePerSecond: .nan"), "ratePerSecond", id="rate-nan"),
    pytest.param(scenario(create="      ratePerSecond: -.inf"), "ratePerSecond", id="rate-minus-inf"),
    pytest.param(scenario(create="      ratePerSecond: 1" + "0" * 400), "ratePerSecond", id="rate-huge-int"),
    pytest.param(scenario(create="      ratePerSecond: true"), "ratePerSecond", id="rate-bool"),
    pytest.param(
        scenario("faults: [{apiError: {probability: .nan}}]"), "faults[0].apiError.probability", id="probability-nan"
    ),
    pytest.param(
        scenario("faults: [{apiError: {probability: 1e400}}]"), "faults[0].apiError.probability", id="probability-str"
    ),
    pytest.param(
        scenario("faults: [{apiError: {probability: true}}]"), "faults[0].apiError.probability", id="probability-bool"
    ),
    pytest.param(
        scenario("faults: [{imagePullSlow: {factor: .nan}}]"), "faults[0].imagePullSlow.factor", id="factor-nan"
    ),
    pytest.param(
        scenario("faults: [{imagePullSlow: {factor: 1.0e+300}}]"), "faults[0].imagePullSlow.factor", id="factor-huge"
    ),
    # counts and sizes
    pytest.param(scenario("schedulerOptions: {instances: 1000000}"), "schedulerOptions.instances", id="instances-1e6"),
    pytest.param(
        scenario("schedulerOptions: {instances: 60}\nfaults: [{scheduler: {instances: 41}}]"),
        "faults[0].scheduler.instances",
        id="instances-total",
    ),
    pytest.param(scenario(create="", steps="").replace("count: 2", "count: 1.0e+6"), "count", id="count-float"),
    pytest.param(scenario().replace("count: 2", "count: true"), "count", id="count-bool"),
    pytest.param(scenario().replace("count: 2", "count: -1"), "count", id="count-negative"),
    pytest.param(
        scenario(steps="  - createNodes: {count: 100000, namePrefix: m, template: {}}"),
        "steps[1].createNodes.count",
        id="total-nodes",
    ),
    # quantities
    pytest.param(scenario(capacity='cpu: "1e16"'), "status.capacity.cpu", id="cpu-1e16"),
    pytest.param(scenario(capacity="memory: 8Ei"), "status.capacity.memory", id="memory-8Ei"),
    pytest.param(scenario(capacity=f'cpu: "{CPU_310}"'), "status.capacity.cpu", id="cpu-310-digits"),
    pytest.param(scenario(capacity="memory: .nan"), "status.capacity.memory", id="memory-nan"),
    pytest.param(scenario(capacity="memory: true"), "status.capacity.memory", id="memory-bool"),
    pytest.param(scenario(requests='cpu: "-1"'), "resources.requests.cpu", id="request-negative"),
    pytest.param(scenario(requests='cpu: "1e400"'), "resources.requests.cpu", id="request-exponent-400"),
    pytest.param(scenario(requests="memory: 8Ei"), "resources.requests.memory", id="request-8Ei"),
    pytest.param(
        scenario(capacity=f'cpu: "4", pods: "{PAST_INT64}"'), "status.capacity.pods", id="pods-capacity-past-int64"
    ),
    pytest.param(scenario(f"images: {{img: {HUGE}}}"), "images.img", id="image-size-huge-int"),
    pytest.param(scenario("images: {img: 8Ei}"), "images.img", id="image-size-8Ei"),
    pytest.param(scenario("kubelet: {defaultImageSize: 9Pi}"), "kubelet.defaultImageSize", id="default-image-9Pi"),
    # ints past int64 in API objects
    pytest.param(pod_spec(f"priority: {PAST_INT64}"), "spec.priority", id="priority-past-int64"),
    pytest.param(
        scenario().replace("image: img", f"image: img\n              ports: [{{containerPort: {PAST_INT64}}}]"),
        "ports[0].containerPort",
        id="port-past-int64",
    ),
    pytest.param(
        scenario().replace("namePrefix: n\n", f"namePrefix: n\n    labelValues: {{zone: [{HUGE}]}}\n"),
        "nodes[0].labelValues.zone[0]",
        id="label-value-huge-int",
    ),
]


RUNS = [
    pytest.param(scenario("settle: -0"), id="settle-negative-zero-int"),
    pytest.param(scenario("settle: 0"), id="settle-zero"),
    pytest.param(scenario("until: 24h"), id="until-a-day"),
    pytest.param(scenario("until: 10s", steps="  - sleep: 24h\n  - sleep: 24h"), id="until-ends-long-sleeps"),
    pytest.param(scenario("kubelet: {heartbeatInterval: 0}", steps="  - sleep: 24h"), id="sleep-a-day"),
    pytest.param(scenario("kubelet: {heartbeatInterval: 1s}\nuntil: 1m"), id="heartbeat-1s"),
    pytest.param(scenario(create="      ratePerSecond: 1.0e+300"), id="rate-1e300"),
    pytest.param(scenario(create="      ratePerSecond: 0x10"), id="rate-hex-int"),
    pytest.param(scenario().replace("count: 2", "count: 0x2"), id="count-hex"),
    pytest.param(scenario("seed: 1" + "0" * 30), id="seed-huge"),
    pytest.param(scenario("faults: [{apiError: {probability: 0, count: 1" + "0" * 30 + "}}]"), id="fault-count-huge"),
    pytest.param(scenario("faults: [{imagePullSlow: {factor: 1000000}}]"), id="factor-max"),
    pytest.param(scenario(capacity='cpu: "9223372036854775", memory: 8Pi, pods: "110"'), id="capacity-max"),
    pytest.param(scenario(capacity="cpu: 0x10, memory: 1Gi, pods: 10"), id="capacity-hex-int"),
    pytest.param(scenario(requests='cpu: "1e-30"'), id="request-1e-30"),
    pytest.param(scenario(requests='cpu: "0.0000001m"'), id="request-sub-milli"),
    pytest.param(scenario("kubelet: {defaultImageSize: 8Pi, imagePullBandwidth: 1}"), id="slow-huge-pull"),
    pytest.param(
        NODE_IMAGE_UINT64_MAX,
        id="node-image-size-uint64-max",
    ),
    pytest.param(scenario("kubelet: {imagePullBandwidth: 8Pi}"), id="bandwidth-8Pi"),
    pytest.param(scenario("images: {img: 8Pi}\nkubelet: {imagePullBandwidth: 0}"), id="image-size-8Pi"),
    pytest.param(scenario(f"seed: {HUGE}"), id="seed-huge-int"),
    pytest.param(scenario("seed: -5"), id="seed-negative"),
    pytest.param(scenario(f"expect: [{{topologySpread: {{topologyKey: zone, maxSkew: {HUGE}}}}}]"), id="max-skew-huge"),
    pytest.param(scenario(f"expect: [{{maxPodsPerNode: {{count: {HUGE}}}}}]"), id="max-pods-huge"),
    pytest.param(scenario(f"expect: [{{podsRunning: {{count: {HUGE}}}}}]"), id="pod-count-huge"),
    pytest.param(
        scenario(steps=f"  - waitFor: {{condition: podsRunning, count: {HUGE}, timeout: 10s}}"), id="wait-count-huge"
    ),
    pytest.param(scenario(f"faults: [{{apiError: {{probability: 0, count: {HUGE}}}}}]"), id="fault-count-huge-int"),
    pytest.param(scenario(capacity='cpu: "4", pods: "9223372036854775"'), id="pods-capacity-max"),
    pytest.param(
        pod_spec(
            f"topologySpreadConstraints: [{{maxSkew: {PAST_INT64}, topologyKey: zone, "
            "whenUnsatisfiable: DoNotSchedule, labelSelector: {}}]"
        ),
        id="spread-max-skew-past-int64",
    ),
    pytest.param(
        pod_spec(f"terminationGracePeriodSeconds: {PAST_INT64}") + "  - delete: {kind: Pod, selector: ''}\n",
        id="grace-period-past-int64",
    ),
]


def _in_thread(argv: list[str]) -> tuple[int | None, float]:
    """``main(argv)`` in a daemon thread; (exit status or None if it hung, wall seconds)."""
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(main(argv)), daemon=True)
    t0 = time.perf_counter()
    thread.start()
    thread.join(DEADLINE)
    return (result[0] if result else None), time.perf_counter() - t0


@pytest.mark.real_time
@pytest.mark.parametrize(("text", "path"), REFUSED)
@pytest.mark.parametrize("command", ["validate", "run"])
def test_refused_with_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, text: str, path: str
) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(text)
    status, _ = _in_thread([command, str(f)])
    err = capsys.readouterr().err
    assert status == 2, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert re.match(rf"error: {re.escape(str(f))}(:\d+:\d+)?: ", lines[0]), err
    assert path in lines[0], err


@pytest.mark.real_time
@pytest.mark.slow
@pytest.mark.parametrize("text", RUNS)
def test_accepted_and_runs_to_completion(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(text)
    assert main(["validate", str(f)]) == 0, capsys.readouterr().err
    status, seconds = _in_thread(["run", str(f), "--output", "json"])
    err = capsys.readouterr().err
    assert status in (0, 1), err
    assert seconds < DEADLINE
    assert "Traceback" not in err
