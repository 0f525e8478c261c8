"""Every race scenario in ``scenarios/races/`` has its own test module here. That each is
reproducible from its seed, in any process, is ``tests/test_determinism.py``."""

from __future__ import annotations

from tests.races.racekit import RACES, ROOT

SCENARIOS = sorted(p.stem for p in RACES.glob("*.yaml"))


def test_every_race_has_a_scenario_and_a_test() -> None:
    here = ROOT / "tests" / "races"
    assert len(SCENARIOS) == 8
    missing = [n for n in SCENARIOS if not (here / f"test_{n.replace('-', '_')}.py").exists()]
    assert not missing
