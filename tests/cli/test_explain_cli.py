"""``explain`` on the command line (``emulator.app.commands.explain``): manifests in, one scheduling
cycle out — the pod-selection rules, PriorityClasses, profiles, the JSON shape, the text
table, and one-line errors for bad input."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest

from emulator.app.commands import explain as explain_cli
from emulator.app.commands.arguments import add_explain
from emulator.app.commands.explain import ExplainError

NODES = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {zone: a}}
status: {capacity: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {zone: b}}
spec: {taints: [{key: dedicated, value: infra, effect: NoSchedule}]}
status: {capacity: {cpu: "8", memory: 16Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n3}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "10"}}
"""

TAINT = "node(s) had untolerated taint(s)"


def pod_yaml(name: str, cpu: str = "1", **spec: Any) -> str:
    fields = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}], **spec}
    status = fields.pop("status", None)
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": fields}
    if status:
        doc["status"] = status
    return "---\n" + json.dumps(doc) + "\n"


def write(tmp_path: Path, name: str, *parts: str) -> Path:
    path = tmp_path / name
    path.write_text("".join(parts), encoding="utf-8")
    return path


def explain(*argv: str | Path) -> int:
    parser = argparse.ArgumentParser(prog="python -m emulator")
    add_explain(parser.add_subparsers(dest="command", required=True))
    return explain_cli.run(parser.parse_args(["explain", *map(str, argv)]))


