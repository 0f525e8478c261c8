"""The serve command's pure parts: option parsing, the kubeconfig writer, the TLS identity,
the default cluster. No sockets, no subprocess (``test_serve_cli.py`` runs the command)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cryptography import x509

from emulator.app.commands.common import UsageError
from emulator.app.commands.serve import (
    DEFAULT_SCENARIO,
    address_warning,
    is_loopback,
    parse_port,
    parse_speed,
    parse_token,
    read_token_file,
    ready_line,
)
from emulator.app.scenario.loader import load_scenario
from emulator.base.api.core import Node
from emulator.base.api.scheduling import PriorityClass
from emulator.base.http import certs, kubeconfig

ROOT = str(Path(__file__).resolve().parents[2])

# --- options -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("1", 1.0, id="one"),
        pytest.param("10", 10.0, id="ten"),
        pytest.param("0.25", 0.25, id="slower"),
    ],
)
def test_speed_accepted(text: str, want: float) -> None:
    assert parse_speed(text) == want


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("0", id="zero"),
        pytest.param("-1", id="negative"),
        pytest.param("inf", id="infinite"),
        pytest.param("nan", id="nan"),
        pytest.param("fast", id="not-a-number"),
    ],
)
def test_speed_refused(text: str) -> None:
    with pytest.raises(UsageError, match=rf"^--speed: expected a number of .* above 0, got '{text}'$"):
        parse_speed(text)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("0", 0, id="any-free"),
        pytest.param("6443", 6443, id="default"),
        pytest.param("65535", 65535, id="max"),
    ],
)
def test_port_accepted(text: str, want: int) -> None:
    assert parse_port(text) == want


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("65536", id="too-big"),
        pytest.param("-1", id="negative"),
        pytest.param("https", id="a-name"),
        pytest.param("", id="empty"),
    ],
)
def test_port_refused(text: str) -> None:
    with pytest.raises(UsageError, match=r"^--port: expected a port number from 0 to 65535 \(0: any free port\)"):
        parse_port(text)


def test_token_auto_is_random_and_none_is_no_auth() -> None:
    first, second = parse_token("auto"), parse_token("auto")
    assert first is not None
    assert second is not None
    assert first != second
    assert len(first) >= 40
    assert parse_token("none") is None
    assert parse_token("s3cret") == "s3cret"


@pytest.mark.parametrize("text", [pytest.param("", id="empty"), pytest.param("a b", id="space")])
def test_token_refused(text: str) -> None:
    with pytest.raises(UsageError, match=r"^--token: expected auto, none or a token without spaces"):
        parse_token(text)


def test_token_file(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("s3cret\n")
    assert read_token_file(tmp_path / "token") == "s3cret"
    (tmp_path / "two").write_text("a b\n")
    for bad in (tmp_path / "two", tmp_path / "missing"):
        with pytest.raises(UsageError, match=r"^--token-file: "):
            read_token_file(bad)


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        pytest.param("127.0.0.1", True, id="ipv4-loopback"),
        pytest.param("127.0.0.2", True, id="ipv4-loopback-net"),
        pytest.param("::1", True, id="ipv6-loopback"),
        pytest.param("localhost", True, id="localhost"),
        pytest.param("0.0.0.0", False, id="every-interface"),
        pytest.param("192.168.1.10", False, id="lan"),
        pytest.param("example.com", False, id="a-name"),
    ],
)
def test_is_loopback(address: str, loopback: bool) -> None:
    assert is_loopback(address) is loopback


@pytest.mark.parametrize(
    ("address", "token", "want"),
    [
        pytest.param("127.0.0.1", "t", None, id="loopback-is-quiet"),
        pytest.param(
            "0.0.0.0",
            "t",
            "warning: serving on 0.0.0.0, not a loopback address: anyone who can reach it can use the API"
            " with the token",
            id="every-interface",
        ),
        pytest.param(
            "10.0.0.5",
            None,
            "warning: serving on 10.0.0.5, not a loopback address: anyone who can reach it can use the API"
            " (no token: --token none)",
            id="no-token",
        ),
    ],
)
def test_address_warning(address: str, token: str | None, want: str | None) -> None:
    assert address_warning(address, token) == want


@pytest.mark.parametrize(
    ("nodes", "want"),
    [
        pytest.param(3, "kube-emulator: serving https://127.0.0.1:6443 (3 nodes) — export KUBECONFIG=/k/c", id="3"),
        pytest.param(1, "kube-emulator: serving https://127.0.0.1:6443 (1 node) — export KUBECONFIG=/k/c", id="1"),
    ],
)
def test_ready_line(nodes: int, want: str) -> None:
    assert ready_line("https://127.0.0.1:6443", nodes, Path("/k/c")) == want


# --- kubeconfig ----------------------------------------------------------------------------


def test_kubeconfig_document_with_token_and_ca() -> None:
    doc = kubeconfig.document("https://127.0.0.1:6443", "tok", b"PEM")
    assert doc == {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "kube-emulator",
                "cluster": {"server": "https://127.0.0.1:6443", "certificate-authority-data": "UEVN"},
            }
        ],
        "users": [{"name": "kube-emulator", "user": {"token": "tok"}}],
        "contexts": [{"name": "kube-emulator", "context": {"cluster": "kube-emulator", "user": "kube-emulator"}}],
        "current-context": "kube-emulator",
        "preferences": {},
    }


def test_kubeconfig_document_without_token() -> None:
    doc = kubeconfig.document("http://127.0.0.1:6443", None)
    assert doc["users"] == [{"name": "kube-emulator", "user": {}}]
    assert doc["clusters"][0]["cluster"] == {"server": "http://127.0.0.1:6443"}


def test_write_is_atomic_private_and_removable(tmp_path: Path) -> None:
    path = tmp_path / "kc"
    kubeconfig.write(path, "https://127.0.0.1:1", "t", b"CA")
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kc"]  # no temporary file left
    doc = yaml.safe_load(path.read_text())
    assert doc["clusters"][0]["cluster"]["server"] == "https://127.0.0.1:1"
    assert kubeconfig.check_writable(path) is None  # ours: may be replaced
    written = kubeconfig.write(path, "https://127.0.0.1:2", "t", None)
    assert yaml.safe_load(path.read_text())["clusters"][0]["cluster"]["server"] == "https://127.0.0.1:2"
    kubeconfig.remove(path, written)
    assert not path.exists()
    kubeconfig.remove(path, written)  # gone already: nothing to do


def test_remove_leaves_a_file_that_is_not_ours(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text("apiVersion: v1\nkind: Config\ncurrent-context: prod\n")
    kubeconfig.remove(path, "")
    assert path.exists()


def test_remove_leaves_another_runs_kubeconfig(tmp_path: Path) -> None:
    path = tmp_path / "kc"
    mine = kubeconfig.write(path, "https://127.0.0.1:1", "t", None)
    kubeconfig.write(path, "https://127.0.0.1:2", "u", None)  # a later serve's
    kubeconfig.remove(path, mine)
    assert path.exists()


def test_a_kubeconfig_of_a_live_serve_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "kc"
    with socket.create_server(("127.0.0.1", 0)) as live:
        url = f"https://127.0.0.1:{live.getsockname()[1]}"
        kubeconfig.write(path, url, "t", None)
        assert kubeconfig.check_writable(path) == (
            f"in use by a running kube-emulator serve at {url}; refusing to overwrite it"
        )
    assert kubeconfig.check_writable(path) is None  # its server gone: a stale file, replaced


@pytest.mark.parametrize(
    ("make", "want"),
    [
        pytest.param(lambda d: d / "missing" / "kc", "no such directory: ", id="missing-directory"),
        pytest.param(lambda d: d, "is a directory", id="a-directory"),
        pytest.param(lambda d: _file(d / "f") / "kc", "not a directory: ", id="parent-is-a-file"),
        pytest.param(
            lambda d: _file(d / "config", "apiVersion: v1\ncurrent-context: prod\n"),
            "exists and is not a kube-emulator kubeconfig; refusing to overwrite it",
            id="someone-elses",
        ),
        pytest.param(lambda d: _file(d / "bad", ": : :"), "exists and is not a kube-emulator", id="not-yaml"),
    ],
)
def test_check_writable_refuses(tmp_path: Path, make: object, want: str) -> None:
    assert callable(make)
    why = kubeconfig.check_writable(make(tmp_path))
    assert why is not None
    assert why.startswith(want)


def _file(path: Path, text: str = "x") -> Path:
    path.write_text(text)
    return path


# --- TLS identity --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "extra"),
    [
        pytest.param("127.0.0.1", None, id="loopback"),
        pytest.param("0.0.0.0", x509.IPAddress(ipaddress.ip_address("0.0.0.0")), id="every-interface"),
        pytest.param("box.internal", x509.DNSName("box.internal"), id="a-name"),
    ],
)
def test_identity_is_signed_by_its_ca_for_loopback_and_the_address(address: str, extra: x509.GeneralName) -> None:
    now = dt.datetime(2026, 12, 2, tzinfo=dt.UTC)
    identity = certs.make_identity(address, now=now)
    ca = x509.load_pem_x509_certificate(identity.ca_pem)
    cert = x509.load_pem_x509_certificate(identity.cert_pem)
    cert.verify_directly_issued_by(ca)
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert x509.DNSName("localhost") in names
    assert x509.IPAddress(ipaddress.ip_address("127.0.0.1")) in names
    if extra is not None:
        assert extra in names
    assert ca.not_valid_before_utc < now < ca.not_valid_after_utc
    assert isinstance(certs.server_context(identity), ssl.SSLContext)


def test_each_identity_is_fresh() -> None:
    assert certs.make_identity("127.0.0.1").ca_pem != certs.make_identity("127.0.0.1").ca_pem


# --- the default cluster -------------------------------------------------------------------


def test_default_cluster_is_three_kind_style_workers_across_zones() -> None:
    scenario = load_scenario(DEFAULT_SCENARIO)
    nodes = [o for o in scenario.objects if isinstance(o, Node)]
    assert [n.metadata.name for n in nodes] == [
        "kube-emulator-worker",
        "kube-emulator-worker2",
        "kube-emulator-worker3",
    ]
    assert [n.metadata.labels["topology.kubernetes.io/zone"] for n in nodes] == ["zone-a", "zone-b", "zone-c"]
    for n in nodes:
        assert n.metadata.labels["kubernetes.io/hostname"] == n.metadata.name
        assert n.metadata.labels["kubernetes.io/os"] == "linux"
        assert n.metadata.labels["kubernetes.io/arch"] == "amd64"
        capacity = n.status.capacity
        assert (str(capacity["cpu"]), str(capacity["memory"]), str(capacity["pods"])) == ("4", "16Gi", "110")
    classes = {o.metadata.name: o.value for o in scenario.objects if isinstance(o, PriorityClass)}
    assert classes == {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
    assert scenario.steps == []


def test_other_commands_do_not_import_the_http_stack() -> None:
    code = (
        "import sys, emulator.cli; "
        "print(sorted(m for m in ('aiohttp', 'cryptography', 'emulator.base.http.server') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": ROOT}
    )
    assert done.stdout == "[]\n"
