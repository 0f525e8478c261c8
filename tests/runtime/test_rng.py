"""Seed derivation, per-component streams and UIDs."""

from __future__ import annotations

import dataclasses
import re

import pytest

from emulator.base.runtime import Seeds, derive_seed, stream
from tests.references import new_uid

UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


def draws(rng_name: str, seed: int = 42, n: int = 10) -> list[float]:
    rng = stream(seed, rng_name)
    return [rng.random() for _ in range(n)]


def test_derivation_is_pinned() -> None:
    # Changing the derivation changes every simulation's numbers: it must be deliberate.
    assert derive_seed(42, "scheduler") == 11568641978554685987
    assert stream(42, "scheduler").random() == 0.1866403249244406


def test_seeds_fit_in_64_bits_and_depend_on_both_inputs() -> None:
    seeds = {derive_seed(seed, name) for seed in (0, 1, -1, 42) for name in ("a", "b", "")}
    assert len(seeds) == 12
    assert all(0 <= s < 2**64 for s in seeds)


def test_same_seed_and_name_give_the_same_stream() -> None:
    assert draws("kubelet:node-1") == draws("kubelet:node-1")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        pytest.param(("kubelet:node-1", 42), ("kubelet:node-2", 42), id="other-name"),
        pytest.param(("scheduler", 42), ("scheduler", 43), id="other-seed"),
    ],
)
def test_streams_differ_per_name_and_seed(a: tuple[str, int], b: tuple[str, int]) -> None:
    assert draws(a[0], a[1]) != draws(b[0], b[1])


def test_drawing_from_one_stream_does_not_shift_another() -> None:
    expected = draws("client", seed=7, n=5)
    seeds = Seeds(7)
    busy, client = seeds.stream("scheduler"), seeds.stream("client")
    got = []
    for _ in range(5):
        for _ in range(100):
            busy.random()
        got.append(client.random())
    assert got == expected


def test_seeds_hands_out_the_module_streams() -> None:
    seeds = Seeds(42)
    assert seeds.seed == 42
    assert repr(seeds) == "Seeds(seed=42)"
    rng = seeds.stream("scheduler")
    assert [rng.random() for _ in range(10)] == draws("scheduler")
    with pytest.raises(dataclasses.FrozenInstanceError):
        seeds.seed = 1  # type: ignore[misc]


def test_new_uid_is_a_uuid4_drawn_from_the_stream() -> None:
    rng = stream(42, "apiserver")
    uids = [new_uid(rng) for _ in range(1000)]
    assert uids[0] == "82b3ef5f-88f4-42b0-9c12-d931964d756d"
    assert all(UUID4.fullmatch(uid) for uid in uids)
    assert len(set(uids)) == len(uids)
    again = stream(42, "apiserver")
    assert [new_uid(again) for _ in range(1000)] == uids
