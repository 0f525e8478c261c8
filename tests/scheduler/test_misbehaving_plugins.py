"""Out-of-tree plugins that misbehave: bad input or an ``Error`` status, never a crash.

* A module that raises (even ``SystemExit``/``KeyboardInterrupt``) while being imported, or a
  plugin whose constructor raises — even one enabled under multiPoint that implements no
  extension point (upstream ``NewFramework`` constructs every plugin of ``pluginsNeeded``:
  ``initializing plugin %q: %w``) — is bad input: ``validate`` and ``run`` exit 2 with one
  ``error:`` line naming the plugin/module and the scenario file and path.
* A plugin raising inside an extension point gives a ``Status`` of code ``Error`` with
  upstream's message shape for that point; the run counts it in ``scheduling.errors`` and
  goes on (the pod backs off and is retried), on the vectorised and per-node paths alike.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.scheduler.cache import Snapshot
from agents.scheduler.framework.diagnosis import Diagnosis
from agents.scheduler.framework.interface import ExtensionPoint, NodeToStatus, ProfileSpec
from agents.scheduler.framework.plugin_set import PluginInitError
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import Code, CycleState, NodeInfo, PodInfo, Status
from agents.scheduler.registry import in_tree_registry
from agents.scheduler.setup import SchedulerSettings, SetupError, build_scheduler_setup
from emulator import cli
from emulator.base.api.core import Node, NodeStatus, Pod
from emulator.base.api.meta import ObjectMeta
from emulator.base.runtime.clock import StoppedClock

_COUNTER = itertools.count()

_PLUGINS = {
    "ctor_raises": """
        class Plugin:
            name = "Bad"
            def __init__(self, args, handle):
                raise RuntimeError("no licence")
            def filter(self, state, pod, node_info):
                return None
    """,
    "ctor_raises_no_point": """
        class Plugin:
            name = "Bad"
            def __init__(self, args, handle):
                raise RuntimeError("no licence")
    """,
    "import_exits": """
        import sys
        sys.exit(0)
    """,
    "import_interrupts": """
        raise KeyboardInterrupt
    """,
    "filter_raises": """
        from agents.scheduler.framework.types import SUCCESS
        class Plugin:
            name = "Bad"
            def __init__(self, args, handle):
                pass
            def filter(self, state, pod, node_info):
                raise ZeroDivisionError("division by zero")
    """,
    "score_raises": """
        class Plugin:
            name = "Bad"
            def __init__(self, args, handle):
                pass
            def score(self, state, pod, node_info):
                raise KeyError("missing")
            def score_extensions(self):
                return None
    """,
}


def _scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plugin: str, nodes: int = 2) -> Path:
    """A scenario enabling ``Bad`` (the module ``_PLUGINS[plugin]``, under a fresh name) on
    ``nodes`` nodes with one pod, running 20 s."""
    module = f"misbehaving_{plugin}_{next(_COUNTER)}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(_PLUGINS[plugin]))
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "s.yaml"
    path.write_text(
        textwrap.dedent(f"""\
        name: misbehaving
        until: 20s
        schedulerOptions:
          plugins:
            Bad: {module}:Plugin
        scheduler:
          apiVersion: kubescheduler.config.k8s.io/v1
          kind: KubeSchedulerConfiguration
          profiles:
            - schedulerName: default-scheduler
              plugins:
                multiPoint:
                  enabled: [{{name: Bad}}]
        nodes:
          - count: {nodes}
            namePrefix: node
            template:
              status:
                capacity: {{cpu: "4", memory: 16Gi, pods: "110"}}
        steps:
          - createPods:
              count: 1
              namePrefix: p
              template:
                spec:
                  containers:
                    - name: c
                      image: registry.k8s.io/pause:3.9
                      resources: {{requests: {{cpu: "1"}}}}
        """)
    )
    return path


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize(
    ("plugin", "expected"),
    [
        pytest.param(
            "ctor_raises",
            'schedulerOptions.plugins.Bad: initializing plugin "Bad": RuntimeError: no licence',
            id="constructor-raises",
        ),
        pytest.param(
            "ctor_raises_no_point",
            'schedulerOptions.plugins.Bad: initializing plugin "Bad": RuntimeError: no licence',
            id="constructor-raises-in-a-plugin-at-no-extension-point",
        ),
        pytest.param("import_exits", "raised SystemExit(0)", id="import-calls-sys-exit"),
        pytest.param("import_interrupts", "raised KeyboardInterrupt()", id="import-raises-keyboard-interrupt"),
    ],
)
def test_bad_plugin_is_bad_input(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    plugin: str,
    expected: str,
) -> None:
    path = _scenario(tmp_path, monkeypatch, plugin)
    assert cli.main([command, str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"error: {path}: ")
    assert "Bad" in err[0]
    assert expected in err[0]
    if plugin.startswith("import"):
        assert f'module "misbehaving_{plugin}_' in err[0]


@pytest.mark.parametrize(
    "plugin", [pytest.param("filter_raises", id="filter"), pytest.param("score_raises", id="score")]
)
def test_raising_extension_point_is_counted_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], plugin: str
) -> None:
    path = _scenario(tmp_path, monkeypatch, plugin)
    assert cli.main(["validate", str(path)]) == 0
    capsys.readouterr()
    code = cli.main(["run", str(path), "--output", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    report = json.loads(out.out)
    scheduling = report["scheduling"]
    assert scheduling["errors"] >= 2  # retried after backoff, not given up on
    assert scheduling["scheduled"] == 0
    assert report["pods"]["pending"] == 1


# --- the framework: each extension point's Error message ------------------------------------


class _Raising:
    """A plugin at every extension point, raising at ``point``."""

    name = "Bad"

    def __init__(self, point: str) -> None:
        self.point = point

    def _maybe(self, point: str) -> None:
        if self.point == point:
            raise ValueError(f"{point} broke")

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[None, Status]:
        self._maybe("PreFilter")
        return None, Status()

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        self._maybe("Filter")
        return Status()

    def post_filter(self, state: CycleState, pod: Pod, statuses: Any) -> tuple[None, Status]:
        self._maybe("PostFilter")
        return None, Status(Code.Unschedulable)

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        self._maybe("PreScore")
        return Status()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        self._maybe("Score")
        return 1, Status()

    def score_extensions(self) -> _Raising:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[Any]) -> Status:
        self._maybe("NormalizeScore")
        return Status()

    def reserve(self, state: CycleState, pod: Pod, node: str) -> Status:
        self._maybe("Reserve")
        return Status()

    def unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        self._maybe("Unreserve")

    def permit(self, state: CycleState, pod: Pod, node: str) -> tuple[Status, float]:
        self._maybe("Permit")
        return Status(), 0.0

    async def pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        self._maybe("PreBind")
        return Status()

    async def bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        self._maybe("Bind")
        return Status()

    def post_bind(self, state: CycleState, pod: Pod, node: str) -> None:
        self._maybe("PostBind")


_BAD_POINTS = [p for p in ExtensionPoint if p not in (ExtensionPoint.PreEnqueue, ExtensionPoint.QueueSort)]


def _spec() -> ProfileSpec:
    """``Bad`` at every point but PreEnqueue and QueueSort (the in-tree PrioritySort)."""
    points = {ExtensionPoint.QueueSort: [("PrioritySort", 0)], **{p: [("Bad", 1)] for p in _BAD_POINTS}}
    return ProfileSpec(scheduler_name="default-scheduler", plugins=points)


def _framework(point: str) -> Framework:
    registry: dict[str, Any] = {**in_tree_registry(), "Bad": lambda args, handle: _Raising(point)}
    return Framework(_spec(), registry, clock=StoppedClock(), rng=random.Random(0))


def _pod() -> Pod:
    return Pod(metadata=ObjectMeta(name="p", namespace="default", uid="u1"))


def _node(name: str) -> NodeInfo:
    return NodeInfo(Node(metadata=ObjectMeta(name=name), status=NodeStatus()))


@pytest.mark.parametrize(
    ("point", "message"),
    [
        pytest.param("PreFilter", 'running PreFilter plugin "Bad": ValueError: PreFilter broke', id="prefilter"),
        pytest.param("Filter", 'running "Bad" filter plugin: ValueError: Filter broke', id="filter"),
        pytest.param("PostFilter", "ValueError: PostFilter broke", id="postfilter"),
        pytest.param("PreScore", 'running PreScore plugin "Bad": ValueError: PreScore broke', id="prescore"),
        pytest.param("Score", 'running Score plugins: plugin "Bad" failed with: ValueError: Score broke', id="score"),
        pytest.param(
            "NormalizeScore",
            'running Normalize on Score plugins: plugin "Bad" failed with: ValueError: NormalizeScore broke',
            id="normalize-score",
        ),
        pytest.param("Reserve", 'running Reserve plugin "Bad": ValueError: Reserve broke', id="reserve"),
        pytest.param("Permit", 'running Permit plugin "Bad": ValueError: Permit broke', id="permit"),
        pytest.param("PreBind", 'running PreBind plugin "Bad": ValueError: PreBind broke', id="prebind"),
        pytest.param("Bind", 'running Bind plugin "Bad": ValueError: Bind broke', id="bind"),
    ],
)
def test_raising_plugin_gives_an_error_status(point: str, message: str) -> None:
    fwk = _framework(point)
    pod = _pod()
    state = CycleState(PodInfo(pod))
    nodes = [_node("n1"), _node("n2")]
    status: Status
    match point:
        case "PreFilter":
            _, status, _ = fwk.run_pre_filter_plugins(state, pod, nodes)
        case "Filter":
            status = fwk.run_filter_plugins(state, pod, nodes[0])
        case "PostFilter":
            _, status = fwk.run_post_filter_plugins(state, pod, None)  # type: ignore[arg-type]
        case "PreScore":
            status = fwk.run_pre_score_plugins(state, pod, nodes)
        case "Score" | "NormalizeScore":
            _, status = fwk.run_score_plugins(state, pod, nodes)
        case "Reserve":
            status = fwk.run_reserve_plugins_reserve(state, pod, "n1")
        case "Permit":
            status = fwk.run_permit_plugins(state, pod, "n1")
        case "PreBind":
            status = asyncio.run(fwk.run_pre_bind_plugins(state, pod, "n1"))
        case "Bind":
            status = asyncio.run(fwk.run_bind_plugins(state, pod, "n1"))
    assert status.code is Code.Error
    assert status.plugin == "Bad"
    assert status.message() == message


@pytest.mark.parametrize("point", [pytest.param("Unreserve", id="unreserve"), pytest.param("PostBind", id="postbind")])
def test_raising_informational_point_changes_nothing(point: str) -> None:
    fwk = _framework(point)
    pod = _pod()
    state = CycleState(PodInfo(pod))
    if point == "Unreserve":
        fwk.run_reserve_plugins_unreserve(state, pod, "n1")
    else:
        fwk.run_post_bind_plugins(state, pod, "n1")


def test_constructor_error_names_the_plugin() -> None:
    def factory(args: Any, handle: Any) -> Any:
        raise SystemExit(3)

    with pytest.raises(PluginInitError, match=r'^initializing plugin "Bad": SystemExit: 3$'):
        Framework(_spec(), {**in_tree_registry(), "Bad": factory}, clock=StoppedClock(), rng=random.Random(0))


def test_a_needed_plugin_at_no_extension_point_is_constructed_too() -> None:
    """Upstream ``NewFramework`` constructs every plugin of ``pluginsNeeded`` (multiPoint
    included) before sorting them into points, so a constructor error surfaces even for a
    plugin that implements none."""

    class Inert:
        def __init__(self, args: Any, handle: Any) -> None:
            raise RuntimeError("no licence")

    points = {ExtensionPoint.QueueSort: [("PrioritySort", 0)], ExtensionPoint.Bind: [("DefaultBinder", 0)]}
    spec = ProfileSpec(scheduler_name="default-scheduler", plugins=points, needed=("PrioritySort", "Inert"))
    with pytest.raises(PluginInitError, match=r'^initializing plugin "Inert": RuntimeError: no licence$'):
        Framework(spec, {**in_tree_registry(), "Inert": Inert}, clock=StoppedClock(), rng=random.Random(0))


def test_setup_construct_reports_the_profile_for_an_undeclared_plugin() -> None:
    """A raising in-tree-registered plugin (not in ``schedulerOptions.plugins``): the profile's path."""
    settings = SchedulerSettings(
        source="s.yaml",
        config={
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{"name": "NodeResourcesFit"}]}],
        },
    )
    setup = build_scheduler_setup(settings)
    assert setup.instances == 1
    with pytest.raises(SetupError):
        build_scheduler_setup(SchedulerSettings(source="s.yaml", plugins={"X": "no_such_module_here:X"}))


