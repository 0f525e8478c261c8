"""The storage objects upstream's scheduler_perf writes itself (``test/utils/runners.go``), for
the ``createNodes`` and ``createPods`` ops that ask for them. Upstream runs no PV controller
and no CSI driver there; neither does the bench: the harness writes these objects as the
test driver.

==========================  =====================================================================
op field                    what is written
==========================  =====================================================================
``nodeAllocatableStrategy``  per node (``NodeAllocatableStrategy``): its ``status.allocatable``
                            gains ``nodeAllocatable``'s entries, and a CSINode of the node's name
                            lists ``csiNodeAllocatable``'s drivers (``nodeID`` the node's name,
                            their ``allocatable``) with ``migratedPlugins`` joined by "," in the
                            ``storage.alpha.kubernetes.io/migrated-plugins`` annotation
``persistentVolume(Claim)``  per pod i of the op (``CreatePodWithPersistentVolume`` with
``TemplatePath``            ``bindVolume``): the claim ``pvc-<i>`` from its template, bound to
                            the volume ``<namespace>-vol-<i>`` (``spec.volumeName``, status
                            ``Bound``), created first; then that volume from its template
                            (``getCustomVolumeFactory``: a CSI source's ``volumeHandle`` is the
                            volume's name, an ``awsElasticBlockStore``'s ``volumeID`` is
                            ``vol-<i>``), its ``claimRef`` the claim, status ``Bound``; each
                            status written after the create, as upstream does; then the pod,
                            its volumes replaced by one, ``vol``, mounting the claim
==========================  =====================================================================

In-tree volumes (``awsElasticBlockStore``) are left as they are: the scheduler counts and
places them as their CSI-migrated driver (``nodevolumelimits.py``, ``csimigration.py``), as
upstream's scheduler does.

Owns: ``node_allocatable`` and ``volume_templates`` (reading the op fields, for
``resolve.py``), ``prepare_node`` and ``claimed_pod`` (writing, for ``harness.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec.structs import replace

from emulator.app.bench.spec import CreatePodsOp, NodeAllocatableStrategy
from emulator.app.bench.steps import NodeAllocatable, PodsStep
from emulator.base.api.core import Pod
from emulator.base.api.csimigration import MIGRATED_PLUGINS_ANNOTATION
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.api.quantity import parse_quantity
from emulator.base.api.storage import (
    CSINode,
    CSINodeDriver,
    CSINodeSpec,
    PersistentVolume,
    PersistentVolumeClaim,
    VolumeNodeResources,
)
from emulator.base.api.volumes import PersistentVolumeClaimVolumeSource, Volume

__all__ = ["MIGRATED_PLUGINS_ANNOTATION", "claimed_pod", "node_allocatable", "prepare_node", "volume_templates"]

"""Upstream's ``v1.MigratedPluginsAnnotationKey``."""

Fail = Callable[[str, str], Exception]
Made = Callable[[dict[str, Any]], dict[str, Any]]


def node_allocatable(strategy: NodeAllocatableStrategy | None, fail: Fail, path: str) -> NodeAllocatable | None:
    """A createNodes op's ``nodeAllocatableStrategy``, checked (quantities parse)."""
    if strategy is None:
        return None
    for name, value in strategy.node_allocatable.items():
        try:
            parse_quantity(value)
        except ValueError as err:
            raise fail(f"{path}.nodeAllocatable.{name}", str(err)) from None
    return NodeAllocatable(
        tuple(sorted(strategy.node_allocatable.items())),
        tuple(sorted((driver, r.count) for driver, r in strategy.csi_node_allocatable.items())),
        tuple(strategy.migrated_plugins),
    )


