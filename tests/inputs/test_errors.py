"""``InputError``: one message format for every input error, the path syntax, msgspec's
error paths, and the family every command-line error belongs to."""

from __future__ import annotations

import pickle

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.scheduler.args import ConfigError
from agents.scheduler.setup import SetupError
from emulator.app.bench.spec import WorkloadError
from emulator.app.commands.common import UsageError
from emulator.app.commands.explain import ExplainError
from emulator.app.commands.hunt import HuntError
from emulator.app.scenario.loader import ScenarioError
from emulator.app.scenario.runner import StepError
from emulator.base.api.codec import ManifestError
from emulator.base.inputs import InputError, PlainInputError, join_path, msgspec_error, split_path


@pytest.mark.parametrize(
    ("err", "text"),
    [
        pytest.param(InputError("s.yaml", "steps[3].sleep", "bad"), "s.yaml: steps[3].sleep: bad", id="full"),
        pytest.param(InputError("s.yaml", "", "bad"), "s.yaml: bad", id="no-path"),
        pytest.param(InputError("", "", "--seeds: bad"), "--seeds: bad", id="detail-only"),
        pytest.param(InputError("s.yaml", "a.b", "bad", line=12, column=5), "s.yaml:12:5: a.b: bad", id="located"),
        pytest.param(PlainInputError("s.yaml: a: bad"), "s.yaml: a: bad", id="plain"),
    ],
)
def test_message_format(err: InputError, text: str) -> None:
    assert str(err) == text


def test_locate_keeps_the_first_position() -> None:
    err = InputError("s.yaml", "a", "bad")
    err.locate(3, 4)
    err.locate(9, 9)
    assert (err.line, err.column, str(err)) == (3, 4, "s.yaml:3:4: a: bad")


@pytest.mark.parametrize(
    "err",
    [
        pytest.param(ScenarioError("s.yaml", "a", "bad", line=1, column=2), id="scenario"),
        pytest.param(ManifestError("m.yaml", "spec", "bad"), id="manifest"),
        pytest.param(ConfigError("profiles[0]", "bad", source="c.yaml"), id="config"),
        pytest.param(SetupError("s.yaml: scheduler: bad"), id="setup"),
        pytest.param(StepError("s.yaml", "steps[0].cordon", "bad"), id="step"),
        pytest.param(WorkloadError("w.yaml", "workloads[0]", "bad"), id="workload"),
        pytest.param(ExplainError("c.yaml", "documents[1]", "bad"), id="explain"),
        pytest.param(UsageError("out.json: cannot write"), id="usage"),
        pytest.param(HuntError("--seeds: bad"), id="hunt"),
    ],
)
def test_every_input_error_is_in_the_family_and_pickles(err: InputError) -> None:
    """Hunt's workers send errors across processes: a pickled copy reads the same."""
    assert isinstance(err, InputError)
    copy = pickle.loads(pickle.dumps(err))
    assert (type(copy), str(copy), copy.file, copy.path, copy.detail) == (
        type(err),
        str(err),
        err.file,
        err.path,
        err.detail,
    )


def test_config_error_keeps_its_shape() -> None:
    err = ConfigError("profiles[0].schedulerName", "Required value", source="c.yaml")
    assert (err.source, err.file, str(err)) == ("c.yaml", "c.yaml", "c.yaml: profiles[0].schedulerName: Required value")
    assert isinstance(err, ValueError)
    assert str(ConfigError("", "bad")) == "bad"


class _Box(msgspec.Struct):
    spec: dict[str, list[int]]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param({"spec": {"a": [1, "x"]}}, ("Expected `int`, got `str`", "spec[...][1]"), id="nested"),
        pytest.param({}, ("Object missing required field `spec`", ""), id="root"),
        pytest.param(3, ("Expected `object`, got `int`", ""), id="wrong-type-at-root"),
    ],
)
def test_msgspec_error_splits_message_and_path(data: object, expected: tuple[str, str]) -> None:
    with pytest.raises(msgspec.ValidationError) as info:
        msgspec.convert(data, _Box)
    assert msgspec_error(info.value) == expected


def test_msgspec_error_keeps_a_multiline_message() -> None:
    assert msgspec_error("first\nsecond - at `$.a[0]`") == ("first\nsecond", "a[0]")


_KEYS = st.lists(st.one_of(st.integers(min_value=0, max_value=10**6), st.text(min_size=1, max_size=12)), max_size=6)


@given(keys=_KEYS)
def test_split_path_reads_back_what_join_path_wrote(keys: list[str | int]) -> None:
    path = ""
    for key in keys:
        path = join_path(path, key)
    assert split_path(path) == keys
