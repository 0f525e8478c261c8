"""Nodes and Namespaces: the cluster-scoped core kinds (upstream ``pkg/registry/core/node``
and ``.../namespace``)."""

from __future__ import annotations

from typing import Any, Final

from msgspec.structs import replace

from emulator.base.api.core import NamespaceSpec, NamespaceStatus
from emulator.base.apiserver.defaults import default_node
from emulator.base.apiserver.registry.strategy import Strategy, field_text

__all__ = ["FINALIZER_KUBERNETES", "TERMINATING", "NamespaceStrategy", "NodeStrategy"]

FINALIZER_KUBERNETES: Final = "kubernetes"
"""Upstream ``FinalizerKubernetes``: the namespace controller's spec finalizer."""
TERMINATING: Final = "Terminating"


class NodeStrategy(Strategy):
    kind = "Node"
    namespaced = False
    generation_on_create = True
    fields = {"spec.unschedulable": lambda node: field_text(node.spec.unschedulable)}

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        return default_node(obj)


class NamespaceStrategy(Strategy):
    """Upstream ``pkg/registry/core/namespace`` (strategy and storage): created ``Active`` with
    the ``kubernetes`` spec finalizer; a delete only marks it ``Terminating`` while a spec
    finalizer remains (the namespace controller deletes the content, then removes
    ``kubernetes``); the write that removes the last one removes the namespace. Upstream
    removes spec finalizers through the ``namespaces/<name>/finalize`` subresource; here a
    status write carries them (the only writer is the namespace controller)."""

    kind = "Namespace"
    namespaced = False
    fields = {"status.phase": lambda ns: ns.status.phase}

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        # upstream: every namespace carries kubernetes.io/metadata.name=<name>, and
        # PrepareForCreate sets its phase Active and requires the kubernetes finalizer
        labels = {**obj.metadata.labels, "kubernetes.io/metadata.name": obj.metadata.name}
        finalizers = obj.spec.finalizers
        if FINALIZER_KUBERNETES not in finalizers:
            finalizers = [*finalizers, FINALIZER_KUBERNETES]
        return replace(
            obj,
            metadata=replace(obj.metadata, labels=labels),
            spec=NamespaceSpec(finalizers=finalizers),
            status=NamespaceStatus(phase="Active"),
        )

    def prepare_for_update(self, current: Any, candidate: Any) -> Any:
        return replace(candidate, spec=current.spec)  # only finalize changes spec.finalizers

    def prepare_for_status_update(self, current: Any, obj: Any) -> Any:
        # the finalize subresource, folded into the status write
        return replace(current, spec=NamespaceSpec(finalizers=obj.spec.finalizers), status=obj.status)

    def held_on_delete(self, current: Any) -> Any | None:
        if not current.spec.finalizers:
            return None
        return replace(current, status=replace(current.status, phase=TERMINATING))

    def status_update_deletes(self, candidate: Any) -> bool:
        meta = candidate.metadata
        return meta.deletion_timestamp is not None and not meta.finalizers and not candidate.spec.finalizers