def explain_json(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> dict[str, Any]:
    assert explain(*argv, "--output", "json") == 0
    out = capsys.readouterr().out
    doc: dict[str, Any] = json.loads(out)
    return doc


# --- JSON ------------------------------------------------------------------------------------


def test_json_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write(tmp_path, "c.yaml", NODES, pod_yaml("web", cpu="3"))
    doc = explain_json(capsys, f)
    assert list(doc) == ["pod", "profile", "nodes", "selected", "message", "preemption"]
    assert (doc["pod"], doc["profile"], doc["selected"], doc["message"], doc["preemption"]) == (
        "default/web",
        "default-scheduler",
        "n3",
        None,
        None,
    )
    assert list(doc["nodes"]) == ["n3", "n1", "n2"]  # best first: the selected, then the infeasible ones
    n3, n1, n2 = doc["nodes"]["n3"], doc["nodes"]["n1"], doc["nodes"]["n2"]
    assert list(n3) == ["filter", "feasible", "score", "total"]
    assert n3["feasible"] is True
    for result in n3["filter"].values():
        assert set(result) == {"code", "reasons"}
        assert result["code"] in ("Success", "Skip")
    assert n3["total"] == sum(s["weighted"] for s in n3["score"].values())
    for s in n3["score"].values():
        assert list(s) == ["raw", "normalized", "weighted"]
        assert all(isinstance(v, int) for v in s.values())
    assert n3["score"]["TaintToleration"] == {"raw": 0, "normalized": 100, "weighted": 300}
    assert list(n1) == ["filter", "feasible"]  # no score for a node that failed a filter
    assert n1["filter"]["NodeResourcesFit"] == {"code": "UnschedulableAndUnresolvable", "reasons": ["Insufficient cpu"]}
    assert n2["filter"]["TaintToleration"] == {"code": "UnschedulableAndUnresolvable", "reasons": [TAINT]}
    assert n2["filter"]["NodeResourcesFit"]["code"] == "Success"  # every filter runs


def test_failure_message_and_no_preemption(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write(tmp_path, "c.yaml", NODES, pod_yaml("huge", cpu="16"))
    doc = explain_json(capsys, f)
    assert doc["selected"] is None
    assert doc["message"] == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    assert doc["preemption"] is None


# --- which pod ----------------------------------------------------------------------------------


def test_the_only_pod_without_a_node_name_is_explained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write(tmp_path, "c.yaml", NODES, pod_yaml("running", cpu="3", nodeName="n3"), pod_yaml("new", cpu="2"))
    doc = explain_json(capsys, f)
    assert doc["pod"] == "default/new"
    # the running pod takes 3 of n3's 4 cpus
    assert doc["nodes"]["n3"]["filter"]["NodeResourcesFit"] == {
        "code": "Unschedulable",
        "reasons": ["Insufficient cpu"],
    }
    assert doc["selected"] == "n1"


def test_pod_option_picks_one_of_several_pending_pods_across_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = write(tmp_path, "nodes.yaml", NODES)
    pods = write(tmp_path, "pods.yaml", pod_yaml("a"), pod_yaml("b", cpu="3"))
    doc = explain_json(capsys, nodes, pods, "--pod", "default/b")
    assert doc["pod"] == "default/b"
    assert doc["selected"] == "n3"
    assert explain_json(capsys, nodes, pods, "--pod", "a")["pod"] == "default/a"  # namespace defaults


def test_a_pod_with_node_name_given_by_pod_is_scheduled_with_node_name_filtering(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = write(tmp_path, "c.yaml", NODES, pod_yaml("pinned", cpu="1500m", nodeName="n1"))
    doc = explain_json(capsys, f, "--pod", "default/pinned")
    for other in ("n2", "n3"):
        assert doc["nodes"][other]["filter"]["NodeName"] == {
            "code": "UnschedulableAndUnresolvable",
            "reasons": ["node(s) didn't match the requested node name"],
        }
    # not counted as running on n1 (it would not fit next to itself on 2 cpus)
    assert doc["nodes"]["n1"]["feasible"] is True
    assert doc["selected"] == "n1"


def test_pending_pods_with_a_nominated_node_count_as_nominated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pc = "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n"
    nominated = pod_yaml("waiting", cpu="3", priorityClassName="high", status={"nominatedNodeName": "n3"})
    f = write(tmp_path, "c.yaml", NODES, pc, nominated, pod_yaml("new", cpu="2"))
    doc = explain_json(capsys, f, "--pod", "default/new")
    assert doc["nodes"]["n3"]["filter"]["NodeResourcesFit"]["code"] == "Unschedulable"
    assert doc["selected"] == "n1"


# --- priority and preemption --------------------------------------------------------------------

PRIORITY_CLASSES = """\
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: -10
globalDefault: true
"""


@pytest.mark.parametrize(
    ("extra", "preemption", "message"),
    [
        pytest.param(
            {"priorityClassName": "high"},
            {"nominatedNode": "n3", "victims": ["default/r3"]},
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.",
            id="higher-class-preempts",
        ),
        pytest.param(
            {},
            None,
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
            "no new claims to deallocate, preemption: 0/3 nodes are available: "
            "1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.",
            id="global-default-class-equal-priority-no-victims",
        ),
    ],
)
def test_priority_classes_are_honoured(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: dict[str, Any],
    preemption: dict[str, Any] | None,
    message: str,
) -> None:
    running = pod_yaml("r1", cpu="1500m", nodeName="n1") + pod_yaml("r3", cpu="3", nodeName="n3")
    f = write(tmp_path, "c.yaml", NODES, PRIORITY_CLASSES, running, pod_yaml("p", cpu="2", **extra))
    doc = explain_json(capsys, f)
    assert (doc["selected"], doc["message"], doc["preemption"]) == (None, message, preemption)


# --- profiles -------------------------------------------------------------------------------------

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: ignore-taints
  plugins:
    multiPoint:
      disabled: [{name: TaintToleration}]
"""


@pytest.mark.parametrize("where", [pytest.param("in-manifests", id="in-manifests"), pytest.param("flag", id="flag")])
def test_the_profile_is_chosen_by_scheduler_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    pods = pod_yaml("p", cpu="5", schedulerName="ignore-taints")
    if where == "flag":
        args: list[str | Path] = [
            write(tmp_path, "c.yaml", NODES, pods),
            "--config",
            write(tmp_path, "sched.yaml", CONFIG),
        ]
    else:
        args = [write(tmp_path, "c.yaml", NODES, "---\n", CONFIG, pods)]
    doc = explain_json(capsys, *args)
    assert doc["profile"] == "ignore-taints"
    assert "TaintToleration" not in doc["nodes"]["n2"]["filter"]
    assert "TaintToleration" not in doc["nodes"]["n2"]["score"]
    assert doc["selected"] == "n2"  # the tainted node is the only one with 5 cpus


# --- text -----------------------------------------------------------------------------------------


def test_text_has_one_row_per_node_best_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write(tmp_path, "c.yaml", NODES, pod_yaml("running", cpu="1", nodeName="n3"), pod_yaml("p", cpu="1"))
    doc = explain_json(capsys, f)
    assert explain(f) == 0
    out = capsys.readouterr().out
    rows = [m.group(1) for m in re.finditer(r"^│ (\S+?)\*? +│", out, re.M)]
    assert rows == list(doc["nodes"])
    assert len(rows) == 3
    totals = [doc["nodes"][n].get("total", -1) for n in rows]
    assert totals == sorted(totals, reverse=True)
    header = next(line for line in out.splitlines() if "NODE" in line)
    for plugin in ("NodeResourcesFit", "TaintToleration", "ImageLocality", "TOTAL"):
        assert plugin in header
    assert f"selected: {doc['selected']}" in out
    assert f"│ {doc['selected']}* " in out


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "args", "match"),
    [
        pytest.param({}, ["missing.yaml"], r"^.*missing\.yaml: cannot read file: No such file", id="missing-file"),
        pytest.param(
            {"c.yaml": NODES + pod_yaml("r", nodeName="n1")},
            ["c.yaml"],
            r"c\.yaml: no pod to explain",
            id="no-pending-pod",
        ),
        pytest.param(
            {"c.yaml": NODES + pod_yaml("a") + pod_yaml("b")},
            ["c.yaml"],
            r"c\.yaml: 2 pods without spec\.nodeName \(default/a, default/b\): choose one with --pod",
            id="two-candidates",
        ),
        pytest.param(
            {"c.yaml": NODES + pod_yaml("a")},
            ["c.yaml", "--pod", "default/zzz"],
            r"--pod default/zzz: no pod default/zzz in .*c\.yaml",
            id="unknown-pod",
        ),
        pytest.param(
            {
                "c.yaml": NODES + pod_yaml("a"),
                "s.yaml": CONFIG.replace("disabled: [{name: Taint", "enabled: [{name: No"),
            },
            ["c.yaml", "--config", "s.yaml"],
            r"s\.yaml: profiles\[1\]\.plugins\.multiPoint\.enabled\[0\]\.name: ",
            id="bad-config",
        ),
        pytest.param(
            {"c.yaml": NODES + pod_yaml("a", schedulerName="other")},
            ["c.yaml"],
            r'the default configuration: no profile for schedulerName "other" of pod default/a',
            id="no-profile",
        ),
        pytest.param(
            {"c.yaml": NODES + pod_yaml("a", cpu="2 cores")},
            ["c.yaml"],
            r"c\.yaml: documents\[3\]\.spec\.containers\[0\]\.resources\.requests\.cpu: ",
            id="bad-manifest",
        ),
        pytest.param(
            {"c.yaml": NODES + pod_yaml("a", priorityClassName="nope")},
            ["c.yaml"],
            r"c\.yaml: documents\[3\]: Pod \'a\': .*no PriorityClass with name nope",
            id="unknown-priority-class",
        ),
        pytest.param(
            {"c.yaml": NODES + "---\n" + CONFIG + pod_yaml("a"), "s.yaml": CONFIG},
            ["c.yaml", "--config", "s.yaml"],
            r"c\.yaml: documents\[3\]: a second KubeSchedulerConfiguration \(the first is in .*s\.yaml\)",
            id="two-configs",
        ),
    ],
)
def test_bad_input_is_one_line_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], args: list[str], match: str
) -> None:
    for name, text in files.items():
        write(tmp_path, name, text)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ExplainError) as info:
        explain(*args)
    assert re.search(match, re.sub(r":\d+:\d+: ", ": ", str(info.value), count=1))  # line:column: tests/inputs
    assert "\n" not in str(info.value)


def test_through_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from emulator import cli

    if "explain" not in cli._parser().format_help():
        pytest.skip("explain is not wired into emulator.cli yet")
    f = write(tmp_path, "c.yaml", NODES, pod_yaml("a"), pod_yaml("b"))
    assert cli.main(["explain", str(f), "--output", "json", "--pod", "default/a"]) == 0
    assert json.loads(capsys.readouterr().out)["pod"] == "default/a"
    assert cli.main(["explain", str(f)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert "choose one with --pod" in err
