"""``Client``: one agent's handle to the API server.

Every call goes through here, so this is where the network is modelled: a seeded
latency per call (``Latency(mean, jitter)``, jitter uniform in ±jitter, never below 0)
and, for watches, a delivery delay added to each event's write time. Fault injection
hooks in here too, both optional and free when absent: ``Client.interceptor`` sees every
call before it reaches the server and may delay it or raise an ``ApiError`` instead;
``Client.watch_faults`` adds a delay to each watch event, and may let events of
different objects overtake each other (``emulator.base.client.watchstream.WatchStream``
documents the rules).

When no limiter, latency or interceptor is set (``Client.instant``: nothing can suspend), the
hot verbs (create, get, update_status, bind, delete) call the server directly, counted as
``_call`` counts; a caller that checked ``instant`` may also write synchronously
(``update_status_now``: the kubelet's first try of a status write; ``create_now``: the
scenario driver's first try of a create).

The client holds no cache; informers (``emulator.base.client.informer``) do.
"""

from __future__ import annotations

import builtins
import functools
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec

from emulator.base.api.autoscaling import PodMetrics
from emulator.base.api.core import Binding, Pod
from emulator.base.api.errors import NotFound
from emulator.base.api.labelselector import Selector
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.api.scheduling import Lease, LeaseSpec
from emulator.base.apiserver.server import ApiServer
from emulator.base.apiserver.standing import StandingRenewals
from emulator.base.client.ratelimit import TokenBucket
from emulator.base.client.watchstream import WatchFaults, WatchStream
from emulator.base.runtime.clock import Clock

__all__ = ["Client", "Interceptor", "Latency"]

T = TypeVar("T")
S = TypeVar("S", bound=msgspec.Struct)
Interceptor = Callable[[str, str, str], Awaitable[None]]
"""``await interceptor(agent, verb, kind)`` before each call: may sleep or raise."""


@dataclass(frozen=True, slots=True)
class Latency:
    mean: float = 0.0
    jitter: float = 0.0

    def sample(self, rng: random.Random) -> float:
        if self.jitter <= 0:
            return self.mean
        return max(0.0, self.mean + rng.uniform(-self.jitter, self.jitter))


@dataclass(slots=True)
class ClientStats:
    calls: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)


