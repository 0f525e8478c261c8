"""The kubeconfig ``serve`` writes: its document, written atomically, and removed at exit.

This module owns the file a client reads to reach ``serve``: one cluster, one user and one
context, all named ``kube-emulator``, and ``current-context`` set to it. The user carries
the bearer token, or nothing with ``--token none``. It does not own the token's choice or
the server (``serve.py``, ``emulator.base.http``).

Writing is atomic (a temporary file in the same directory, mode 0600, then ``os.replace``),
so a script that waits for the file to appear never reads half of it, and the file exists
only while the server listens: ``serve`` removes it on exit. A file that exists but is not
one of ours (``~/.kube/config`` given by mistake), or ours but naming a server that still
listens (another ``serve`` owns it), is refused rather than overwritten; at exit the file is
removed only if it is still the text this run wrote.
"""

from __future__ import annotations

import base64
import contextlib
import os
import socket
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

__all__ = ["NAME", "check_writable", "document", "is_ours", "remove", "serving_at", "write"]

NAME = "kube-emulator"
"""The cluster's, user's and context's name."""


def document(server: str, token: str | None, ca_pem: bytes | None = None) -> dict[str, Any]:
    """The kubeconfig (``apiVersion: v1``, ``kind: Config``) for ``server`` and ``token``;
    ``ca_pem``, the CA that signed an ``https://`` server's certificate."""
    user: dict[str, Any] = {} if token is None else {"token": token}
    cluster: dict[str, Any] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode("ascii")
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": NAME, "cluster": cluster}],
        "users": [{"name": NAME, "user": user}],
        "contexts": [{"name": NAME, "context": {"cluster": NAME, "user": NAME}}],
        "current-context": NAME,
        "preferences": {},
    }


def is_ours(text: str) -> bool:
    """Whether ``text`` is a kubeconfig this module wrote (only ``kube-emulator`` entries)."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return False
    if not isinstance(doc, dict) or doc.get("current-context") != NAME:
        return False
    entries = [e for key in ("clusters", "users", "contexts") for e in doc.get(key) or ()]
    return all(isinstance(e, dict) and e.get("name") == NAME for e in entries)


def check_writable(path: Path) -> str | None:
    """Why ``path`` cannot take our kubeconfig (None: it can), checked before serving."""
    if path.is_dir():
        return "is a directory"
    if path.exists():
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as err:
            return f"cannot read it: {err.strerror or err}"
        if not is_ours(text):
            return "exists and is not a kube-emulator kubeconfig; refusing to overwrite it"
        if (live := serving_at(text)) is not None:
            return f"in use by a running kube-emulator serve at {live}; refusing to overwrite it"
    parent = path.parent
    if not parent.exists():
        return f"no such directory: {parent}"
    if not parent.is_dir():
        return f"not a directory: {parent}"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"directory not writable: {parent}"
    return None


def serving_at(text: str) -> str | None:
    """The server URL of our kubeconfig ``text`` if something still listens there (another
    ``serve`` owns the file), else None."""
    try:
        doc = yaml.safe_load(text)
        url = str(doc["clusters"][0]["cluster"]["server"])
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except (yaml.YAMLError, LookupError, TypeError, ValueError):
        return None
    if host is None or port is None:
        return None
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return url
    except OSError:
        return None


def write(path: Path, server: str, token: str | None, ca_pem: bytes | None = None) -> str:
    """Write the kubeconfig at ``path`` atomically, mode 0600 (raises ``OSError``); returns
    the text written (``remove`` takes it)."""
    text: str = yaml.safe_dump(document(server, token, ca_pem), sort_keys=False, default_flow_style=False)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:  # mkstemp: mode 0600 already
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return text


def remove(path: Path, written: str) -> None:
    """Remove the kubeconfig at ``path`` if it still is the ``written`` text of this run
    (another run's since, or gone already: nothing to do)."""
    with contextlib.suppress(FileNotFoundError):
        if path.read_text(encoding="utf-8", errors="replace") == written:
            path.unlink()
