"""``python -m emulator serve`` as a user runs it: a subprocess on a free port, a kubeconfig
in a temporary directory, real signals.

Readiness is the handshake the command promises (the ready line on stdout, printed once the
kubeconfig is written), never a sleep. Every server started here is stopped by its PID.
"""

from __future__ import annotations

import base64
import json
import os
import re
import select
import signal
import socket
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from emulator.base.http.discovery import version

pytestmark = pytest.mark.real_time

ROOT = Path(__file__).resolve().parents[2]
READY = re.compile(r"^kube-emulator: serving (https?://127\.0\.0\.1:\d+) \((\d+) nodes?\) — export KUBECONFIG=(\S+)$")
STARTUP = 60.0
"""Real seconds a server may take to print its ready line on a loaded machine (a bound, not a timing assertion)."""


@dataclass
class Served:
    proc: subprocess.Popen[str]
    url: str
    nodes: int
    kubeconfig: Path

    def config(self) -> dict[str, Any]:
        doc: dict[str, Any] = yaml.safe_load(self.kubeconfig.read_text())
        return doc

    def get(self, path: str, *, token: str | None) -> tuple[int, dict[str, Any]]:
        """GET ``path`` with ``token`` (None: no Authorization header), trusting the kubeconfig's CA."""
        cluster = self.config()["clusters"][0]["cluster"]
        context = None
        if "certificate-authority-data" in cluster:
            ca = base64.b64decode(cluster["certificate-authority-data"]).decode()
            context = ssl.create_default_context(cadata=ca)
        request = urllib.request.Request(self.url + path)
        if token is not None:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, context=context, timeout=STARTUP) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as err:
            return err.code, json.load(err)

    def stop(self, sig: signal.Signals) -> tuple[int, str, str]:
        self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=STARTUP)
        return self.proc.returncode, out, err


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _serve(tmp_path: Path, *args: str) -> Iterator[Served]:
    kubeconfig = tmp_path / "kubeconfig"
    argv = [sys.executable, "-m", "emulator", "serve", *args, "--port", "0", "--kubeconfig", str(kubeconfig)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=tmp_path)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], STARTUP)
        line = proc.stdout.readline().rstrip("\n") if ready else ""
        match = READY.match(line)
        assert match, f"no ready line: {line!r}; stderr: {proc.stderr.read() if proc.poll() is not None else ''}"
        assert kubeconfig.exists()  # written before the line is printed
        yield Served(proc, match[1], int(match[2]), Path(match[3]))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from _serve(tmp_path)


# --- serving the default cluster -----------------------------------------------------------


def test_ready_line_names_the_url_nodes_and_an_absolute_kubeconfig(served: Served, tmp_path: Path) -> None:
    assert served.url.startswith("https://")  # a token is required: kubectl sends it only over TLS
    assert served.nodes == 3
    assert served.kubeconfig == tmp_path / "kubeconfig"
    assert os.stat(served.kubeconfig).st_mode & 0o777 == 0o600
    config = served.config()
    assert config["current-context"] == "kube-emulator"
    assert config["clusters"][0]["cluster"]["server"] == served.url
    assert len(config["users"][0]["user"]["token"]) >= 40


def test_the_api_needs_the_token(served: Served) -> None:
    token = served.config()["users"][0]["user"]["token"]
    status, body = served.get("/version", token=token)
    assert (status, body["gitVersion"]) == (200, version()["gitVersion"])
    status, body = served.get("/api", token=None)  # anonymous: RBAC's 403 (was 401)
    assert (status, body["reason"], body["code"]) == (403, "Forbidden", 403)
    status, body = served.get("/version", token="not-" + token)
    assert status == 401
    status, body = served.get("/version", token=None)  # upstream's system:public-info-viewer
    assert (status, body["gitVersion"]) == (200, version()["gitVersion"])


@pytest.mark.parametrize("sig", [pytest.param(signal.SIGTERM, id="SIGTERM"), pytest.param(signal.SIGINT, id="SIGINT")])
def test_a_signal_stops_cleanly_with_the_report(served: Served, sig: signal.Signals) -> None:
    code, out, err = served.stop(sig)
    assert (code, err) == (0, "")
    assert re.search(r"^serve-default  seed=1  clock=real  simulated ", out, re.MULTILINE)
    assert re.search(r"^PASSED  traceHash [0-9a-f]{16}$", out, re.MULTILINE)
    assert not served.kubeconfig.exists()  # a script waiting on it must not reach a dead server


def test_token_none_serves_plain_http_without_auth(tmp_path: Path) -> None:
    for served in _serve(tmp_path, "--token", "none"):
        assert served.url.startswith("http://")
        assert served.config()["users"] == [{"name": "kube-emulator", "user": {}}]
        status, body = served.get("/version", token=None)
        assert (status, body["minor"]) == (200, "32")
        code, _, _ = served.stop(signal.SIGTERM)
        assert code == 0


