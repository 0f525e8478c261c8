"""The volume ops of upstream's scheduler_perf format, played as its test driver plays them
(``emulator/app/bench/volumes.py``): ``createNodes`` ``nodeAllocatableStrategy`` (node
allocatable + a CSINode per node with the migrated-plugins annotation) and ``createPods``
``persistentVolume(Claim)TemplatePath`` (per pod i a claim ``pvc-<i>`` pre-bound to the volume
``<namespace>-vol-<i>``, the pod mounting only that claim). Our own data files:
``tests/bench/data/perfconfig/volumes``."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

import pytest

from emulator.app.bench.harness import _Play
from emulator.app.bench.steps import NodesStep, PodsStep
from emulator.app.bench.volumes import MIGRATED_PLUGINS_ANNOTATION, claimed_pod, prepare_node
from emulator.app.bench.workload_file import load_workloads
from emulator.app.commands.arguments import add_bench
from emulator.app.commands.bench import run
from emulator.base.api.core import Namespace, Node
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.quantity import parse_quantity
from emulator.base.apiserver.server import ApiServer
from emulator.base.runtime.clock import StoppedClock

VOLUMES = Path(__file__).resolve().parent / "data" / "perfconfig" / "volumes"
CONFIG = VOLUMES / "performance-config.yaml"


def _bench(capsys: pytest.CaptureFixture[str], file: Path, *argv: str) -> tuple[int, Any]:
    parser = argparse.ArgumentParser(prog="python -m emulator")
    add_bench(parser.add_subparsers(dest="command"))
    code = run(parser.parse_args(["bench", "--file", str(file), *argv]))
    out, err = capsys.readouterr()
    return code, json.loads(out) if code == 0 else err


def test_volume_workloads_run_and_the_csinode_limits_hold(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _bench(capsys, CONFIG, "--label", "integration-test", "--stall-timeout", "20s", "--output", "json")
    assert code == 0, out
    ran = {o["workload"]: o for o in out}
    assert sorted(ran) == ["CSIDisks/one-per-node", "InTreeDisks/fits"]
    assert all(o["complete"] and o["stoppedBy"] is None for o in ran.values()), ran
    # 4 in-tree EBS disks on 2 nodes whose CSINode allows 2 ebs.csi.aws.com volumes each:
    # counted as their CSI-migrated driver, 2 per node.
    assert ran["InTreeDisks/fits"]["scheduledPods"] == 4
    assert ran["InTreeDisks/fits"]["maxPodsPerNode"] == 2


def _server() -> ApiServer:
    return ApiServer(StoppedClock(), random.Random(0))


def test_node_allocatable_strategy_writes_allocatable_and_a_csinode() -> None:
    by_name = {w.name: w for w in load_workloads(CONFIG)}
    cases = [
        (by_name["InTreeDisks/fits"], {"ebs.csi.aws.com": 2}, "kubernetes.io/aws-ebs", "2"),
        (by_name["CSIDisks/one-per-node"], {"disk.example.com": 1, "other.example.com": None}, "", None),
    ]
    for wl, drivers, migrated, extra in cases:
        step = wl.steps[0]
        assert isinstance(step, NodesStep)
        assert step.allocatable is not None
        server = _server()
        server.create(Node(metadata=ObjectMeta(name="n0"), status=step.template.status))
        prepare_node(server, "n0", step.allocatable)
        node = server.get("Node", "n0")
        got = node.status.allocatable.get("attachable-volumes-csi-ebs.csi.aws.com")
        assert got == (parse_quantity(extra) if extra else None), wl.name
        assert node.status.allocatable["cpu"] == parse_quantity("4")  # the rest kept
        csi_node = server.get("CSINode", "n0")
        assert csi_node.metadata.annotations == {MIGRATED_PLUGINS_ANNOTATION: migrated}
        assert [d.name for d in csi_node.spec.drivers] == sorted(drivers)
        assert all(d.node_id == "n0" for d in csi_node.spec.drivers)
        counts = {d.name: d.allocatable.count if d.allocatable else None for d in csi_node.spec.drivers}
        assert counts == drivers, wl.name


def test_each_pod_gets_its_own_claim_pre_bound_to_its_own_volume() -> None:
    by_name = {w.name: w for w in load_workloads(CONFIG)}
    cases = [  # workload, step, (volume source field, per-pod value)
        ("InTreeDisks/fits", 1, lambda pv: pv.spec.aws_elastic_block_store["volumeID"], "vol-{k}"),
        ("CSIDisks/one-per-node", 2, lambda pv: pv.spec.csi.volume_handle, "namespace-2-vol-{k}"),
    ]
    for name, index, source, expected in cases:
        step = by_name[name].steps[index]
        assert isinstance(step, PodsStep)
        server = _server()
        server.create(Namespace(metadata=ObjectMeta(name=step.namespace)))
        for k in range(2):
            pod = claimed_pod(server, step.namespace, k, step, _Play.pod(step, k))
            assert [
                (v.name, v.persistent_volume_claim.claim_name if v.persistent_volume_claim else None)
                for v in pod.spec.volumes
            ] == [("vol", f"pvc-{k}")]
            assert "volumes" not in pod.spec.unmodelled  # the template's emptyDir is replaced, as upstream does
            pvc = server.get("PersistentVolumeClaim", f"pvc-{k}", step.namespace)
            pv = server.get("PersistentVolume", f"{step.namespace}-vol-{k}")
            assert (pvc.spec.volume_name, pvc.status.phase) == (pv.metadata.name, "Bound")
            assert pvc.metadata.annotations["pv.kubernetes.io/bind-completed"] == "true"
            assert pvc.metadata.labels == {"app": "disk-user"}
            ref = pv.spec.claim_ref
            assert (ref.kind, ref.namespace, ref.name, ref.api_version) == (
                "PersistentVolumeClaim",
                step.namespace,
                f"pvc-{k}",
                "v1",
            )
            assert pv.status.phase == "Bound"
            assert source(pv) == expected.format(k=k)


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("claim-without-volume", "persistentVolumeTemplate: required with the other"),
        ("wrong-kind", "is a ConfigMap, expected a PersistentVolume"),
        ("bad-quantity", "nodeAllocatable.attachable-volumes-csi-ebs.csi.aws.com: quantities must match"),
    ],
)
def test_bad_volume_ops_are_one_error_line(capsys: pytest.CaptureFixture[str], case: str, message: str) -> None:
    code, err = _bench(capsys, VOLUMES / "cases" / f"{case}.yaml")
    assert code == 2
    assert err.count("\n") == 1
    assert err.startswith("error: ")
    assert message in err
