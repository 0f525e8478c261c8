"""A scenario with ``storage.drivers`` through the runner (virtual time) and through
``python -m emulator serve`` with the real kubectl: the drivers' work is visible."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from emulator.app.scenario.loader import load_scenario, load_scenario_text
from emulator.app.scenario.runner import RunOptions, run_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = Path(__file__).with_name("data") / "storage.yaml"
KUBECTL = Path("/usr/bin/kubectl")


def test_the_runner_starts_the_drivers() -> None:
    written: list[tuple[str, str]] = []
    last: dict[str, object] = {}

    def listen(w: object) -> None:
        written.append((w.kind, w.verb))  # type: ignore[attr-defined]
        if w.new is not None:  # type: ignore[attr-defined]
            last[w.kind] = w.new  # type: ignore[attr-defined]

    options = RunOptions(on_write=listen)
    result = run_scenario(load_scenario(SCENARIO), options)
    (drivers,) = [a["csiDrivers"] for a in result.extra["agents"] if "csiDrivers" in a]
    assert drivers["ebs.csi.aws.com"]["provisioned"] == 1
    for write in [("CSIDriver", "create"), ("CSINode", "create"), ("CSIStorageCapacity", "update")]:
        assert write in written
    assert last["PersistentVolumeClaim"].status.phase == "Bound"  # type: ignore[attr-defined]
    assert last["PersistentVolume"].status.phase == "Bound"  # type: ignore[attr-defined]
    again = run_scenario(load_scenario(SCENARIO))
    assert again.trace_hash == result.trace_hash


@pytest.mark.real_time
@pytest.mark.skipif(not KUBECTL.exists(), reason="kubectl is not installed at /usr/bin/kubectl")
def test_kubectl_get_shows_the_drivers_work(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    home = tmp_path / "home"
    (home / "cache").mkdir(parents=True)
    argv = [sys.executable, "-m", "emulator", "serve", str(SCENARIO), "--port", "0", "--kubeconfig", str(kubeconfig)]
    argv += ["--token", "none", "--speed", "20"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("KUBECONFIG", None)
    stderr = tmp_path / "serve.stderr"
    with stderr.open("wb") as err:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 60
        while not kubeconfig.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert kubeconfig.exists(), stderr.read_text()
        kenv = {"PATH": os.environ.get("PATH", "/usr/bin"), "HOME": str(home), "KUBECACHEDIR": str(home / "cache")}
        kenv["KUBECONFIG"] = str(kubeconfig)
        out = ""
        while time.monotonic() < deadline:
            got = subprocess.run(
                [str(KUBECTL), "get", "pv,pvc,sc,csinode,csidriver", "-A"],
                capture_output=True,
                text=True,
                env=kenv,
                timeout=30,
                check=False,
            )
            assert got.returncode == 0, got.stderr
            out = got.stdout
            # kubectl lists the kinds one after another: the PVC may read Bound in a listing
            # whose PV list, taken just before, missed the PV provisioned meanwhile or showed
            # it before its phase was Bound
            if out.count("Bound") == 2 and "persistentvolume/pvc-" in out:
                break
            time.sleep(0.2)
        assert "persistentvolume/pvc-" in out, out
        assert "persistentvolumeclaim/data" in out, out
        assert "storageclass.storage.k8s.io/ebs" in out, out
        assert "csinode.storage.k8s.io/node-0" in out, out
        assert "csidriver.storage.k8s.io/ebs.csi.aws.com" in out, out
        assert out.count("Bound") == 2, out  # the PV and the claim
    finally:
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_failing_api_makes_the_provisioner_retry() -> None:
    """A fault aimed at the driver (``csi:<name>``): its PV creates fail for 10 s; it
    reports ProvisioningFailed and retries until the volume is made."""
    text = SCENARIO.read_text() + (
        "faults:\n"
        "  - apiError: {verb: create, kind: PersistentVolume, agent: 'csi:*', error: InternalError, stop: 10s}\n"
    )
    written: list[tuple[str, str, float]] = []

    def listen(w: Any) -> None:
        if w.kind == "PersistentVolume" and w.verb == "create":
            written.append((w.kind, w.verb, w.time))
        if w.kind == "Event" and w.new is not None and w.new.reason == "ProvisioningFailed":
            written.append(("Event", "ProvisioningFailed", w.time))

    scenario = load_scenario_text(text, source="storage.yaml", base_dir=SCENARIO.parent)
    run_scenario(scenario, RunOptions(on_write=listen))
    creates = [t for k, _v, t in written if k == "PersistentVolume"]
    assert len(creates) == 1
    assert creates[0] >= 10.0
    assert any(v == "ProvisioningFailed" for _k, v, _t in written)
