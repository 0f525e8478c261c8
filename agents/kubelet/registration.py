"""The labels a kubelet puts on its Node when it registers.

Upstream ``pkg/kubelet/kubelet_node_status.go`` ``initialNode`` labels the Node it registers
with ``kubernetes.io/hostname`` (the node's hostname: here its name), ``kubernetes.io/os``
(``runtime.GOOS``) and ``kubernetes.io/arch`` (``runtime.GOARCH``), then lays the
``--node-labels`` flag's labels over them; ``updateDefaultLabels`` does the same for a Node
that already exists. In the emulator the scenario creates each Node for its kubelet, so the
labels are added there (``default_labels``); the node template's own labels play
``--node-labels`` and win, which is how a node group declares another OS or architecture.
"""

from __future__ import annotations

from typing import Final

from msgspec.structs import replace

from emulator.base.api.core import Node

__all__ = ["DEFAULT_ARCH", "DEFAULT_OS", "LABEL_ARCH", "LABEL_HOSTNAME", "LABEL_OS", "default_labels"]

LABEL_HOSTNAME: Final = "kubernetes.io/hostname"
LABEL_OS: Final = "kubernetes.io/os"
LABEL_ARCH: Final = "kubernetes.io/arch"
DEFAULT_OS: Final = "linux"
"""``runtime.GOOS`` of the emulated kubelets."""
DEFAULT_ARCH: Final = "amd64"
"""``runtime.GOARCH`` of the emulated kubelets."""


def default_labels(node: Node) -> Node:
    """``node`` with the registration labels it lacks (its own labels win); the same object
    when it has them all."""
    labels = node.metadata.labels
    defaults = {LABEL_HOSTNAME: node.metadata.name, LABEL_OS: DEFAULT_OS, LABEL_ARCH: DEFAULT_ARCH}
    if all(key in labels for key in defaults):
        return node
    return replace(node, metadata=replace(node.metadata, labels={**defaults, **labels}))