def test_token_file_keeps_the_token_out_of_the_arguments(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("from-a-file\n")
    for served in _serve(tmp_path, "--token-file", str(tmp_path / "token")):
        assert served.config()["users"][0]["user"]["token"] == "from-a-file"
        assert served.get("/api", token="from-a-file")[0] == 200
        assert served.get("/api", token=None)[0] == 403  # anonymous (was 401)
        code, _, _ = served.stop(signal.SIGTERM)
        assert code == 0


def test_a_scenario_at_speed_ends_at_until_with_the_json_report(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "name: paced\nseed: 3\n"
        "nodes:\n"
        '- {count: 2, namePrefix: n, template: {status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}}}\n'
        "steps:\n"
        "- createPods: {count: 3, namePrefix: p, template: {spec: {containers: [{name: c, image: busybox:1.36,"
        " resources: {requests: {cpu: 100m}}}]}}}\n"
        "- waitFor: {condition: podsRunning, count: 3, timeout: 1m}\n"
    )
    for served in _serve(tmp_path, str(scenario), "--speed", "20", "--until", "120s", "--output", "json"):
        assert served.nodes == 2
        out, err = served.proc.communicate(timeout=STARTUP)  # ends by itself: 120 s at 20x
        assert (served.proc.returncode, err) == (0, "")
        report = json.loads(out.strip().splitlines()[-1])
        assert (report["scenario"], report["clock"], report["passed"]) == ("paced", "real", True)
        assert report["simulatedSeconds"] >= 120
        assert report["pods"]["running"] == 3
        assert not served.kubeconfig.exists()


@pytest.mark.skipif(not Path("/usr/bin/kubectl").exists(), reason="kubectl is not installed at /usr/bin/kubectl")
def test_kubectl_accepts_the_kubeconfig(served: Served, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "KUBECACHEDIR": str(home / "cache"), "KUBECONFIG": str(served.kubeconfig)}
    done = subprocess.run(
        ["/usr/bin/kubectl", "version"], capture_output=True, text=True, env=env, timeout=STARTUP, check=False
    )
    assert done.returncode == 0, done.stderr
    assert f"\nServer Version: {version()['gitVersion']}\n" in done.stdout


# --- bad input -----------------------------------------------------------------------------


def _refused(tmp_path: Path, *args: str) -> tuple[str, Path]:
    kubeconfig = tmp_path / "kc"
    argv = [sys.executable, "-m", "emulator", "serve", "--kubeconfig", str(kubeconfig), *args]
    done = subprocess.run(argv, capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=STARTUP, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1, done.stderr  # one line
    return done.stderr.rstrip("\n"), kubeconfig


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param(("--speed", "-1"), r"^error: --speed: expected a number .* above 0, got '-1'$", id="neg-speed"),
        pytest.param(("--speed", "0"), r"^error: --speed: .* got '0'$", id="zero-speed"),
        pytest.param(("--port", "99999"), r"^error: --port: expected a port number from 0 to 65535", id="bad-port"),
        pytest.param(("missing.yaml",), r"^error: missing\.yaml: cannot read file: No such file", id="missing-file"),
        pytest.param(
            ("--address", "nowhere.invalid", "--port", "0"),
            r"^error: --address nowhere\.invalid: cannot resolve it",
            id="unknown-address",
        ),
    ],
)
def test_bad_input_is_one_error_line_and_nothing_left(tmp_path: Path, args: tuple[str, ...], want: str) -> None:
    message, kubeconfig = _refused(tmp_path, *args)
    assert re.match(want, message), message
    assert not kubeconfig.exists()


def test_an_unwritable_kubeconfig_directory_is_bad_input(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "kc"
    argv = [sys.executable, "-m", "emulator", "serve", "--port", "0", "--kubeconfig", str(target)]
    done = subprocess.run(argv, capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=STARTUP, check=False)
    assert done.returncode == 2
    assert done.stderr == f"error: {target}: cannot write the kubeconfig: no such directory: {target.parent}\n"


def test_someone_elses_kubeconfig_is_never_overwritten(tmp_path: Path) -> None:
    theirs = tmp_path / "kc"
    theirs.write_text("apiVersion: v1\nkind: Config\ncurrent-context: prod\n")
    message, _ = _refused(tmp_path, "--port", "0")
    assert message.endswith("exists and is not a kube-emulator kubeconfig; refusing to overwrite it")
    assert theirs.read_text() == "apiVersion: v1\nkind: Config\ncurrent-context: prod\n"


def test_a_port_in_use_is_bad_input(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        message, kubeconfig = _refused(tmp_path, "--port", str(port))
    assert message == f"error: --port {port}: cannot listen on 127.0.0.1:{port}: Address already in use"
    assert not kubeconfig.exists()
