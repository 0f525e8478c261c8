"""``compare --variant NAME=PATCH.yaml``: a variant is the scenario with a JSON merge patch
(RFC 7386) applied before it is checked; the variants' table, errors that name the patch file
where the patch wrote the bad value, and a comparison whose two sides differ as the patch says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from emulator.app.experiments.compare import CompareError, variants_for
from emulator.app.scenario.loader import ScenarioError, load_scenario, load_scenario_patched
from emulator.cli import main

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "scenarios/quickstart.yaml"
MOST = str(ROOT / "scenarios/compare/most-allocated.yml")


@pytest.mark.parametrize(
    ("configs", "patches", "want"),
    [
        ([], ["big=big.yml"], [("scenario", "scenario", None), ("scenario", "big", "big.yml")]),
        ([], ["a=a.yml", "b=b.yml"], [("scenario", "a", "a.yml"), ("scenario", "b", "b.yml")]),
        ([MOST], ["b=b.yml"], [(MOST, "most-allocated", None), ("scenario", "b", "b.yml")]),
    ],
)
def test_variants_for_patches(configs: list[str], patches: list[str], want: list[tuple[str, str, str | None]]) -> None:
    got = variants_for(configs, (), patches)
    assert [(v.config, v.header, v.patch) for v in got] == want


@pytest.mark.parametrize(
    ("patches", "message"),
    [
        (["big"], "--variant: expected NAME=PATCH.yaml, got 'big'"),
        (["=p.yml"], "--variant: expected NAME=PATCH.yaml, got '=p.yml'"),
        (["scenario=p.yml"], "--variant: 'scenario' names the scenario as written; choose another name"),
        (["a=p.yml", "a=q.yml"], "--variant: a is given twice"),
    ],
)
def test_variants_for_refuses(patches: list[str], message: str) -> None:
    with pytest.raises(CompareError) as err:
        variants_for([], (), patches)
    assert str(err.value) == message


def test_a_patch_changes_the_scenario_before_it_is_checked(tmp_path: Path) -> None:
    patch = tmp_path / "more.yml"
    patch.write_text("seed: 7\nkubelet: {heartbeatInterval: 20s}\nexpect: null\n")
    plain, patched = load_scenario(QUICKSTART), load_scenario_patched(QUICKSTART, patch)
    assert (plain.seed, patched.seed) == (42, 7)
    assert patched.kubelet.heartbeat_interval == 20.0
    assert plain.expect
    assert not patched.expect
    assert patched.nodes == plain.nodes  # untouched parts as written


def test_an_error_the_patch_wrote_names_the_patch_and_its_line(tmp_path: Path) -> None:
    patch = tmp_path / "bad.yml"
    patch.write_text("# a bad interval\nkubelet:\n  heartbeatInterval: soon\n")
    with pytest.raises(ScenarioError) as err:
        load_scenario_patched(QUICKSTART, patch)
    assert str(err.value).startswith(f"{patch}:3:3: kubelet.heartbeatInterval: ")


def test_an_error_in_the_scenario_still_names_the_scenario(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(QUICKSTART.read_text().replace("heartbeatInterval: 10s", "heartbeatInterval: soon"))
    patch = tmp_path / "p.yml"
    patch.write_text("seed: 1\n")
    with pytest.raises(ScenarioError) as err:
        load_scenario_patched(scenario, patch)
    assert str(err.value).startswith(f"{scenario}:")
    assert "kubelet.heartbeatInterval" in str(err.value)


@pytest.mark.parametrize("text", ["[1, 2]\n", "a: 1\n---\nb: 2\n"])
def test_a_patch_must_be_one_mapping(tmp_path: Path, text: str) -> None:
    patch = tmp_path / "p.yml"
    patch.write_text(text)
    with pytest.raises(ScenarioError) as err:
        load_scenario_patched(QUICKSTART, patch)
    assert str(err.value) == f"{patch}: expected one YAML mapping: a JSON merge patch of the scenario"


def test_compare_a_patch_side_by_side(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The baseline and a variant whose containers take 20 s to start: the same pods, later."""
    patch = tmp_path / "slow-start.yml"
    patch.write_text("kubelet:\n  containerStart: {mean: 20s}\n")
    argv = ["compare", str(QUICKSTART), "--variant", f"slow={patch}", "--seeds", "1", "--jobs", "1"]
    code = main([*argv, "--output", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    base, slow = json.loads(out)["variants"]
    assert (base["config"], "variant" in base) == ("scenario", False)
    assert (slow["config"], slow["variant"], slow["patch"]) == ("scenario", "slow", str(patch))
    assert base["perSeed"][0]["traceHash"] != slow["perSeed"][0]["traceHash"]
    assert base["metrics"]["podsScheduled"] == slow["metrics"]["podsScheduled"]
    assert slow["metrics"]["makespanSeconds"] > base["metrics"]["makespanSeconds"] + 15
    code = main(argv)
    out, _ = capsys.readouterr()
    assert out.splitlines()[1].split()[-2:] == ["scenario", "slow"]


def test_compare_refuses_a_bad_patch_before_any_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    patch = tmp_path / "bad.yml"
    patch.write_text("nodes:\n  - count: -1\n")
    code = main(["compare", str(QUICKSTART), "--variant", f"bad={patch}", "--seeds", "1"])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.startswith(f"error: {patch}:2:")
    assert len(err.strip().splitlines()) == 1
