"""The aiohttp application of the HTTP door: ``HttpApi.serve`` and the request path.

Owns the socket side, on the emulator's own event loop: binding (loopback by default),
bearer-token auth (401 ``Unauthorized`` for a wrong token, 403 for none), the request-body limit (413, read in
chunks, never more than ``max_body + 1`` bytes held), applying content negotiation
(``negotiate``: JSON, YAML or protobuf answers, errors included, and protobuf watch frames;
Tables when Accept asks ``as=Table;g=meta.k8s.io``; aggregated discovery when Accept asks
``as=APIGroupDiscoveryList``), turning every ``ApiError`` into its ``Status`` body, the
watch streams (opened here, framed and pumped by ``watch``), and shutdown (every watch
stream closed, then the listener). It does not own paths (``routing``), verbs (``verbs``),
list options (``query``), the wire format (``codec``, ``status``), nor discovery documents,
Tables or patches (``discovery``, ``tables``, ``patch``/``apply``).

Why aiohttp: a well-kept asyncio server that runs on whichever loop is running (so on the
emulator's own, next to the agents), streams chunked responses with back-pressure
(``StreamResponse.write`` waits for the socket), and cancels a handler whose client went
away (``handler_cancellation``), which is how a vanished watcher is noticed at once.

=====================  =========================================================
request                answer
=====================  =========================================================
wrong bearer token     401 Status Unauthorized (when a token is set)
no bearer token        anonymous GET of ``/healthz``, ``/livez``, ``/readyz``,
                       ``/version`` is served; anything else 403 Status Forbidden,
                       RBAC's message for ``system:anonymous`` (``anonymous``)
body > max_body        413 Status RequestEntityTooLarge
unknown path           404 Status NotFound "the server could not find ..."
method not served      405 Status MethodNotAllowed
no served media type   406 Status NotAcceptable (``negotiate``)
``?watch=true``        200, chunked JSON lines (or protobuf frames) until timeout/disconnect/shutdown
an ``ApiError``        its code and Status
anything else raised   500 Status InternalError (and logged)
plain HTTP on TLS      Go's ``HTTP/1.0 400`` "Client sent an HTTP request to an HTTPS
                       server." (``sniff``), then close
=====================  =========================================================
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from aiohttp import web

from emulator.base.api.errors import (
    AlreadyExists,
    ApiError,
    Gone,
    InternalError,
    MethodNotAllowed,
    NotAcceptable,
    NotFound,
    RequestEntityTooLarge,
    Unauthorized,
)
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.services import Service, ServicePort, ServiceSpec
from emulator.base.apiserver.server import ApiServer
from emulator.base.apiserver.serviceips import SERVICE_CIDR
from emulator.base.apiserver.watcher import Watcher
from emulator.base.http import anonymous, budget, discovery, metricsapi, reviews
from emulator.base.http.apply import FieldManagers
from emulator.base.http.calls import METHOD_NOT_ALLOWED, Call, check_verb, verb_of
from emulator.base.http.codec import decode_body, encode
from emulator.base.http.deadlines import DeadlineSite
from emulator.base.http.extras import UnmodelledFields, write_listener
from emulator.base.http.health import CONTENT_TYPE as HEALTH_CONTENT_TYPE
from emulator.base.http.health import health
from emulator.base.http.negotiate import JSON, PROTOBUF, PROTOBUF_WATCH, negotiate, render, watch_frames
from emulator.base.http.query import ListOptions, parse_list_options
from emulator.base.http.routing import NOT_FOUND, Discovery, Target, route
from emulator.base.http.status import error_status
from emulator.base.http.verbs import Verbs
from emulator.base.http.watch import EncodedObjects, EventWriter, error_line, failure_line, pump

__all__ = ["HttpApi", "HttpSettings", "agent_of"]

log = logging.getLogger(__name__)
_CHUNK: Final = 64 * 1024
_WRITE_METHODS: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def warning_header(text: str) -> str:
    """Upstream's ``net.NewWarningHeader(299, "-", text)``: ``299 - "<text>"``, with ``"`` and
    ``\\`` escaped (kubectl prints ``Warning: <text>``)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'


