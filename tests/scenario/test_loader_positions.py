"""Scenario errors say where: ``file:line:column`` of the YAML node their path names, in the
scenario or in the file a ``file:`` reference reads; nothing when the whole file is at fault."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator.app.scenario.loader import ScenarioError, load_scenario, load_scenario_text

POD = "{{apiVersion: v1, kind: Pod, metadata: {{name: {name}}}, spec: {{containers: [{{name: c, image: {image}}}]}}}}"


def _error(text: str, base_dir: Path) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        load_scenario_text(text, source="s.yaml", base_dir=base_dir)
    return info.value


@pytest.mark.parametrize(
    ("text", "where", "path"),
    [
        pytest.param("name: t\nseed: x\n", (2, 1), "seed", id="top-level-field"),
        pytest.param(
            "name: t\nnodes:\n  - count: 0\n    namePrefix: n\n    template: {}\n",
            (3, 5),
            "nodes[0].count",
            id="field-in-a-list-item",
        ),
        pytest.param(
            "name: t\nnodes:\n  - namePrefix: n\n    template: {}\n",
            (3, 5),
            "nodes[0].count",
            id="missing-field-points-at-the-nearest-node",
        ),
        pytest.param(
            "name: t\nsteps:\n  - cordon: {node: nope}\n", (3, 14), "steps[0].cordon.node", id="timeline-error"
        ),
        pytest.param(
            "name: t\nobjects:\n  - " + POD.format(name="p", image=3) + "\n",
            (3, 84),
            "objects[0].spec.containers[0].image",
            id="msgspec-error-in-an-inline-manifest",
        ),
    ],
)
def test_errors_in_the_scenario_carry_line_and_column(
    tmp_path: Path, text: str, where: tuple[int, int], path: str
) -> None:
    err = _error(text, tmp_path)
    assert err.path == path
    assert (err.line, err.column) == where
    assert str(err).startswith(f"s.yaml:{where[0]}:{where[1]}: {err.path}: ")


def test_an_error_inside_a_referenced_file_is_located_in_that_file(tmp_path: Path) -> None:
    (tmp_path / "pods.yaml").write_text(
        POD.format(name="a", image="i") + "\n---\n" + "apiVersion: v1\nkind: Pod\nmetadata:\n  name: b\n  labels: 3\n"
    )
    err = _error("name: t\nobjects: [{file: pods.yaml}]\n", tmp_path)
    assert (err.file, err.path, err.line, err.column) == (
        str(tmp_path / "pods.yaml"),
        "documents[1].metadata.labels",
        7,
        3,
    )


def test_a_duplicate_generated_name_points_at_the_second_write(tmp_path: Path) -> None:
    text = (
        "name: t\nobjects:\n  - " + POD.format(name="a", image="i") + "\n  - " + POD.format(name="a", image="i") + "\n"
    )
    err = _error(text, tmp_path)
    assert (err.path, err.line) == ("objects[1].metadata.name", 4)


def test_whole_file_errors_have_no_position(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("name: a\n---\nname: b\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(tmp_path / "s.yaml")
    assert (info.value.line, str(info.value)) == (
        None,
        f"{tmp_path / 's.yaml'}: expected one YAML document (the scenario), got 2",
    )
