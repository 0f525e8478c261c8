"""The framework's split modules keep one vocabulary and their slots.

* ``types.py`` defines nothing: every name it exports is the very object of the module that owns
  it, and every public name of those modules (but the runners' ``error_status``) is exported, so
  a name added to ``node_info.py`` and forgotten in ``types.py`` fails here, not in a plugin.
* ``NodeTable`` mixes in ``RowCaches`` and still has no ``__dict__`` (a mixin without
  ``__slots__ = ()`` would give every table one, and every attribute read a dict probe).
* ``Framework`` combines the three runner mixins; each extension point's runner resolves to the
  mixin whose module owns it.
"""

from __future__ import annotations

import inspect
from types import ModuleType

import pytest

from agents.scheduler.framework import (
    cycle_state,
    events,
    node_info,
    pod_info,
    resource,
    runtime_binding,
    runtime_filtering,
    runtime_scoring,
    status,
    types,
)
from agents.scheduler.framework.node_table import NodeTable
from agents.scheduler.framework.runtime import Framework

OWNERS: tuple[ModuleType, ...] = (status, resource, pod_info, node_info, cycle_state, events)
NOT_VOCABULARY = {"error_status"}  # the runners' helper, not the plugins'


@pytest.mark.parametrize("owner", OWNERS, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_types_re_exports_every_public_name_of_its_owners(owner: ModuleType) -> None:
    missing = set(owner.__all__) - set(types.__all__) - NOT_VOCABULARY
    assert not missing
    for name in owner.__all__:
        if name in types.__all__:
            assert getattr(types, name) is getattr(owner, name), name


def test_every_name_of_types_comes_from_exactly_one_owner() -> None:
    for name in types.__all__:
        owners = [m.__name__ for m in OWNERS if name in m.__all__]
        assert len(owners) == 1, (name, owners)
        assert getattr(types, name) is getattr(next(m for m in OWNERS if name in m.__all__), name)


def test_node_table_keeps_its_slots_through_the_mixin() -> None:
    table = NodeTable([])
    assert not hasattr(table, "__dict__")
    with pytest.raises(AttributeError):
        table.not_a_slot = 1  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("runner", "module"),
    [
        ("run_pre_filter_plugins", runtime_filtering),
        ("run_filter_plugins", runtime_filtering),
        ("run_filter_plugins_with_nominated_pods", runtime_filtering),
        ("find_feasible_rows", runtime_filtering),
        ("run_post_filter_plugins", runtime_filtering),
        ("run_pre_score_plugins", runtime_scoring),
        ("run_score_plugins", runtime_scoring),
        ("score_rows", runtime_scoring),
        ("run_reserve_plugins_reserve", runtime_binding),
        ("run_permit_plugins", runtime_binding),
        ("run_bind_plugins", runtime_binding),
    ],
)
def test_each_runner_resolves_to_the_module_that_owns_it(runner: str, module: ModuleType) -> None:
    fn = inspect.getattr_static(Framework, runner)
    assert fn.__module__ == module.__name__