# --- the vectorised runners ---------------------------------------------------------------------


class _VectorRaising:
    """``filter_all``/``score_all`` raise; the per-node methods raise on node ``n2`` only."""

    name = "Bad"

    def filter_all(self, *args: Any) -> Any:
        raise RuntimeError("vector broke")

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if node_info.name == "n2":
            raise RuntimeError("n2 broke")
        return Status()

    def score_all(self, *args: Any) -> Any:
        raise RuntimeError("vector broke")

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        if node_info.name == "n2":
            raise RuntimeError("n2 broke")
        return 1, Status()

    def score_extensions(self) -> None:
        return None


def _vector_framework(snapshot: Snapshot) -> Framework:
    points = {
        ExtensionPoint.QueueSort: [("PrioritySort", 0)],
        ExtensionPoint.Filter: [("Bad", 1)],
        ExtensionPoint.Score: [("Bad", 1)],
        ExtensionPoint.Bind: [("DefaultBinder", 0)],
    }
    registry: dict[str, Any] = {**in_tree_registry(), "Bad": lambda args, handle: _VectorRaising()}
    spec = ProfileSpec(scheduler_name="default-scheduler", plugins=points)
    return Framework(spec, registry, clock=StoppedClock(), rng=random.Random(0), snapshot=snapshot)


