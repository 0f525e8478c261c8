"""``agents.scheduler``'s package is its public surface: every exported name resolves, and
importing the package loads none of its modules until a name is read."""

from __future__ import annotations

import subprocess
import sys

import pytest

import agents.scheduler as surface


def test_every_exported_name_resolves() -> None:
    for name in surface.__all__:
        assert getattr(surface, name) is not None, name
    assert sorted(surface.__all__) == sorted(surface._WHERE)


def test_importing_the_package_loads_no_module_of_it() -> None:
    code = "import sys, agents.scheduler; print(sorted(m for m in sys.modules if m.startswith('agents')))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "['agents', 'agents.scheduler']"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        surface.no_such_name  # noqa: B018
