"""Fixtures for the session tests: one ``python -m emulator serve`` subprocess per module.

What this owns: starting the server through its CLI contract (``serve FILE --port 0
--kubeconfig PATH --token auto --speed N``), waiting for the kubeconfig it writes atomically
once listening (a poll with a deadline; on timeout the test fails with the server's stderr),
a ``kubectl(*args)`` helper that runs the real kubectl in a private ``HOME`` and
``KUBECACHEDIR`` (the discovery cache must never outlive a server, see the surface doc §1.3),
and the clean shutdown at teardown: SIGTERM, then exit status 0 and the report on stdout.

What it does not own: what the tests assert. A module chooses the simulated speed with a
module-level ``SERVE_SPEED`` (default ``DEFAULT_SPEED``) and ``--token`` with ``SERVE_TOKEN``
(default ``auto``).
"""

from __future__ import annotations

import base64
import contextlib
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
SCENARIO = DATA / "session.yaml"
KUBECTL = Path("/usr/bin/kubectl")
NO_KUBECTL = f"kubectl is not installed at {KUBECTL}: the session tests drive the real kubectl"
DEFAULT_SPEED = 10.0
"""Ten simulated seconds per wall second: a rollout of the session's pods (container start
about 1 s simulated) takes a fraction of a wall second."""
READY_TIMEOUT = 60.0
"""Wall seconds to wait for the kubeconfig (the server imports, builds the cluster, binds)."""
STOP_TIMEOUT = 30.0


def _wall() -> float:
    """The wall clock the fixtures' deadlines use (the tests talk to a real subprocess)."""
    return time.monotonic()


@dataclass
class Server:
    """A running ``serve`` subprocess and what it told us."""

    proc: subprocess.Popen[bytes]
    kubeconfig: Path
    home: Path
    stdout_path: Path
    stderr_path: Path
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return str(self.config["clusters"][0]["cluster"]["server"])

    @property
    def token(self) -> str | None:
        user = self.config["users"][0]["user"] or {}
        token = user.get("token")
        return None if token is None else str(token)

    def ca_file(self) -> Path:
        """The kubeconfig's ``certificate-authority-data`` as a PEM file, for clients that take a
        path (the Python client's ``Configuration.ssl_ca_cert``), as ``load_kube_config`` does."""
        path = self.home / "ca.crt"
        if not path.exists():
            data = self.config["clusters"][0]["cluster"]["certificate-authority-data"]
            path.write_bytes(base64.b64decode(data))
        return path

    def ssl_context(self) -> ssl.SSLContext:
        """A client TLS context that trusts only the kubeconfig's CA."""
        return ssl.create_default_context(cafile=str(self.ca_file()))

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace")

    def env(self) -> dict[str, str]:
        """kubectl's environment: a private HOME and discovery cache, this server's kubeconfig."""
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "KUBECACHEDIR": str(self.home / "cache"),
            "KUBECONFIG": str(self.kubeconfig),
            "LANG": "C.UTF-8",
        }

    def kubectl(self, *args: str, input: str | None = None, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        """Run the real kubectl against this server; never raises on a non-zero exit."""
        return subprocess.run(
            [str(KUBECTL), *args],
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=self.env(),
            check=False,
        )

    def kubectl_popen(self, *args: str) -> subprocess.Popen[str]:
        """Start a long-running kubectl (``get -w``); the caller kills it."""
        return subprocess.Popen(
            [str(KUBECTL), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env(),
        )


def _wait_for_kubeconfig(proc: subprocess.Popen[bytes], path: Path, stderr: Path) -> dict[str, Any]:
    deadline = _wall() + READY_TIMEOUT
    while _wall() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"serve exited with {proc.returncode} before listening:\n{stderr.read_text(errors='replace')}")
        if path.exists():
            config = yaml.safe_load(path.read_text())
            assert isinstance(config, dict), f"the kubeconfig is not a mapping: {config!r}"
            return config
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.05)  # a poll interval that also notices an early exit
    proc.kill()
    proc.wait()
    text = stderr.read_text(errors="replace")
    pytest.fail(f"no kubeconfig at {path} after {READY_TIMEOUT}s; serve's stderr:\n{text}")


def start_server(directory: Path, *, speed: float, token: str = "auto", extra: Sequence[str] = ()) -> Server:
    kubeconfig = directory / "kubeconfig"
    home = directory / "home"
    (home / "cache").mkdir(parents=True)
    stdout_path, stderr_path = directory / "serve.stdout", directory / "serve.stderr"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("KUBECONFIG", None)
    command = [
        sys.executable,
        "-m",
        "emulator",
        "serve",
        str(SCENARIO),
        "--port",
        "0",
        "--kubeconfig",
        str(kubeconfig),
        "--token",
        token,
        "--speed",
        f"{speed:g}",
        *extra,
    ]
    out: IO[bytes]
    err: IO[bytes]
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=err)
    server = Server(proc, kubeconfig, home, stdout_path, stderr_path)
    server.config = _wait_for_kubeconfig(proc, kubeconfig, stderr_path)
    return server


def stop_server(server: Server) -> None:
    """SIGTERM, then the clean exit the contract promises: status 0 and the report."""
    if server.proc.poll() is None:
        server.proc.send_signal(signal.SIGTERM)
        try:
            server.proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            server.proc.wait()
            pytest.fail(f"serve did not stop within {STOP_TIMEOUT}s of SIGTERM:\n{server.stderr()}")
    assert server.proc.returncode == 0, f"serve exited with {server.proc.returncode}:\n{server.stderr()}"


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    """One ``serve`` of ``data/session.yaml`` for the whole module (the tests share its state)."""
    speed = float(getattr(request.module, "SERVE_SPEED", DEFAULT_SPEED))
    token = str(getattr(request.module, "SERVE_TOKEN", "auto"))
    with tempfile.TemporaryDirectory(prefix="kube-emulator-http-") as tmp:
        srv = start_server(Path(tmp), speed=speed, token=token)
        try:
            yield srv
        finally:
            stop_server(srv)
        stdout = srv.stdout()
        assert f"kube-emulator: serving {srv.url}" in stdout, stdout
        assert f"export KUBECONFIG={srv.kubeconfig}" in stdout, stdout


@pytest.fixture(scope="module")
def kubectl_server(server: Server) -> Server:
    """``server``, for tests that need the real kubectl (skipped when it is absent)."""
    if not KUBECTL.exists():
        pytest.skip(NO_KUBECTL)
    return server


def ok(result: subprocess.CompletedProcess[str]) -> str:
    """The stdout of a kubectl run that must succeed (its stderr in the failure message)."""
    assert result.returncode == 0, f"kubectl {result.args[1:]} exited {result.returncode}:\n{result.stderr}"
    return result.stdout


def failed(result: subprocess.CompletedProcess[str]) -> str:
    """The stderr of a kubectl run that must fail."""
    assert result.returncode != 0, f"kubectl {result.args[1:]} succeeded:\n{result.stdout}"
    return result.stderr
