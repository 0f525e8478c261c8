"""The scheduler configuration's inputs. NodeResourcesFitArgs' ignored resource names are label names (upstream
``ValidateNodeResourcesFitArgs`` → ``ValidateLabelName`` → ``IsQualifiedName``), checked
by the one implementation in ``emulator.base.api.labels``; a configuration file is read through
the bounded UTF-8 reader of ``emulator.base.inputs``."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.scheduler.args import ConfigError, NodeResourcesFitArgs, decode_args
from agents.scheduler.config import load_config_file


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        pytest.param("ignoredResources", "example.com/foo\n", "name part must consist of", id="trailing-newline"),
        pytest.param("ignoredResources", "a/b/c", "a qualified name must consist of", id="two-slashes"),
        pytest.param("ignoredResources", "x" * 64, "must be no more than 63 characters", id="name-too-long"),
        pytest.param("ignoredResources", "Example.com/foo", "prefix part a lowercase RFC 1123", id="bad-prefix"),
        pytest.param("ignoredResourceGroups", "example.com\n", "name part must consist of", id="group-newline"),
        pytest.param("ignoredResourceGroups", "example.com/x", "can't contain '/'", id="group-slash"),
    ],
)
def test_bad_names_are_refused(field: str, value: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        decode_args(NodeResourcesFitArgs, {field: [value]})


@pytest.mark.parametrize("value", ["example.com/foo", "foo", "nvidia.com/gpu", "a.b-c_d"])
def test_good_names_pass(value: str) -> None:
    args = decode_args(NodeResourcesFitArgs, {"ignoredResources": [value]})
    assert args.ignored_resources == [value]


def test_config_file_is_read_bounded_and_as_utf8(tmp_path: Path) -> None:
    base = tmp_path
    latin = base / "latin1.yaml"
    latin.write_bytes(b"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n# caf\xe9\n")
    with pytest.raises(ConfigError, match=r"cannot read file: not UTF-8 text: invalid byte 0xe9 at offset"):
        load_config_file(latin)
    with pytest.raises(ConfigError, match="cannot read file"):
        load_config_file(base)  # a directory
