"""What the emulator's Karpenter (``controller:karpenter``, kubernetes-sigs/karpenter v1.9.1 with
its kwok provider) does not act on in a NodePool, as ``(path, text)`` for a warning: the
scenario loader prints them, ``serve`` answers them as ``Warning`` headers. Never silently
dropped: each says what upstream would do instead.

- ``spec.replicas``: a static NodePool. Upstream's static provisioning keeps that many
  NodeClaims; here it launches none (the dynamic provisioner skips static NodePools, as
  upstream's does).
- ``spec.template.spec.nodeClassRef`` of another provider: upstream's kwok provider does not
  manage the NodePool (``IsManaged``) and neither does the emulator: the NodePool is ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from emulator.base.api.karpenter import NodePool

__all__ = ["KWOK_NODE_CLASS", "karpenter_ignored"]

KWOK_NODE_CLASS: Final = ("karpenter.kwok.sh", "KWOKNodeClass")


def karpenter_ignored(obj: Any) -> Iterator[tuple[str, str]]:
    """The module docstring's warnings for a NodePool (none for any other object)."""
    if not isinstance(obj, NodePool) or obj.spec is None:
        return
    spec = obj.spec
    if spec.replicas is not None:
        yield (
            "spec.replicas",
            f"ignored: static NodePools are not modelled (upstream keeps {spec.replicas} NodeClaims); "
            "this NodePool launches none",
        )
    t = spec.template.spec if spec.template is not None else None
    ref = t.node_class_ref if t is not None else None
    if ref is not None and (ref.group, ref.kind) != KWOK_NODE_CLASS:
        yield (
            "spec.template.spec.nodeClassRef",
            f"ignored NodePool: {ref.group}/{ref.kind} is not the kwok provider's NodeClass "
            f"({'/'.join(KWOK_NODE_CLASS)}); Karpenter does not manage it",
        )
