"""``python -m emulator compare``: MostAllocated packs the packing example onto fewer nodes than
LeastAllocated, the local pool and a Dask LocalCluster print byte-identical JSON (so does
``hunt``), ``--results`` and ``--html``, the variants, and bad input (exit 2, one line)."""

from __future__ import annotations

import builtins
import csv
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from emulator.app.experiments.compare import CompareError, Variant, compare_doc, variants_for
from emulator.app.experiments.sweep import Outcome
from emulator.cli import main

ROOT = Path(__file__).resolve().parents[2]
PACKING = str(ROOT / "scenarios/compare/packing.yaml")
MOST = str(ROOT / "scenarios/compare/most-allocated.yml")
LEAST = str(ROOT / "scenarios/compare/least-allocated.yml")
QUICKSTART = str(ROOT / "scenarios/quickstart.yaml")


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def local_json(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """compare 2 configs × 2 seeds on the local pool: stdout and the --results CSV."""
    import contextlib
    import io

    results = tmp_path_factory.mktemp("results") / "runs.csv"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        argv = ["compare", PACKING, "--config", MOST, "--config", LEAST, "--seeds", "2", "--jobs", "2"]
        code = main([*argv, "--output", "json", "--results", str(results)])
    assert code == 0
    return out.getvalue(), results


@pytest.mark.slow
def test_most_allocated_uses_fewer_nodes(local_json: tuple[str, Path]) -> None:
    doc = json.loads(local_json[0])
    most, least = doc["variants"]
    assert (most["config"], least["config"]) == (MOST, LEAST)
    assert most["metrics"]["nodesUsed"]["mean"] < least["metrics"]["nodesUsed"]["mean"]
    assert most["metrics"]["nodesUsed"]["max"] < least["metrics"]["nodesUsed"]["max"]
    # the same pods run either way: only where they run differs
    assert most["metrics"]["podsScheduled"] == least["metrics"]["podsScheduled"] == 106.0
    assert [e["seed"] for e in most["perSeed"]] == [0, 1]
    assert most["runs"] == 2
    assert set(most["spread"]) == set(most["metrics"])
    assert "series" not in most


@pytest.mark.slow
def test_results_csv(local_json: tuple[str, Path]) -> None:
    doc = json.loads(local_json[0])
    with local_json[1].open() as f:
        rows = list(csv.DictReader(f))
    assert [(r["config"], r["seed"]) for r in rows] == [(MOST, "0"), (MOST, "1"), (LEAST, "0"), (LEAST, "1")]
    assert [r["traceHash"] for r in rows[:2]] == [e["traceHash"] for e in doc["variants"][0]["perSeed"]]
    assert float(rows[0]["nodesUsed.mean"]) == doc["variants"][0]["perSeed"][0]["metrics"]["nodesUsed"]["mean"]


@pytest.mark.slow
def test_dask_gives_the_same_bytes(local_json: tuple[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("distributed")  # a safety net: the test extra installs it
    argv = ["compare", PACKING, "--config", MOST, "--config", LEAST, "--seeds", "2", "--jobs", "2", "--output", "json"]
    code, out, _ = cli(capsys, *argv, "--executor", "dask")
    assert code == 0
    assert out == local_json[0]


@pytest.mark.slow
def test_hunt_on_dask_gives_the_same_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("distributed")
    argv = ["hunt", QUICKSTART, "--seeds", "3", "--jobs", "2", "--output", "json"]
    local = cli(capsys, *argv)
    dask = cli(capsys, *argv, "--executor", "dask")
    assert local[0] == dask[0] == 0
    assert local[1] == dask[1]
    assert json.loads(dask[1])["seeds"] == 3


@pytest.mark.slow
def test_one_config_is_compared_with_the_scenarios_own(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    html = tmp_path / "compare.html"
    code, out, _ = cli(
        capsys, "compare", QUICKSTART, "--config", MOST, "--seeds", "1", "--html", str(html), "--output", "json"
    )
    assert code == 0
    doc = json.loads(out)
    assert [v["config"] for v in doc["variants"]] == ["scenario", MOST]
    assert all("series" not in v for v in doc["variants"])  # kept for the page only
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "most-allocated" in page
    assert "nodesUsed" in page
    code, out, _ = cli(capsys, "compare", QUICKSTART, "--config", MOST, "--seeds", "1")
    header = out.splitlines()[1].split()
    assert header[-2:] == ["scenario", "most-allocated"]
    assert "nodesUsed.mean" in out
    assert "gpuAllocation" not in out  # no GPU node: the rows are left out


def test_html_into_a_missing_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "nowhere" / "x.html"
    code, out, err = cli(capsys, "compare", QUICKSTART, "--config", MOST, "--seeds", "1", "--html", str(target))
    assert code == 2
    assert out == ""
    assert err == f"error: --html {target}: no such directory: {target.parent}\n"


BAD_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy: {type: Fullest}
"""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--executor", "ray"], r"^error: --executor: expected local, dask or dask=ADDRESS", id="executor"),
        pytest.param(["--executor", "dask="], r"^error: --executor: expected local, dask", id="dask-no-address"),
        pytest.param(
            ["--config", "{tmp}/missing.yml"], r"^error: --config .*missing\.yml: cannot read file", id="missing"
        ),
        pytest.param(["--config", "{tmp}/bad.yml"], r"^error: .*bad\.yml.*scoringStrategy.*Fullest", id="bad-config"),
        pytest.param(
            ["--config", "{tmp}/kind.yml"],
            r"^error: .*kind\.yml:2:1: kind: expected KubeSchedulerConfiguration, got \"Pod\"$",
            id="not-a-config",
        ),
        pytest.param(
            ["--results", "{tmp}/r.xlsx"],
            r"^error: --results .*r\.xlsx: expected a file name ending in \.csv or \.parquet$",
            id="results",
        ),
        pytest.param(
            ["--config", MOST, "--config", MOST], r"^error: --config: .*most-allocated\.yml is given twice$", id="twice"
        ),
        pytest.param(
            ["NO-CONFIG"],
            r"^error: --config: give at least one KubeSchedulerConfiguration file"
            r" \(or a --variant NAME=PATCH.yaml\) to compare$",
            id="no-config",
        ),
        pytest.param(["--seeds", "0"], r"^error: --seeds: must be at least 1, got 0$", id="seeds"),
        pytest.param(["--jobs", "0"], r"^error: --jobs: must be between 1 and 256, got 0$", id="jobs"),
    ],
)
def test_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "bad.yml").write_text(BAD_CONFIG)
    (tmp_path / "kind.yml").write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: Pod\n")
    if "--config" not in args:
        args = [*args, "--config", MOST] if args != ["NO-CONFIG"] else []
    code, out, err = cli(capsys, "compare", QUICKSTART, *[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("error: ")
    import re

    assert re.search(message, err), err


@pytest.mark.parametrize("command", [pytest.param("compare", id="compare"), pytest.param("hunt", id="hunt")])
def test_dask_not_installed(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    real = builtins.__import__

    def no_dask(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.split(".")[0] == "distributed":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    argv = ["--config", MOST] if command == "compare" else []
    code, _, err = cli(capsys, command, QUICKSTART, "--seeds", "1", "--executor", "dask", *argv)
    assert code == 2
    assert err == (
        "error: --executor dask: Dask is not installed; install the dask extra: pip install 'kube-emulator[dask]'\n"
    )


@pytest.mark.parametrize(
    ("results", "message"),
    [pytest.param("r.txt", r"expected a file name ending in \.csv or \.parquet$", id="suffix")],
)
def test_hunt_bad_results(capsys: pytest.CaptureFixture[str], tmp_path: Path, results: str, message: str) -> None:
    code, _, err = cli(capsys, "hunt", QUICKSTART, "--seeds", "1", "--results", str(tmp_path / results))
    assert code == 2
    assert err.startswith(f"error: --results {tmp_path / results}: ")
    assert err.rstrip().endswith(message.rstrip("$").replace("\\", ""))


def test_hunt_results(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "seeds.csv"
    code, _, _ = cli(capsys, "hunt", QUICKSTART, "--seeds", "2", "--jobs", "1", "--results", str(path))
    assert code == 0
    assert path.read_text().splitlines() == ["seed,passed,reason,t", "0,true,,", "1,true,,"]


# --- the variants and the document ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("configs", "want"),
    [
        pytest.param(["a/x.yaml"], [("scenario", "scenario"), ("a/x.yaml", "x")], id="one-vs-scenario"),
        pytest.param(["a/x.yaml", "y.yml"], [("a/x.yaml", "x"), ("y.yml", "y")], id="two"),
        pytest.param(["a/x.yaml", "b/x.yaml"], [("a/x.yaml", "a/x.yaml"), ("b/x.yaml", "b/x.yaml")], id="same-stem"),
    ],
)
def test_variants_for(configs: list[str], want: list[tuple[str, str]]) -> None:
    assert [(v.config, v.header) for v in variants_for(configs)] == want


def test_variants_for_nothing() -> None:
    with pytest.raises(CompareError, match=r"^--config: give at least one"):
        variants_for([])


def run_value(nodes: float) -> dict[str, Any]:
    return {"metrics": {"nodesUsed": {"mean": nodes, "max": 3}}, "traceHash": f"h{nodes}", "passed": True}


def test_compare_doc_is_in_seed_order_whatever_the_completion_order() -> None:
    variants = [Variant("a.yaml", "a"), Variant("scenario", "scenario")]
    outcomes = {
        (1, 3): Outcome(value=run_value(4.0)),
        (0, 3): Outcome(value=run_value(1.0)),
        (1, 2): Outcome(error="RuntimeError: boom"),
        (0, 2): Outcome(value=run_value(2.0)),
    }
    doc = compare_doc("s", [3, 2], variants, outcomes)
    again = compare_doc("s", [2, 3], variants, dict(reversed(outcomes.items())))
    assert json.dumps(doc) == json.dumps(again)
    assert doc["seeds"] == [2, 3]
    a, own = doc["variants"]
    assert [e["seed"] for e in a["perSeed"]] == [2, 3]
    assert a["metrics"] == {"nodesUsed": {"mean": 1.5, "max": 3.0}}
    assert a["spread"] == {"nodesUsed": {"mean": 0.5, "max": 0.0}}
    assert own["runs"] == 1
    assert own["perSeed"][0] == {
        "seed": 2,
        "metrics": None,
        "traceHash": None,
        "passed": False,
        "error": "RuntimeError: boom",
    }


def test_run_variant_on_a_thread_pool() -> None:
    from emulator.app.experiments.compare import run_variant

    with ThreadPoolExecutor(1) as pool:
        got = pool.submit(run_variant, QUICKSTART, MOST, 0, True).result()
    assert got["passed"] is True
    assert got["metrics"]["podsScheduled"] == 13
    assert got["series"]["version"] == 1


# --- the gpuSharing axis ---------------------------------------------------------------------

GPU_SHARING = str(ROOT / "scenarios/trace-gpu-sharing.yaml")


@pytest.mark.parametrize(
    ("configs", "modes", "want"),
    [
        pytest.param(
            [],
            ["device-plugin", "dra"],
            [("scenario", "device-plugin", "device-plugin"), ("scenario", "dra", "dra")],
            id="two-modes",
        ),
        pytest.param(
            ["a/x.yaml"],
            ["dra"],
            [("scenario", "scenario dra", "dra"), ("a/x.yaml", "x dra", "dra")],
            id="config-times-mode",
        ),
        pytest.param(
            ["x.yaml", "y.yaml"],
            ["device-plugin", "dra"],
            [
                ("x.yaml", "x device-plugin", "device-plugin"),
                ("x.yaml", "x dra", "dra"),
                ("y.yaml", "y device-plugin", "device-plugin"),
                ("y.yaml", "y dra", "dra"),
            ],
            id="two-by-two",
        ),
    ],
)
def test_variants_for_gpu_sharing(configs: list[str], modes: list[str], want: list[tuple[str, str, str]]) -> None:
    assert [(v.config, v.header, v.gpu_sharing) for v in variants_for(configs, modes)] == want


@pytest.mark.parametrize(
    ("modes", "message"),
    [
        pytest.param(["dra"], r"^--gpu-sharing: give two modes to compare", id="one-side"),
        pytest.param(["dra", "dra"], r"^--gpu-sharing: dra is given twice$", id="twice"),
        pytest.param(["dra", "mps"], r"^--gpu-sharing: expected one of device-plugin, dra, got 'mps'$", id="unknown"),
    ],
)
def test_variants_for_gpu_sharing_refuses(modes: list[str], message: str) -> None:
    with pytest.raises(CompareError, match=message):
        variants_for([], modes)


def test_compare_gpu_sharing_modes_side_by_side(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    results = tmp_path / "runs.csv"
    argv = ["compare", GPU_SHARING, "--gpu-sharing", "device-plugin", "--gpu-sharing", "dra", "--seeds", "1"]
    code, out, err = cli(capsys, *argv, "--jobs", "1", "--output", "json", "--results", str(results))
    assert code == 1  # the scenario's expectations are dra's: the device-plugin run misses them
    assert "gpuSharing: dra turns on the feature gate DRAConsumableCapacity" in err
    plugin, dra = json.loads(out)["variants"]
    assert (plugin["config"], plugin["gpuSharing"], dra["gpuSharing"]) == ("scenario", "device-plugin", "dra")
    # three pods share the T4 with DRA; whole devices hold one GPU pod each
    assert (plugin["metrics"]["podsScheduled"], dra["metrics"]["podsScheduled"]) == (3.0, 5.0)
    assert [e["passed"] for e in (*plugin["perSeed"], *dra["perSeed"])] == [False, True]
    with results.open() as f:
        assert [(r["config"], r["gpuSharing"]) for r in csv.DictReader(f)] == [
            ("scenario", "device-plugin"),
            ("scenario", "dra"),
        ]


def test_compare_gpu_sharing_needs_a_gpu_trace(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "compare", QUICKSTART, "--gpu-sharing", "device-plugin", "--gpu-sharing", "dra")
    assert (code, out) == (2, "")
    assert err == f"error: --gpu-sharing: {QUICKSTART} has no alibaba-gpu-2023 node list or replay\n"
