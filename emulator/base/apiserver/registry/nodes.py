"""Nodes and Namespaces: the cluster-scoped core kinds (upstream ``pkg/registry/core/node``
and ``.../namespace``)."""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from emulator.base.api.core import NamespaceStatus
from emulator.base.apiserver.defaults import default_node
from emulator.base.apiserver.registry.strategy import Strategy, field_text

__all__ = ["NamespaceStrategy", "NodeStrategy"]


class NodeStrategy(Strategy):
    kind = "Node"
    namespaced = False
    generation_on_create = True
    fields = {"spec.unschedulable": lambda node: field_text(node.spec.unschedulable)}

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        return default_node(obj)


class NamespaceStrategy(Strategy):
    kind = "Namespace"
    namespaced = False
    fields = {"status.phase": lambda ns: ns.status.phase}

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        # upstream: every namespace carries kubernetes.io/metadata.name=<name>, and
        # PrepareForCreate sets its phase Active
        labels = {**obj.metadata.labels, "kubernetes.io/metadata.name": obj.metadata.name}
        return replace(obj, metadata=replace(obj.metadata, labels=labels), status=NamespaceStatus(phase="Active"))
