"""The labels a kubelet registers its Node with (upstream ``pkg/kubelet/kubelet_node_status.go``
``initialNode``; the node template's labels play ``--node-labels`` and win)."""

from __future__ import annotations

import pytest

from agents.kubelet import default_labels
from emulator.base.api.core import Node
from emulator.base.api.meta import ObjectMeta

DEFAULTS = {"kubernetes.io/hostname": "n1", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}


@pytest.mark.parametrize(
    ("given", "want"),
    [
        ({}, DEFAULTS),
        ({"zone": "a"}, {**DEFAULTS, "zone": "a"}),
        ({"kubernetes.io/arch": "arm64"}, {**DEFAULTS, "kubernetes.io/arch": "arm64"}),
        ({"kubernetes.io/os": "windows"}, {**DEFAULTS, "kubernetes.io/os": "windows"}),
        ({"kubernetes.io/hostname": "host-1"}, {**DEFAULTS, "kubernetes.io/hostname": "host-1"}),
    ],
)
def test_default_labels(given: dict[str, str], want: dict[str, str]) -> None:
    node = default_labels(Node(metadata=ObjectMeta(name="n1", labels=given)))
    assert node.metadata.labels == want


def test_complete_node_is_returned_as_is() -> None:
    node = Node(metadata=ObjectMeta(name="n1", labels=dict(DEFAULTS)))
    assert default_labels(node) is node