class Client:
    """An agent's connection to ``server``, with seeded latency."""

    def __init__(
        self,
        server: ApiServer,
        clock: Clock,
        rng: random.Random,
        *,
        name: str,
        api_latency: Latency = Latency(),
        watch_latency: Latency = Latency(),
    ) -> None:
        self.server = server
        self.clock = clock
        self.name = name
        self._latency = api_latency
        self._no_latency = api_latency.mean <= 0 and api_latency.jitter <= 0
        self._watch_latency = watch_latency
        self._watch_faults: WatchFaults | None = None
        self.watch_direct = self._direct_watch()
        """No watch latency and no watch faults (kept by their setters; read-only elsewhere:
        set it only through ``watch_latency``/``watch_faults``): a stream with nothing pending
        hands its channel's batches over as they are (``WatchStream.direct``)."""
        self.interceptor: Interceptor | None = None
        self.stats = ClientStats()
        self.rate_limiter: TokenBucket | None = None
        """Requests wait for a token first (client-go's QPS/burst; None: unlimited)."""
        self.event_rate_limiter: TokenBucket | None = None
        """The limiter of Event writes: upstream components record events through a clientset
        of their own with its own limiter, so events never take the main client's tokens."""
        self._rng = rng

    def __repr__(self) -> str:
        return f"<Client {self.name!r} calls={sum(self.stats.calls.values())}>"

    @property
    def api_latency(self) -> Latency:
        """The seeded latency of each call (``_call``)."""
        return self._latency

    @api_latency.setter
    def api_latency(self, latency: Latency) -> None:
        self._latency = latency
        self._no_latency = latency.mean <= 0 and latency.jitter <= 0

    @property
    def watch_latency(self) -> Latency:
        """The seeded delay added to each watch event's write time (``WatchStream``)."""
        return self._watch_latency

    @watch_latency.setter
    def watch_latency(self, latency: Latency) -> None:
        self._watch_latency = latency
        self.watch_direct = self._direct_watch()

    @property
    def watch_faults(self) -> WatchFaults | None:
        """The fault hook of watch delivery (None: none)."""
        return self._watch_faults

    @watch_faults.setter
    def watch_faults(self, faults: WatchFaults | None) -> None:
        self._watch_faults = faults
        self.watch_direct = self._direct_watch()

    def _direct_watch(self) -> bool:
        """``watch_direct``'s value: no watch faults and no watch latency."""
        lat = self._watch_latency
        return self._watch_faults is None and lat.mean <= 0 and lat.jitter <= 0

    def side_client(self, suffix: str) -> Client:
        """A client like this one (server, clock, watch latency, interceptor, watch faults)
        named ``<name>:<suffix>``, with its own seeded stream and no API latency: the
        scheduler's listers and the autoscalers' informers of kinds they only read, so their
        reads draw nothing from this client's stream (the pinned traces stay as they were)."""
        aux = Client(
            self.server,
            self.clock,
            random.Random(f"{self.name}:{suffix}"),
            name=f"{self.name}:{suffix}",
            api_latency=Latency(),
            watch_latency=self.watch_latency,
        )
        aux.interceptor = self.interceptor
        aux.watch_faults = self.watch_faults
        return aux

    def instant(self, kind: str = "") -> bool:
        """Whether a call about ``kind`` runs at once, without suspending: no rate limiter (the
        Event limiter for Events), no latency, no interceptor. The hot verbs then call the
        server directly, counted as ``_call`` counts; what they do is ``_call``'s with
        nothing to await (``tests/client/test_client_direct.py`` compares both)."""
        limiter = self.event_rate_limiter if kind == "Event" else self.rate_limiter
        return limiter is None and self.interceptor is None and self._no_latency

    def _now(self, verb: str, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` counted as ``_call`` counts it, for a caller that checked ``instant``:
        ``_call`` with nothing to await (positional arguments only: no keyword dict built on
        each of a pod's six calls)."""
        calls = self.stats.calls
        calls[verb] = calls.get(verb, 0) + 1
        try:
            return fn(*args)
        except Exception:
            self._failed(verb)
            raise

    def _failed(self, verb: str) -> None:
        errors = self.stats.errors
        errors[verb] = errors.get(verb, 0) + 1

    async def _call(self, verb: str, kind: str, fn: Callable[[], T]) -> T:
        calls = self.stats.calls
        calls[verb] = calls.get(verb, 0) + 1
        limiter = self.event_rate_limiter if kind == "Event" else self.rate_limiter
        if limiter is not None:
            await limiter.wait()
        lat = self.api_latency
        if lat.jitter > 0 or lat.mean > 0:  # else sample() is mean <= 0, with no draw
            delay = lat.sample(self._rng)
            if delay > 0:
                await self.clock.sleep(delay)
        try:
            if self.interceptor is not None:
                await self.interceptor(self.name, verb, kind)
            return fn()
        except Exception:
            self._failed(verb)
            raise

    async def create(self, obj: S) -> S:
        kind: str = getattr(obj, "kind", "")
        limiter = self.event_rate_limiter if kind == "Event" else self.rate_limiter
        if limiter is None and self.interceptor is None and self._no_latency:  # ``instant``
            return self.create_now(obj)
        return await self._call("create", kind, lambda: self.server.create(obj))

    def create_now(self, obj: S) -> S:
        """``create`` done synchronously, for a caller that checked ``instant(kind)`` (the
        scenario driver's first try of a create)."""
        created: S = self._now("create", self.server.create, obj)
        return created

    async def get(self, kind: str, name: str, namespace: str = "") -> Any:
        if self.instant(kind):
            return self._now("get", self.server.get, kind, name, namespace)
        return await self._call("get", kind, lambda: self.server.get(kind, name, namespace))

    async def list(
        self,
        kind: str,
        *,
        namespace: str | None = None,
        label_match: Callable[[Mapping[str, str]], bool] | None = None,
        fields: Mapping[str, str] | None = None,
    ) -> tuple[list[Any], int]:
        return await self._call(
            "list", kind, lambda: self.server.list(kind, namespace=namespace, label_match=label_match, fields=fields)
        )

    async def pod_metrics(self, namespace: str, selector: Selector) -> builtins.list[PodMetrics]:
        """``metrics.k8s.io/v1beta1`` PodMetrics of ``namespace``'s pods matching ``selector``
        (the resource metrics API: ``ApiServer.metrics``)."""
        return await self._call("list", "PodMetrics", lambda: self.server.metrics.pod_metrics(namespace, selector))

    async def pod_usage(self, namespace: str, selector: Selector, resource: str) -> tuple[str, dict[str, int | None]]:
        """``pod_metrics`` reduced to one resource per pod, the same call (``ResourceMetrics.pod_usage``)."""
        return await self._call(
            "list", "PodMetrics", lambda: self.server.metrics.pod_usage(namespace, selector, resource)
        )

    async def update(self, obj: S) -> S:
        return await self._call("update", getattr(obj, "kind", ""), lambda: self.server.update(obj))

    def can_renew_now(self) -> bool:
        """Whether a call would run at once, without suspending (no rate limiter, latency or
        interceptor): the condition of the Lease fast path on the client's side."""
        return self.instant()

    def renew_lease_now(self, lease: Lease, spec: LeaseSpec) -> Lease | None:
        """``update(replace(lease, spec=spec))`` done synchronously through the server's Lease
        fast path (``ApiServer.renew_lease``), when the call would not have suspended
        (``can_renew_now``: ``update`` then runs at once too) and the fast path applies; None
        otherwise, with nothing done or counted (await ``update`` instead). Many at one
        instant: ``leasebatch.LeaseBatch``."""
        if not self.can_renew_now():
            return None
        new = self.server.renew_lease(lease, spec)
        if new is not None:
            calls = self.stats.calls
            calls["update"] = calls.get("update", 0) + 1
        return new

    def stand_lease(
        self, lease: Lease, spec: LeaseSpec, first: float, interval: float, on_end: Callable[[Lease | None], None]
    ) -> bool:
        """Ask the server to hold ``lease``'s renewals from ``first`` every ``interval``
        (``ApiServer.stand_lease``) when a call would not suspend (``can_renew_now``); False,
        nothing asked, otherwise. ``on_end(lease)``: the server ended it (write again)."""
        if not self.can_renew_now():
            return False
        return self.server.stand_lease(lease, spec, first, interval, on_end)

    def end_standing(self, namespace: str, name: str) -> None:
        """No renewal of the Lease after now (``ApiServer.end_standing``)."""
        self.server.end_standing(namespace, name)

    def standing_renewals(self) -> StandingRenewals:
        """The server's standing renewals, as a ``standing_aware`` watcher reads them."""
        return self.server.standing

    async def update_status(self, obj: S) -> S:
        kind: str = getattr(obj, "kind", "")
        limiter = self.event_rate_limiter if kind == "Event" else self.rate_limiter
        if limiter is None and self.interceptor is None and self._no_latency:  # ``instant``
            return self.update_status_now(obj)
        return await self._call("updateStatus", kind, lambda: self.server.update_status(obj))

    def update_status_now(self, obj: S) -> S:
        """``update_status`` done synchronously, for a caller that checked ``instant(kind)``."""
        written: S = self._now("updateStatus", self.server.update_status, obj)
        return written

    async def patch_status(
        self, kind: str, name: str, namespace: str, mutate: Callable[[Any], Any | None]
    ) -> Any | None:
        """A status PATCH: the server applies ``mutate`` to the object as it is when the request
        arrives (after the rate limiter and latency), with no resourceVersion precondition, so it
        never conflicts; ``mutate`` returning None leaves it unchanged (an empty patch). None if
        the object is gone; else the object after the patch."""

        def apply() -> Any | None:
            try:
                current = self.server.get(kind, name, namespace)
            except NotFound:
                return None
            new = mutate(current)
            return current if new is None else self.server.update_status(new)

        return await self._call("patch", kind, apply)

    async def resize(self, pod: Pod) -> Pod:
        """``pods/<name>/resize`` (in-place resize): the containers' resources of ``pod``."""
        return await self._call("resize", "Pod", lambda: self.server.update_resize(pod))

    async def delete(
        self,
        kind: str,
        name: str,
        namespace: str = "",
        *,
        grace_period_seconds: int | None = None,
        uid: str = "",
        propagation_policy: str | None = None,
        resource_version: str = "",
    ) -> Any:
        """``DeleteOptions``: grace period, the uid and resourceVersion preconditions, and
        ``propagationPolicy`` (``Background``, ``Foreground``, ``Orphan``; None: the kind's default)."""
        call = functools.partial(
            self.server.delete,
            kind,
            name,
            namespace,
            grace_period_seconds=grace_period_seconds,
            uid=uid,
            propagation_policy=propagation_policy,
            resource_version=resource_version,
        )
        if self.instant(kind):
            return self._now("delete", call)
        return await self._call("delete", kind, call)

    async def evict(self, namespace: str, name: str, *, grace_period_seconds: int | None = None, uid: str = "") -> Any:
        """The pods/eviction subresource (a 429 ``TooManyRequests`` when a budget refuses)."""
        return await self._call(
            "evict",
            "Pod",
            lambda: self.server.evict(namespace, name, grace_period_seconds=grace_period_seconds, uid=uid),
        )

    async def bind(self, namespace: str, name: str, node: str, *, uid: str = "") -> Any:
        binding = Binding(
            metadata=ObjectMeta(name=name, namespace=namespace, uid=uid),
            target=ObjectReference(kind="Node", name=node),
        )
        if self.interceptor is None and self._no_latency and self.rate_limiter is None:  # ``instant``
            return self._now("bind", self.server.bind, binding)
        return await self._call("bind", "Pod", lambda: self.server.bind(binding))

    def watch(
        self,
        kind: str,
        *,
        namespace: str | None = None,
        label_match: Callable[[Mapping[str, str]], bool] | None = None,
        fields: Mapping[str, str] | None = None,
        resource_version: int | None = None,
        allow_bookmarks: bool = False,
        lazy_bookmarks: bool = False,
        standing_aware: bool = False,
    ) -> WatchStream:
        """Open a watch now (raises ``Gone`` for a compacted ``resource_version``).
        ``lazy_bookmarks``: a BOOKMARK does not wake the consumer by itself (``Watcher``);
        only where the latest bookmark is all that matters and none draws a random delay.
        ``standing_aware``: a watcher of Leases that reads the standing renewals itself (the
        node lifecycle controller); any other ends them (``ApiServer.watch``)."""
        w = self.server.watch(
            kind,
            name=self.name,
            namespace=namespace,
            label_match=label_match,
            fields=fields,
            resource_version=resource_version,
            allow_bookmarks=allow_bookmarks,
            lazy_bookmarks=lazy_bookmarks and self.watch_latency.jitter <= 0,
            standing_aware=standing_aware,
        )
        return WatchStream(self, w)