def test_vectorised_runners_fall_back_to_the_per_node_verdict() -> None:
    nodes = [Node(metadata=ObjectMeta(name=n), status=NodeStatus()) for n in ("n1", "n2", "n3")]
    snapshot = Snapshot.from_objects([], nodes)
    fwk = _vector_framework(snapshot)
    pod = _pod()
    state = CycleState(PodInfo(pod))
    table = snapshot.table
    diagnosis = Diagnosis(node_to_status=NodeToStatus())
    _, _, error = fwk.find_feasible_rows(state, pod, table, None, 0, 3, diagnosis)
    assert error is not None
    assert (error.code, error.plugin) == (Code.Error, "Bad")
    assert error.message() == 'running "Bad" filter plugin: RuntimeError: n2 broke'
    assert fwk.run_filter_plugins(state, pod, snapshot.node_info_list[1]) == error
    infos = snapshot.node_info_list
    _, status = fwk.score_rows(state, pod, table, np.arange(3, dtype=np.int64), infos)
    _, per_node = fwk.run_score_plugins(state, pod, infos)
    assert status.code is Code.Error
    assert status.message() == 'running Score plugins: plugin "Bad" failed with: RuntimeError: n2 broke'
    assert per_node == status


def test_raising_pre_enqueue_gates_the_pod_with_an_error() -> None:
    class Gate:
        name = "Bad"

        def pre_enqueue(self, pod: Pod) -> Status:
            raise RuntimeError("gate broke")

    points = {
        ExtensionPoint.PreEnqueue: [("Bad", 0)],
        ExtensionPoint.QueueSort: [("PrioritySort", 0)],
        ExtensionPoint.Bind: [("DefaultBinder", 0)],
    }
    registry: dict[str, Any] = {**in_tree_registry(), "Bad": lambda args, handle: Gate()}
    fwk = Framework(ProfileSpec(plugins=points), registry, clock=StoppedClock(), rng=random.Random(0))
    status, plugin = fwk.run_pre_enqueue_plugins(_pod())
    assert plugin == "Bad"
    assert (status.code, status.plugin, status.message()) == (Code.Error, "Bad", "RuntimeError: gate broke")