@dataclass(frozen=True, slots=True)
class HttpSettings:
    host: str = "127.0.0.1"
    port: int = 6443
    token: str | None = None
    """The bearer token every request must carry; None: no auth."""
    max_body: int = 3 * 1024 * 1024
    """Upstream's limit on a request body (3 MiB)."""
    watch_buffer: int = 10_000
    """Events a watch stream may have undelivered before it is dropped with 410 (a watch that
    starts with synthetic ADDED events gets room for those on top)."""
    ssl_context: ssl.SSLContext | None = None
    """Serve HTTPS with this context (the URL is then ``https://``). kubectl sends a
    kubeconfig's bearer token only over TLS (client-go's clientcmd reads a user's credentials
    only when the transport is TLS), so a token without TLS locks kubectl out; the Python
    client sends it either way."""
    read_header_timeout: float = 32.0
    """Seconds a new connection has to send its first request's headers (upstream's
    ``ReadHeaderTimeout``); then it is closed."""
    idle_timeout: float = 90.0
    """Seconds a keep-alive connection may sit idle between requests (upstream's
    ``IdleTimeout``)."""
    request_budget: float = 10.0
    """Seconds of synchronous work (merges, applies, JSON patches) one request may take before
    it is stopped with upstream's 504 ``Timeout`` (``budget``). Upstream allows 60 s, but its
    requests do not share one loop: here every other client, watch and the simulated clock
    wait while a request works, so the bound is much lower. 10 s is about twice what the
    largest ordinary body (3 MiB: a strategic merge or apply of 25,000 containers) took on a
    loaded 2-vCPU machine, now that the merges are linear."""
    budget_clock: Callable[[], float] = time.monotonic
    """The clock ``request_budget`` is measured by (tests inject one)."""
    request_timeout: float = 60.0
    """Seconds a request's body may take to arrive (upstream's ``--request-timeout``, whose
    filter answers 504 ``Timeout`` and whose HTTP server then drops the connection with the
    unread body); a client that sends half a body and stalls gets that, not a held socket."""


def kubernetes_service(port: int) -> Service:
    """upstream's ``default/kubernetes`` Service: the API server's own address, port 443."""
    return Service(
        metadata=ObjectMeta(
            name="kubernetes", namespace="default", labels={"component": "apiserver", "provider": "kubernetes"}
        ),
        spec=ServiceSpec(
            type="ClusterIP",
            cluster_ip=str(SERVICE_CIDR.network_address + 1),
            ports=[ServicePort(name="https", port=443, protocol="TCP", target_port=port)],
            session_affinity="None",
        ),
    )


PUBLIC_PATHS: Final = frozenset({"/healthz", "/livez", "/readyz", "/version", "/version/"})
"""What upstream's ``system:public-info-viewer`` ClusterRole lets an anonymous request GET."""


def bearer_token(authorization: str) -> str | None:
    """The token of an ``Authorization`` header as upstream's bearer-token authenticator
    reads it (the scheme case-insensitive, the token the second space-separated word); None
    when the header carries none (the request is then anonymous)."""
    parts = authorization.strip().split(" ")
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


def agent_of(user_agent: str) -> str:
    """The product of a User-Agent (``kubectl/v1.32.4 (linux/amd64) ...`` → ``kubectl``,
    ``OpenAPI-Generator/37.0.2/python`` → ``OpenAPI-Generator``); ``http`` when absent."""
    product = user_agent.strip().split(" ", 1)[0].split("/", 1)[0]
    return product or "http"


def _has_protobuf(accept: str, target: Target) -> bool:
    """Whether the target's kind has a protobuf message (only asked when Accept names
    protobuf, so that a JSON client never loads the tables)."""
    if "protobuf" not in accept:
        return True
    from emulator.base.http.protobuf_schema import message_of

    res = target.resource
    return message_of(f"{res.group}/{res.version}" if res.group else res.version, res.kind) is not None


def _protobuf_writer(resp: web.StreamResponse) -> Callable[[bytes], Awaitable[None]]:
    async def write(data: bytes) -> None:
        await resp.write(watch_frames(data))

    return write


