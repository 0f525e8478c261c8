"""``python -m emulator serve [FILE]``: the Kubernetes HTTP API in front of a running scenario.

This module owns the command: its options, the checks that turn bad input into one
``error:`` line (exit 2, nothing left behind), the token, the kubeconfig's life (written
once the server listens, removed at exit; see ``kubeconfig.py``), the ready line, the
signals that end the run, and the report. It does not own the HTTP server
(``emulator.base.http``, imported lazily so that other commands do not pay for aiohttp) nor how
a scenario runs (``emulator.app.scenario.runner``'s serve mode: the server starts once the
cluster's objects exist, before the steps; the run ends when the server returns).

Life of one ``serve``:

======================  ==================================================================
phase                   what happens
======================  ==================================================================
checks                  the scenario (FILE, or ``scenarios/serve-default.yaml``), the
                        scheduler set-up, ``--speed``, ``--port``, the kubeconfig's
                        directory, the address and port (bound once and released): bad
                        input is ``error: ...``, exit 2, no kubeconfig
set-up                  the run starts on the real-time loop, its clock paced by
                        ``--speed``; objects and nodes are created, agents start
listening               ``HttpApi.serve`` calls back once bound: the kubeconfig is written
                        atomically, then one line on stdout (URL, nodes, ``export
                        KUBECONFIG=...``); a port taken since the check is still exit 2
serving                 the steps play (they waited for the ready line); the run goes on
                        after them
stopping                SIGINT or SIGTERM (or ``--until``): the server is cancelled through
                        its task group (watches closed), then the run's other tasks
report                  the kubeconfig is removed; the report as ``run`` prints it; exit 0
                        every expectation met, 1 otherwise
======================  ==================================================================

The default kubeconfig is ``./kube-emulator.kubeconfig``: in the directory the user works
in, printed in full in the ready line, and never ``~/.kube/config``, which holds the user's
real clusters (an existing file that is not one of ours is refused, never overwritten).

What ``serve`` does not promise: determinism. The clock is paced to the wall clock and
clients arrive when they do, so two runs of the same scenario differ; ``--seed`` still fixes
the random streams, and ``--trace`` still records what happened.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import math
import secrets
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from rich.console import Console

from emulator.app.commands.common import UsageError, check_scheduler
from emulator.app.commands.run import _output
from emulator.app.experiments.errors import leaf
from emulator.app.scenario.loader import load_scenario
from emulator.app.scenario.runner import RunOptions, run_scenario
from emulator.app.scenario.summary import print_summary, to_json
from emulator.base.apiserver.server import ApiServer
from emulator.base.http import kubeconfig
from emulator.base.runtime.clock import Clock, calendar_epoch_at

if TYPE_CHECKING:
    from emulator.base.http.certs import Identity
    from emulator.base.http.server import HttpApi

__all__ = ["DEFAULT_SCENARIO", "run"]

DEFAULT_SCENARIO = Path(__file__).resolve().parents[3] / "scenarios" / "serve-default.yaml"
"""The cluster served without FILE: three kind-style worker nodes across zones."""


# --- checks (pure but for the port probe) ------------------------------------------------


def parse_speed(text: str) -> float:
    """``--speed``: a finite number above 0."""
    try:
        speed = float(text)
    except ValueError:
        speed = math.nan
    if not (math.isfinite(speed) and speed > 0):
        raise UsageError(f"--speed: expected a number of simulated seconds per wall second above 0, got {text!r}")
    return speed


def parse_port(text: str) -> int:
    """``--port``: 0 (any free port) to 65535."""
    if not text.isdecimal() or not 0 <= int(text) <= 65535:
        raise UsageError(f"--port: expected a port number from 0 to 65535 (0: any free port), got {text!r}")
    return int(text)


def parse_token(text: str) -> str | None:
    """``--token``: ``auto`` draws a random token (``secrets``: not simulation state, so not
    from the scenario's seed), ``none`` turns authentication off, anything else is the token."""
    if text == "auto":
        return secrets.token_urlsafe(32)
    if text == "none":
        return None
    if not text or any(c.isspace() or not c.isprintable() for c in text):
        raise UsageError(f"--token: expected auto, none or a token without spaces, got {text!r}")
    return text


def read_token_file(path: Path) -> str:
    """``--token-file``: the token is the file's content, surrounding whitespace removed (so
    it stays out of the process list, which every local user can read)."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"--token-file: cannot read {str(path)!r}: {err}") from None
    if not text or any(c.isspace() or not c.isprintable() for c in text):
        raise UsageError(f"--token-file: {str(path)!r} must hold one token without spaces")
    return text


def is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def address_warning(address: str, token: str | None) -> str | None:
    """The stderr warning for a listen address beyond loopback (None: loopback)."""
    if is_loopback(address):
        return None
    who = "anyone who can reach it can use the API"
    return f"warning: serving on {address}, not a loopback address: {who}" + (
        " (no token: --token none)" if token is None else " with the token"
    )


def check_listen(address: str, port: int) -> None:
    """Bind ``address:port`` once and release it: a port in use or an address this host does
    not have is bad input before anything runs (``serve`` still reports the same error if
    the port is taken between this check and the server's bind)."""
    try:
        infos = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as err:
        raise UsageError(f"--address {address}: cannot resolve it: {err.strerror or err}") from None
    for family, kind, proto, _, addr in infos:
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
            try:
                sock.bind(addr)
            except OSError as err:
                raise listen_error(address, port, err) from None


def listen_error(address: str, port: int, err: OSError) -> UsageError:
    return UsageError(f"--port {port}: cannot listen on {address}:{port}: {err.strerror or err}")


def ready_line(url: str, nodes: int, path: Path) -> str:
    plural = "node" if nodes == 1 else "nodes"
    return f"kube-emulator: serving {url} ({nodes} {plural}) — export KUBECONFIG={path}"


# --- the run -----------------------------------------------------------------------------


class _Serving:
    """The serve mode's callback: the HTTP server until a signal, and the kubeconfig's state."""

    def __init__(self, args: argparse.Namespace, port: int, token: str | None, path: Path) -> None:
        self.address: str = args.address
        self.port = port
        self.token = token
        self.path = path
        self.written: str | None = None
        self.identity: Identity | None = None
        if token is not None:  # kubectl sends a token only over TLS: serve HTTPS with a fresh CA
            from emulator.base.http.certs import make_identity  # cryptography: only when serving

            self.identity = make_identity(self.address)

    def on_ready(self, api: ApiServer, listening: Callable[[], None]) -> Callable[[str], None]:
        def ready(url: str) -> None:
            try:
                ca = None if self.identity is None else self.identity.ca_pem
                written = kubeconfig.write(self.path, url, self.token, ca)
            except OSError as err:
                raise UsageError(f"{self.path}: cannot write the kubeconfig: {err.strerror or err}") from None
            self.written = written
            print(ready_line(url, len(api.list("Node")[0]), self.path), flush=True)
            listening()  # the scenario's steps may play

        return ready

    async def __call__(self, api: ApiServer, clock: Clock, listening: Callable[[], None]) -> None:
        from emulator.base.http.certs import server_context
        from emulator.base.http.server import HttpApi, HttpSettings  # aiohttp: only when serving

        tls = None if self.identity is None else server_context(self.identity)
        http = HttpApi(api, HttpSettings(host=self.address, port=self.port, token=self.token, ssl_context=tls))
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        signals = (signal.SIGINT, signal.SIGTERM)
        for sig in signals:
            loop.add_signal_handler(sig, stop.set)
        try:
            try:
                async with asyncio.TaskGroup() as tg:
                    listener = tg.create_task(self._listen(http, api, listening), name="http:listener")
                    await stop.wait()
                    listener.cancel()  # the server closes its watches and listener, re-raises
            except* UsageError as group:
                raise leaf(group) from None
        finally:
            for sig in signals:
                loop.remove_signal_handler(sig)

    async def _listen(self, http: HttpApi, api: ApiServer, listening: Callable[[], None]) -> None:
        try:
            await http.serve(self.on_ready(api, listening))
        except OSError as err:
            if self.written is not None:
                raise
            raise listen_error(self.address, self.port, err) from None


@contextlib.contextmanager
def _removed_at_exit(serving: _Serving) -> Iterator[None]:
    try:
        yield
    finally:
        if serving.written is not None:
            kubeconfig.remove(serving.path, serving.written)


def run(args: argparse.Namespace) -> int:
    path: Path = args.file if args.file is not None else DEFAULT_SCENARIO
    scenario = load_scenario(path)
    check_scheduler(scenario, path)
    speed = parse_speed(args.speed)
    port = parse_port(args.port)
    config = Path(args.kubeconfig).absolute()
    if (why := kubeconfig.check_writable(config)) is not None:
        raise UsageError(f"{config}: cannot write the kubeconfig: {why}")
    check_listen(args.address, port)
    if args.token_file is not None and args.token != "auto":
        raise UsageError("--token and --token-file: give one of them")
    token = read_token_file(args.token_file) if args.token_file is not None else parse_token(args.token)
    if (warning := address_warning(args.address, token)) is not None:
        print(warning, file=sys.stderr)
    serving = _Serving(args, port, token, config)
    # Timestamps count from the wall time of the start (a simulated run counts from EPOCH):
    # kubectl computes some ages on its side (describe's events, ``kubectl events``).
    start = datetime.now(UTC)
    with _removed_at_exit(serving), _output(args.trace, "trace") as trace, calendar_epoch_at(start):
        options = RunOptions(
            seed=args.seed,
            until=args.until,
            trace=trace,
            source=str(path),
            speed=speed,
            serve=serving,
        )
        result = run_scenario(scenario, options)
    if args.output == "json":
        sys.stdout.write(msgspec.json.encode(to_json(result)).decode() + "\n")
    else:
        print_summary(result, Console(highlight=False, soft_wrap=True))
    return 0 if result.passed else 1
