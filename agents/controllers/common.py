"""What the emulated controllers share: upstream's taint keys and node helpers, the
``UpdatePodCondition`` rule, node taint swaps, and ``NodePodWatches``. Events and retry
backoffs are the client layer's (``emulator.base.client.events``, ``emulator.base.client.retry``).

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
from collections.abc import Callable, Sequence
from typing import Any, Final

from msgspec.structs import replace

from emulator.base.api.core import Node, NodeCondition, Pod, PodCondition, PodStatus, Taint
from emulator.base.api.errors import ApiError, Conflict, NotFound
from emulator.base.client.client import Client
from emulator.base.client.informer import Informer
from emulator.base.client.retry import Backoff, on_error
from emulator.base.runtime.clock import Clock

__all__ = [
    "TAINT_NODE_NOT_READY",
    "TAINT_NODE_OUT_OF_SERVICE",
    "TAINT_NODE_UNREACHABLE",
    "TAINT_NODE_UNSCHEDULABLE",
    "TAINT_SWAP_BACKOFF",
    "NodePodWatches",
    "node_condition",
    "swap_node_taints",
    "update_pod_condition",
]

TAINT_NODE_NOT_READY: Final = "node.kubernetes.io/not-ready"
TAINT_NODE_UNREACHABLE: Final = "node.kubernetes.io/unreachable"
TAINT_NODE_UNSCHEDULABLE: Final = "node.kubernetes.io/unschedulable"
TAINT_NODE_OUT_OF_SERVICE: Final = "node.kubernetes.io/out-of-service"
TAINT_SWAP_BACKOFF: Final = Backoff(steps=5)
"""``swap_node_taints``: five tries back to back; a non-Conflict error waits
``_RETRY_SLEEP`` inside its try (upstream's ``RetryOnConflict(UpdateTaintBackoff)`` waits
100 ms plus jitter after a Conflict instead; adopting it would move every trace)."""
_RETRY_SLEEP: Final = 0.02
"""Upstream ``retrySleepTime``."""


def node_condition(node: Node, type_: str) -> NodeCondition | None:
    return next((c for c in node.status.conditions if c.type == type_), None)


def update_pod_condition(status: PodStatus, cond: PodCondition, now: str) -> PodStatus | None:
    """Upstream ``UpdatePodCondition``: ``status`` with ``cond`` added or replaced (its
    transition time kept while its status holds), or None when nothing changed
    (``observedGeneration`` alone does not count: upstream's ``isEqual`` leaves it out)."""
    old = next((c for c in status.conditions if c.type == cond.type), None)
    if old is None:
        return replace(status, conditions=[*status.conditions, replace(cond, last_transition_time=now)])
    since = old.last_transition_time if old.status == cond.status else now
    new = replace(cond, last_transition_time=since)
    if replace(new, observed_generation=old.observed_generation) == old:
        return None
    return replace(status, conditions=[new if c.type == cond.type else c for c in status.conditions])


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
    current = node

    async def attempt() -> None:
        nonlocal current
        try:
            if current is None:
                current = await client.get("Node", name)
            assert current is not None
            taints = [t for t in current.spec.taints if not any(_same(t, r) for r in remove)]
            for t in add:
                if not any(_same(t, x) for x in taints):
                    taints.append(replace(t, time_added=stamp))
            if taints != current.spec.taints:
                await client.update(replace(current, spec=replace(current.spec, taints=taints)))
        except NotFound:
            raise
        except Conflict:
            current = None
            raise
        except ApiError:
            current = None
            await clock.sleep(_RETRY_SLEEP)
            raise

    try:
        await on_error(TAINT_SWAP_BACKOFF, _retriable, attempt, clock=clock)
    except ApiError:
        return False
    return True


def _retriable(err: Exception) -> bool:
    return isinstance(err, ApiError) and not isinstance(err, NotFound)


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

    def listed(self, node: str) -> bool:
        """Whether the watch of ``node``'s pods has made its first list."""
        entry = self._open.get(node)
        return entry is not None and entry[0].synced.is_set()

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
