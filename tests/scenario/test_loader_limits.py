"""Bounds on what one scenario makes the loader read: each file through the bounded reader,
and all the files it references together at most ``MAX_REFERENCED_BYTES`` (a file named many
times is read many times)."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator.app.scenario import readers
from emulator.app.scenario.loader import ScenarioError, load_scenario_text

POD = "{apiVersion: v1, kind: Namespace, metadata: {name: ns-%d}}\n"


def test_referenced_files_are_bounded_in_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(3):
        (tmp_path / f"m{i}.yaml").write_text(POD % i)
    size = len(POD % 0)
    monkeypatch.setattr(readers, "MAX_REFERENCED_BYTES", 2 * size)
    text = "name: t\nobjects: [{file: m0.yaml}, {file: m1.yaml}, {file: m2.yaml}]\n"
    with pytest.raises(ScenarioError) as info:
        load_scenario_text(text, source="s.yaml", base_dir=tmp_path)
    assert (info.value.path, info.value.detail) == (
        "objects[2]",
        f"cannot read file: the files this scenario references pass {2 * size} bytes in all: {tmp_path / 'm2.yaml'}",
    )


def test_under_the_bound_every_reference_is_read(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text(POD % 0)
    refs = ", ".join(["{file: m.yaml}"] * 50)
    with pytest.raises(
        ScenarioError, match=r'm\.yaml:1:46: metadata\.name: Namespace "ns-0" already exists \(created by objects\[0\]'
    ):
        load_scenario_text(f"name: t\nobjects: [{refs}]\n", source="s.yaml", base_dir=tmp_path)
