"""What the emulated controllers share: upstream's taint keys and node helpers, the
``UpdatePodCondition`` rule, best-effort Events, node taint swaps, and ``NodePodWatches``.

``NodePodWatches`` is how the controllers see pods without watching every pod of the
cluster: one informer per node of interest, filtered by ``spec.nodeName`` (the watch hub
routes those by node, so pods of other nodes cost nothing). Upstream's controllers share
one pod informer with a node-name index; with the scheduler already holding the one
full pod watch, a second and third full watch would be the controllers' main cost in a
150,000-pod run, so they watch only the nodes that need it (tainted, deleted, out of
service). It does not decide which nodes those are: each controller does.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Any, Final

from msgspec.structs import replace

from emulator.api.core import Event, EventSource, Node, NodeCondition, Pod, PodCondition, PodStatus, Taint
from emulator.api.errors import ApiError, Conflict, NotFound
from emulator.api.meta import ObjectMeta, ObjectReference
from emulator.client.client import Client
from emulator.client.informer import Informer
from emulator.runtime.clock import EPOCH, Clock

__all__ = [
    "TAINT_NODE_NOT_READY",
    "TAINT_NODE_OUT_OF_SERVICE",
    "TAINT_NODE_UNREACHABLE",
    "TAINT_NODE_UNSCHEDULABLE",
    "NodePodWatches",
    "node_condition",
    "record_event",
    "swap_node_taints",
    "update_pod_condition",
]

TAINT_NODE_NOT_READY: Final = "node.kubernetes.io/not-ready"
TAINT_NODE_UNREACHABLE: Final = "node.kubernetes.io/unreachable"
TAINT_NODE_UNSCHEDULABLE: Final = "node.kubernetes.io/unschedulable"
TAINT_NODE_OUT_OF_SERVICE: Final = "node.kubernetes.io/out-of-service"
_EPOCH_NS: Final = int(EPOCH.timestamp()) * 10**9
_RETRIES: Final = 5


def node_condition(node: Node, type_: str) -> NodeCondition | None:
    return next((c for c in node.status.conditions if c.type == type_), None)


def update_pod_condition(status: PodStatus, cond: PodCondition, now: str) -> PodStatus | None:
    """Upstream ``UpdatePodCondition``: ``status`` with ``cond`` added or replaced (its
    transition time kept while its status holds), or None when nothing changed."""
    old = next((c for c in status.conditions if c.type == cond.type), None)
    if old is None:
        return replace(status, conditions=[*status.conditions, replace(cond, last_transition_time=now)])
    since = old.last_transition_time if old.status == cond.status else now
    new = replace(cond, last_transition_time=since)
    if new == old:
        return None
    return replace(status, conditions=[new if c.type == cond.type else c for c in status.conditions])


async def record_event(
    client: Client,
    clock: Clock,
    involved: ObjectReference,
    type_: str,
    reason: str,
    message: str,
    component: str,
) -> None:
    """Best effort, as upstream's event recorder: an Event in the object's namespace
    (``default`` for cluster-scoped objects); a failed create is dropped."""
    now = clock.timestamp()
    event = Event(
        metadata=ObjectMeta(
            name=f"{involved.name}.{_EPOCH_NS + round(clock.now() * 1e9):x}",
            namespace=involved.namespace or "default",
        ),
        involved_object=involved,
        reason=reason,
        message=message,
        type=type_,
        source=EventSource(component=component),
        first_timestamp=now,
        last_timestamp=now,
        reporting_component=component,
    )
    with contextlib.suppress(ApiError):
        await client.create(event)


def _same(a: Taint, b: Taint) -> bool:
    """Upstream ``MatchTaint``: same key and effect."""
    return a.key == b.key and a.effect == b.effect


async def swap_node_taints(
    client: Client, clock: Clock, node: Node | None, name: str, add: Sequence[Taint], remove: Sequence[Taint]
) -> bool:
    """Upstream ``SwapNodeControllerTaint``: add ``add`` (stamped ``timeAdded`` now; a taint
    already there is kept) and remove ``remove`` (matched by key and effect). ``node`` is the
    newest copy known (None: read it); a Conflict re-reads. False if it could not be done."""
    stamp = clock.timestamp()
    for _ in range(_RETRIES):
        try:
            if node is None:
                node = await client.get("Node", name)
            assert node is not None
            taints = [t for t in node.spec.taints if not any(_same(t, r) for r in remove)]
            for t in add:
                if not any(_same(t, x) for x in taints):
                    taints.append(replace(t, time_added=stamp))
            if taints == node.spec.taints:
                return True
            await client.update(replace(node, spec=replace(node.spec, taints=taints)))
            return True
        except NotFound:
            return False
        except Conflict:
            node = None
        except ApiError:
            node = None
            await clock.sleep(0.02)  # upstream retrySleepTime
    return False


PodHandler = Callable[[Pod], None]


class NodePodWatches:
    """Pod informers for chosen nodes, run as tasks of the owner's task group."""

    def __init__(
        self,
        client: Client,
        prefix: str,
        on_add: PodHandler | None = None,
        on_update: Callable[[Pod, Pod], None] | None = None,
        on_delete: PodHandler | None = None,
    ) -> None:
        self._client = client
        self._prefix = prefix
        self._handlers = (on_add, on_update, on_delete)
        self._open: dict[str, tuple[Informer, asyncio.Task[None]]] = {}
        self._tg: asyncio.TaskGroup | None = None

    def __repr__(self) -> str:
        return f"<NodePodWatches {self._prefix} nodes={len(self._open)}>"

    def __contains__(self, node: str) -> bool:
        return node in self._open

    def __len__(self) -> int:
        return len(self._open)

    def start(self, tg: asyncio.TaskGroup) -> None:
        self._tg = tg

    def open(self, node: str) -> None:
        """Watch the pods bound to ``node`` (no-op if already watched)."""
        if node in self._open:
            return
        assert self._tg is not None, "NodePodWatches.start() first"
        informer = Informer(self._client, "Pod", fields={"spec.nodeName": node})
        informer.add_handlers(*self._handlers)
        task = self._tg.create_task(informer.run(), name=f"{self._prefix}:pods:{node}")
        self._open[node] = (informer, task)

    async def synced(self, node: str) -> None:
        """Wait until the watch of ``node``'s pods has listed them."""
        entry = self._open.get(node)
        if entry is not None:
            await entry[0].synced.wait()

    def close(self, node: str) -> None:
        entry = self._open.pop(node, None)
        if entry is not None:
            entry[1].cancel()

    def pods(self, node: str) -> list[Pod]:
        """The pods bound to ``node`` as its informer has them, by namespace and name."""
        entry = self._open.get(node)
        if entry is None:
            return []
        store: dict[tuple[str, str], Any] = entry[0].store
        return [store[k] for k in sorted(store)]
