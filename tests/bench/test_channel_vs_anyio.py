"""``bench/channel_vs_anyio.py`` runs: every variant delivers every item in every shape."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "channel_vs_anyio.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("channel_vs_anyio", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_has_every_variant_and_shape(capsys: pytest.CaptureFixture[str]) -> None:
    table = load().main(["--items", "300", "--runs", "1"])
    assert list(table) == ["Channel.get_batch", "anyio receive()", "anyio receive() drained"]
    for row in table.values():
        assert list(row) == ["1:1 per item", "1:1 batched", "fan-out"]
        assert all(v > 0 for v in row.values())
    assert capsys.readouterr().out.startswith("300 items, median of 1 runs")


@pytest.mark.parametrize("variant", ["channel", "anyio_receive", "anyio_drained"])
@pytest.mark.parametrize(("consumers", "every"), [pytest.param(1, 1, id="1:1"), pytest.param(7, 3, id="fan-out")])
def test_every_item_arrives(variant: str, consumers: int, every: int) -> None:
    # Each consumer stops after its share: a lost item would leave it waiting (DeadlockError).
    module = load()
    module.run(lambda: getattr(module, variant)(50, consumers, every), virtual=True)
