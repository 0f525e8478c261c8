"""Go int64 fields the emulator decodes as Python ints: a larger number is refused, as
upstream's decoder refuses it (a 30-digit ``tolerationSeconds`` and a 40-digit
``podInitialBackoffSeconds`` were accepted before the hostile corpus found them)."""

from __future__ import annotations

import pytest

from agents.scheduler.config import ConfigError, load_config
from emulator.base.api.errors import Invalid
from emulator.base.api.validation import validate
from tests.builders import pod, toleration

INT64_MAX = 2**63 - 1
CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


@pytest.mark.parametrize(
    ("seconds", "refused"),
    [
        pytest.param(INT64_MAX, False, id="int64-max"),
        pytest.param(INT64_MAX + 1, True, id="past-int64"),
        pytest.param(10**30, True, id="30-digits"),
    ],
)
def test_toleration_seconds_fit_an_int64(seconds: int, refused: bool) -> None:
    p = pod("p", tolerations=[toleration("a", effect="NoExecute", seconds=seconds)])
    if not refused:
        validate(p)
        return
    with pytest.raises(Invalid) as info:
        validate(p)
    assert info.value.field == "spec.tolerations[0].tolerationSeconds"
    assert info.value.message.endswith(f"Invalid value: {seconds}: must fit in an int64")


@pytest.mark.parametrize("field", ["podInitialBackoffSeconds", "podMaxBackoffSeconds"])
def test_backoff_seconds_fit_an_int64(field: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config({**CONFIG, field: INT64_MAX + 1})
    assert str(info.value) == f"{field}: expected `int` <= {INT64_MAX}"
