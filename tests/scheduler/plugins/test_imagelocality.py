"""ImageLocality: upstream's image_locality_test.go ``TestImageLocalityPriority`` cases to the integer
(scores scaled by how many of the snapshot's nodes hold each image, init containers included) and
``TestNormalizedImageName``."""

from __future__ import annotations

import hashlib
import random
from typing import Any

import pytest

from agents.scheduler.cache import Snapshot, normalized_image_name
from agents.scheduler.framework.interface import ExtensionPoint as EP
from agents.scheduler.framework.interface import ProfileSpec
from agents.scheduler.framework.runtime import Framework
from agents.scheduler.framework.types import CycleState
from agents.scheduler.plugins.defaultbinder import DefaultBinder
from agents.scheduler.plugins.imagelocality import MB, NAME, ImageLocality, calculate_priority
from agents.scheduler.plugins.queuesort import PrioritySort
from emulator.base.api.core import ContainerImage, Node, Pod
from tests import builders


class FakeHandle:
    """Just the snapshot, which is all ImageLocality reads from its handle."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot

    def snapshot_shared_lister(self) -> Snapshot:
        return self._snapshot


def images(*entries: tuple[list[str], int]) -> list[ContainerImage]:
    return [ContainerImage(names=names, size_bytes=size_mb * MB) for names, size_mb in entries]


NODE_40_300_2000 = images(
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300),
    (["gcr.io/2000:latest"], 2000),
)
NODE_250_10 = images((["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10))
NODE_600_40_900 = images((["gcr.io/600:latest"], 600), (["gcr.io/40:latest"], 40), (["gcr.io/900:latest"], 900))
NODE_300_600_900 = images((["gcr.io/300:latest"], 300), (["gcr.io/600:latest"], 600), (["gcr.io/900:latest"], 900))
NODE_4000_30 = images((["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30))
NODE_20_30_40 = images((["gcr.io/20:latest"], 20), (["gcr.io/30:latest"], 30), (["gcr.io/40:latest"], 40))
NO_IMAGES: list[ContainerImage] = []


def pod(*images_: str, init: tuple[str, ...] = ()) -> Pod:
    containers = [builders.container(f"c{i}", image=im) for i, im in enumerate(images_)]
    inits = [builders.container(f"i{i}", image=im) for i, im in enumerate(init)]
    return builders.pod("p", uid="u", containers=containers, init_containers=inits)


def node(name: str, imgs: list[ContainerImage]) -> Node:
    return builders.node(name, cpu=None, memory=None, pods=None, images=imgs)


@pytest.mark.parametrize(
    ("p", "nodes", "want"),
    [
        # node2: 250M * 1/2 = 125M → 100 * (125M - 23M) // (2000M - 23M) = 5; node1: 40M/2 < 23M → 0
        pytest.param(
            pod("gcr.io/40", "gcr.io/250"),
            [("node1", NODE_40_300_2000), ("node2", NODE_250_10)],
            [("node1", 0), ("node2", 5)],
            id="two images spread on two nodes, prefer the larger image one",
        ),
        # node1: (40M + 300M) / 2 = 170M → 100 * (170M - 23M) // (2000M - 23M) = 7
        pytest.param(
            pod("gcr.io/40", "gcr.io/300"),
            [("node1", NODE_40_300_2000), ("node2", NODE_250_10)],
            [("node1", 7), ("node2", 0)],
            id="two images on one node, prefer this node",
        ),
        pytest.param(
            pod("gcr.io/10", "gcr.io/4000"),
            [("node1", NODE_4000_30), ("node2", NODE_250_10)],
            [("node1", 100), ("node2", 0)],
            id="if exceed limit, use limit",
        ),
        # node1: 4000M / 3 → 100 * (4000M/3 - 23M) // (2000M - 23M) = 66
        pytest.param(
            pod("gcr.io/10", "gcr.io/4000"),
            [("node1", NODE_4000_30), ("node2", NODE_250_10), ("node3", NO_IMAGES)],
            [("node1", 66), ("node2", 0), ("node3", 0)],
            id="if exceed limit, use limit (with node which has no images present)",
        ),
        pytest.param(
            pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
            [("node1", NODE_600_40_900), ("node2", NODE_300_600_900), ("node3", NO_IMAGES)],
            [("node1", 32), ("node2", 36), ("node3", 0)],
            id="pod with multiple large images, node2 is preferred",
        ),
        pytest.param(
            pod("gcr.io/30", "gcr.io/40"),
            [("node1", NODE_20_30_40), ("node2", NODE_4000_30)],
            [("node1", 1), ("node2", 0)],
            id="pod with multiple small images",
        ),
        pytest.param(
            pod("gcr.io/30", init=("gcr.io/300",)),
            [("node1", NODE_40_300_2000), ("node2", NODE_20_30_40)],
            [("node1", 6), ("node2", 0)],
            id="include InitContainers: two images spread on two nodes, prefer the larger image one",
        ),
        # Beyond upstream's table: a tagged pod image matches only that tag, and a node's
        # duplicate names for one image count once.
        pytest.param(
            pod("gcr.io/300:v1", "gcr.io/2000:v9"),
            [("node1", NODE_40_300_2000)],
            [("node1", 100 * (300 * MB - 23 * MB) // (2000 * MB - 23 * MB))],
            id="tagged image matches its own tag only",
        ),
    ],
)
def test_score(p: Pod, nodes: list[tuple[str, list[dict[str, Any]]]], want: list[tuple[str, int]]) -> None:
    snapshot = Snapshot.from_objects([], [node(n, imgs) for n, imgs in nodes])
    pl = ImageLocality(None, FakeHandle(snapshot))  # type: ignore[arg-type]
    got = []
    for n, _ in nodes:
        score, status = pl.score(CycleState(), p, snapshot.get(n))
        assert status.is_success()
        got.append((n, score))
    assert got == want


@pytest.mark.parametrize(
    ("sum_scores", "containers", "want"),
    [
        pytest.param(0, 1, 0, id="below-min-threshold"),
        pytest.param(23 * MB, 1, 0, id="at-min-threshold"),
        pytest.param(1000 * MB, 1, 100, id="at-max-threshold"),
        pytest.param(5000 * MB, 2, 100, id="above-max-threshold"),
        pytest.param(511 * MB + MB // 2, 1, 50, id="midpoint"),
        pytest.param(0, 0, 0, id="no-containers"),
    ],
)
def test_calculate_priority(sum_scores: int, containers: int, want: int) -> None:
    assert calculate_priority(sum_scores, containers) == want


def _digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param("root", "root:latest", id="add :latest postfix 1"),
        pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add :latest postfix 2"),
        pytest.param("root:tag", "root:tag", id="keep it as is 1"),
        pytest.param("root@" + _digest("root"), "root@" + _digest("root"), id="keep it as is 2"),
    ],
)
def test_normalized_image_name(name: str, want: str) -> None:
    assert normalized_image_name(name) == want


def test_name() -> None:
    assert ImageLocality.name == NAME == "ImageLocality"


class _Clock:
    virtual = True

    def now(self) -> float:
        return 0.0


def test_through_the_framework_reads_the_snapshot_it_is_given() -> None:
    """Built by the runtime (its Handle), ImageLocality counts the nodes of the framework's snapshot."""
    spec = ProfileSpec(
        plugins={
            EP.QueueSort: [("PrioritySort", 0)],
            EP.Bind: [("DefaultBinder", 0)],
            EP.Score: [(NAME, 2)],
        }
    )
    registry: dict[str, Any] = {"PrioritySort": PrioritySort, "DefaultBinder": DefaultBinder, NAME: ImageLocality}
    nodes = [node("node1", NODE_4000_30), node("node2", NODE_250_10), node("node3", NO_IMAGES)]
    snapshot = Snapshot.from_objects([], nodes)
    fw = Framework(spec, registry, clock=_Clock(), rng=random.Random(0), snapshot=snapshot)  # type: ignore[arg-type]
    scores, status = fw.run_score_plugins(CycleState(), pod("gcr.io/10", "gcr.io/4000"), snapshot.node_info_list)
    assert status.is_success()
    assert [(s.name, s.scores[0].raw_score, s.total_score) for s in scores] == [
        ("node1", 66, 132),
        ("node2", 0, 0),
        ("node3", 0, 0),
    ]
