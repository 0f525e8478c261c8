"""``fast_uid`` gives exactly ``new_uid``'s strings and leaves the generator in the same state."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.base.apiserver.uids import fast_uid
from tests.references import new_uid


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=2**64), st.integers(min_value=1, max_value=5))
def test_fast_uid_equals_new_uid(seed: int, n: int) -> None:
    fast, ref = random.Random(seed), random.Random(seed)
    assert [fast_uid(fast) for _ in range(n)] == [new_uid(ref) for _ in range(n)]
    assert fast.getstate() == ref.getstate()


class _Bits(random.Random):
    """A generator whose 128-bit draw is fixed (the extremes of the bit patterns)."""

    def __init__(self, value: int) -> None:
        super().__init__(0)
        self.value = value

    def getrandbits(self, k: int) -> int:
        assert k == 128
        return self.value


@pytest.mark.parametrize(
    ("bits", "want"),
    [
        pytest.param(0, "00000000-0000-4000-8000-000000000000", id="all-zero"),
        pytest.param(2**128 - 1, "ffffffff-ffff-4fff-bfff-ffffffffffff", id="all-one"),
    ],
)
def test_fast_uid_sets_version_and_variant(bits: int, want: str) -> None:
    assert fast_uid(_Bits(bits)) == want == new_uid(_Bits(bits))