def wants_table(accept: str) -> bool:
    return "as=Table" in accept and "g=meta.k8s.io" in accept


def _is_watch(query: Mapping[str, str], target: Target) -> bool:
    return target.watch or query.get("watch", "") in ("true", "1", "True")


class HttpApi:
    """The Kubernetes HTTP API in front of one ``ApiServer``."""

    def __init__(self, api: ApiServer, settings: HttpSettings, *, managers: FieldManagers | None = None) -> None:
        self.api = api
        self.settings = settings
        self.managers = managers if managers is not None else FieldManagers()
        self.extras = UnmodelledFields()
        api.add_write_listener(write_listener(self.extras))
        self.verbs = Verbs(api, self.managers, extras=self.extras)
        self._watchers: set[Watcher] = set()
        self.encoded = EncodedObjects()
        self.requests = 0
        self.app = web.Application(client_max_size=settings.max_body + 1, middlewares=[self._middleware])
        self.app.router.add_route("*", "/{tail:.*}", self._handle)

    def __repr__(self) -> str:
        s = self.settings
        return f"<HttpApi {s.host}:{s.port} requests={self.requests} watches={len(self._watchers)}>"

    async def serve(self, on_ready: Callable[[str], None]) -> None:
        """Bind, call on_ready(url) once listening (url like "http://127.0.0.1:43121", the real
        port when port=0), serve until cancelled; on cancellation close every watch stream and
        the listener, then re-raise."""
        s = self.settings
        runner = web.AppRunner(
            self.app,
            handle_signals=False,
            access_log=None,
            handler_cancellation=True,
            keepalive_timeout=s.idle_timeout,
        )
        await runner.setup()
        try:
            tls = self.settings.ssl_context
            site = DeadlineSite(runner, s.host, s.port, ssl_context=tls, read_header_timeout=s.read_header_timeout)
            await site.start()
            host, port = runner.addresses[0][:2]
            self._publish_self(port)
            on_ready(f"{'https' if tls is not None else 'http'}://{host}:{port}")
            await asyncio.Event().wait()  # until cancelled
        finally:
            self.close_watches()
            await runner.cleanup()

    def _publish_self(self, port: int) -> None:
        """The ``default/kubernetes`` Service every cluster has, as upstream's API server
        publishes itself (its cluster IP the first of the range); kept if one exists."""
        try:
            with self.api.acting_as("kube-apiserver"):
                self.api.create(kubernetes_service(port))
        except (AlreadyExists, NotFound):  # the scenario made one, or has no default namespace
            pass

    def close_watches(self) -> None:
        """End every watch stream (their handlers finish their responses)."""
        for w in list(self._watchers):
            self.api.stop_watch(w)

    # --- the request path -----------------------------------------------------------------

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.requests += 1
        try:
            refused = self._authenticate(request)
            if refused is not None:
                return refused
            result: web.StreamResponse = await handler(request)
            return result
        except ApiError as err:
            resp = self._error(err, request)
            if isinstance(err, budget.BodyTimeout):  # the rest of the body never came: answer, then drop it
                resp.force_close()
                await resp.prepare(request)
                await resp.write_eof()
                if request.transport is not None:
                    request.transport.close()  # no lingering read of a body that stalled
            return resp
        except web.HTTPException:
            raise
        except (asyncio.CancelledError, ConnectionResetError):
            raise
        except Exception as exc:
            log.exception("request %s %s failed", request.method, request.path_qs)
            return self._error(InternalError(f"an error on the server ({exc!r}) has prevented the request"), request)

    def _authenticate(self, request: web.Request) -> web.Response | None:
        """None when the request may go on; else the 403 an anonymous request gets. A wrong
        token raises 401."""
        token = self.settings.token
        if token is None:
            return None
        given = bearer_token(request.headers.get("Authorization", ""))
        if given is None:  # system:anonymous (upstream's anonymous auth), which RBAC lets
            if request.method == "GET" and request.path in PUBLIC_PATHS:  # read these only
                return None
            refusal = anonymous.forbidden_status(anonymous.attributes(request.method, request.path, request.query))
            return web.Response(status=403, body=encode(refusal), content_type=JSON)
        if not hmac.compare_digest(given.encode("utf-8", "surrogateescape"), token.encode()):
            raise Unauthorized("Unauthorized")
        return None

    def _error(self, err: ApiError, request: web.Request) -> web.Response:
        name = group = resource = ""
        try:
            target = route(request.path)
        except ApiError:
            target = None
        if isinstance(target, Target):
            name, group, resource = target.name, target.resource.group, target.resource.name
        body = encode(error_status(err, name=name, group=group, resource=resource))
        media = JSON
        if isinstance(target, Target) and not isinstance(err, NotAcceptable):  # a 406 is JSON
            with contextlib.suppress(NotAcceptable):
                media = negotiate(request.headers.get("Accept", ""), yaml=not _is_watch(request.query, target))
        body, content_type = render(body, media)
        resp = web.Response(status=err.code, body=body)
        resp.headers["Content-Type"] = content_type
        return resp

    async def _read_body(self, request: web.Request) -> bytes:
        limit = self.settings.max_body
        too_large = RequestEntityTooLarge(f"Request entity too large: limit is {limit}")
        if request.content_length is not None and request.content_length > limit:
            raise too_large
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.settings.request_timeout):
                while True:
                    chunk = await request.content.read(_CHUNK)
                    if not chunk:
                        break
                    size += len(chunk)
                    if size > limit:
                        raise too_large
                    chunks.append(chunk)
        except TimeoutError:
            raise budget.BodyTimeout() from None
        return b"".join(chunks)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        query = {k: request.query.get(k, "") for k in request.query}
        if (body := metricsapi.respond(self.api.metrics, request.method, request.path, query)) is not None:
            return web.Response(status=200, body=body, content_type=JSON)  # metrics.k8s.io: never stored
        target = route(request.path)
        if isinstance(target, Discovery):
            if target.what == "review":
                return await self._review(target, request)
            if request.method != "GET":
                raise NotFound(NOT_FOUND)
            return self._discovery(target, request)
        accept = request.headers.get("Accept", "")
        as_table = wants_table(accept)
        watch = request.method == "GET" and _is_watch(query, target)
        media = JSON if as_table else negotiate(accept, protobuf=_has_protobuf(accept, target), yaml=not watch)
        if watch:
            check_verb(target, verb_of("GET", target, watch=True) if not target.name else "watch")
            return await self._watch(request, target, query, as_table, media)
        body = await self._read_body(request) if request.method in _WRITE_METHODS else b""
        call = Call(
            method=request.method,
            target=target,
            query=query,
            body=body,
            content_type=request.headers.get("Content-Type", ""),
            agent=agent_of(request.headers.get("User-Agent", "")),
            as_table=as_table,
        )
        with budget.limited(self.settings.request_budget, self.settings.budget_clock):
            answer = self.verbs.handle(call)
        body, content_type = answer.body, answer.content_type
        if content_type == JSON:
            body, content_type = render(body, media)
        resp = web.Response(status=answer.code, body=body)
        resp.headers["Content-Type"] = content_type
        for text in answer.warnings:
            resp.headers.add("Warning", warning_header(text))
        return resp

    async def _review(self, d: Discovery, request: web.Request) -> web.Response:
        """``auth can-i`` / ``auth whoami``: a create of a virtual review (``reviews``)."""
        if request.method != "POST":
            raise MethodNotAllowed(METHOD_NOT_ALLOWED)
        media = negotiate(request.headers.get("Accept", ""))
        body = decode_body(await self._read_body(request), request.headers.get("Content-Type", ""))
        answer, content_type = render(encode(reviews.review(d.group, d.version, d.path, body)), media)
        resp = web.Response(status=201, body=answer)
        resp.headers["Content-Type"] = content_type
        return resp

    def _discovery(self, d: Discovery, request: web.Request) -> web.Response:
        accept = request.headers.get("Accept", "")
        aggregated = "as=APIGroupDiscoveryList" in accept and "v=v2;" in accept + ";"
        doc: Any
        if d.what == "health":
            text = health(d.group, d.path, request.query)
            if text is None:
                raise NotFound(NOT_FOUND)
            return web.Response(status=200, body=text, content_type=HEALTH_CONTENT_TYPE, charset="utf-8")
        if d.what == "version":
            doc = discovery.version()
        elif d.what in ("api", "apis"):
            if aggregated:
                body = encode(discovery.aggregated(core=d.what == "api"))
                resp = web.Response(status=200, body=body)
                resp.headers["Content-Type"] = discovery.AGGREGATED_CONTENT_TYPE
                return resp
            doc = discovery.legacy_versions(request.host) if d.what == "api" else discovery.legacy_groups()
        elif d.what == "group":
            doc = discovery.legacy_group(d.group)
        elif d.what == "resources":
            doc = discovery.legacy_resources(d.group, d.version)
        elif d.what == "openapi":
            doc = discovery.openapi_root()
        else:
            raw = discovery.openapi_document(d.path)
            if raw is None:
                raise NotFound(NOT_FOUND)
            return web.Response(status=200, body=raw, content_type=JSON)
        if doc is None:
            raise NotFound(NOT_FOUND)
        return web.Response(status=200, body=encode(doc), content_type=JSON)

    # --- watch ----------------------------------------------------------------------------

    def _open_watch(self, target: Target, opts: ListOptions, as_table: bool) -> tuple[Watcher, EventWriter]:
        res = target.resource
        name = opts.name if opts.name is not None else (target.name or None)
        rv = opts.resource_version
        initial = opts.send_initial_events is True
        start: int | None
        if rv in ("", "0"):
            start = None if opts.send_initial_events is False else 0
        else:
            start = int(rv)
            if initial:
                start = 0  # sendInitialEvents: the state as of now, then the end bookmark
        fields = {"metadata.name": name} if name is not None else None
        w = self.api.watch(
            res.kind,
            name=f"http:{res.name}",
            namespace=target.namespace,
            label_match=opts.label_match,
            fields=fields,
            resource_version=start,
            allow_bookmarks=opts.allow_bookmarks,
            buffer=self.settings.watch_buffer,
            predicate=opts.predicate,
        )
        writer = EventWriter(
            res,
            as_table=as_table,
            include_object=opts.include_object,
            now=self.api.clock.now,
            managed=self.managers.managed_fields,
            cache=self.encoded,
            extras=self.extras,
            initial_left=len(w.channel) if initial else -1,
            start_revision=self.api.revision,
            last_revision=self.api.revision,
        )
        return w, writer

    async def _watch(
        self, request: web.Request, target: Target, query: Mapping[str, str], as_table: bool, media: str
    ) -> web.StreamResponse:
        opts = parse_list_options(target.resource.kind, query)
        gone: Gone | None = None
        watcher: Watcher | None = None
        try:
            watcher, writer = self._open_watch(target, opts, as_table)
        except Gone as err:
            gone = err  # upstream: 200, then the error in-band
        resp = web.StreamResponse(status=200)
        resp.headers["Content-Type"] = PROTOBUF_WATCH if media == PROTOBUF else JSON
        resp.enable_chunked_encoding()
        write = _protobuf_writer(resp) if media == PROTOBUF else resp.write
        if watcher is not None:
            self._watchers.add(watcher)
        try:
            await resp.prepare(request)
            if gone is not None or watcher is None:
                await write(error_line(gone or Gone("watch closed")))
                await resp.write_eof()
                return resp
            channel = watcher.channel
            try:
                async with asyncio.timeout(opts.timeout_seconds):
                    await pump(channel.get_batch, write, writer)
            except TimeoutError:
                pass  # timeoutSeconds elapsed: end the stream cleanly
            except ConnectionResetError:
                return resp
            except Exception as exc:  # the stream started: in-band, never a 2nd status line
                log.exception("watch %s failed", request.path_qs)
                await write(failure_line(exc))
            await resp.write_eof()
            return resp
        finally:
            if watcher is not None:
                self._watchers.discard(watcher)
                self.api.stop_watch(watcher)