def volume_templates(
    op: CreatePodsOp, typed: Callable[[str, type[Any], str, Made], Any], fail: Fail, path: str
) -> tuple[PersistentVolume | None, PersistentVolumeClaim | None]:
    """A createPods op's PersistentVolume and PersistentVolumeClaim templates (both or neither:
    upstream reads the volume template whenever a claim template is given)."""
    pv, pvc = op.persistent_volume_template, op.persistent_volume_claim_template
    if pv is None and pvc is None:
        return None, None
    if pv is None or pvc is None:
        missing = "persistentVolumeTemplate" if pv is None else "persistentVolumeClaimTemplate"
        raise fail(f"{path}.{missing}", "required with the other of persistentVolume(Claim)Template")
    return (
        typed(pv, PersistentVolume, f"{path}.persistentVolumeTemplate", _volume_zero),
        typed(pvc, PersistentVolumeClaim, f"{path}.persistentVolumeClaimTemplate", _claim_zero),
    )


def _named(doc: dict[str, Any], name: str) -> dict[str, Any]:
    meta = doc.get("metadata")
    return {**doc, "metadata": {**(meta if isinstance(meta, dict) else {}), "name": name}}


def _claim_zero(doc: dict[str, Any]) -> dict[str, Any]:
    return _named(doc, "pvc-0")


def _volume_zero(doc: dict[str, Any]) -> dict[str, Any]:
    """Upstream's ``getCustomVolumeFactory(template)(0)``, as a document (checked when loaded)."""
    doc = _named(doc, "vol-0")
    spec = doc.get("spec")
    if isinstance(spec, dict):
        for source, key in (("csi", "volumeHandle"), ("awsElasticBlockStore", "volumeID")):
            if isinstance(spec.get(source), dict):
                doc = {**doc, "spec": {**spec, source: {**spec[source], key: "vol-0"}}}
                break
    return doc


def prepare_node(server: Any, name: str, strategy: NodeAllocatable) -> None:
    """Upstream's ``NodeAllocatableStrategy.PreparePatch`` and ``PrepareDependentObjects``."""
    if strategy.node_allocatable:
        node = server.get("Node", name)
        extra = {key: parse_quantity(value) for key, value in strategy.node_allocatable}
        status = replace(node.status, allocatable={**node.status.allocatable, **extra})
        server.update_status(replace(node, status=status))
    drivers = [
        CSINodeDriver(
            name=driver, node_id=name, allocatable=VolumeNodeResources(count=count) if count is not None else None
        )
        for driver, count in strategy.csi_drivers
    ]
    annotations = {MIGRATED_PLUGINS_ANNOTATION: ",".join(strategy.migrated_plugins)}
    server.create(CSINode(metadata=ObjectMeta(name=name, annotations=annotations), spec=CSINodeSpec(drivers=drivers)))


def claimed_pod(server: Any, namespace: str, index: int, step: PodsStep, pod: Pod) -> Pod:
    """Create pod ``index``'s claim and volume, bound to each other; the pod mounting the claim."""
    assert step.volume is not None
    assert step.claim is not None
    claim_name, volume_id = f"pvc-{index}", f"vol-{index}"
    pv_name = f"{namespace}-{volume_id}"
    spec = step.volume.spec
    if spec.csi is not None:
        spec = replace(spec, csi=replace(spec.csi, volume_handle=pv_name))
    elif spec.aws_elastic_block_store is not None:
        spec = replace(spec, aws_elastic_block_store={**spec.aws_elastic_block_store, "volumeID": volume_id})
    ref = ObjectReference(kind="PersistentVolumeClaim", namespace=namespace, name=claim_name, api_version="v1")
    pvc = step.claim
    pvc = replace(
        pvc,
        metadata=replace(pvc.metadata, name=claim_name, generate_name="", namespace=namespace),
        spec=replace(pvc.spec, volume_name=pv_name),
    )
    created = server.create(pvc)
    server.update_status(replace(created, status=replace(pvc.status, phase="Bound")))
    pv = replace(
        step.volume,
        metadata=replace(step.volume.metadata, name=pv_name, generate_name=""),
        spec=replace(spec, claim_ref=ref),
    )
    created = server.create(pv)
    server.update_status(replace(created, status=replace(pv.status, phase="Bound")))
    volume = Volume(name="vol", persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=claim_name))
    unmodelled = {key: value for key, value in pod.spec.unmodelled.items() if key != "volumes"}
    return replace(pod, spec=replace(pod.spec, volumes=[volume], unmodelled=unmodelled))
