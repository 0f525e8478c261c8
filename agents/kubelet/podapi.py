"""``PodWriter``: the kubelet's API calls about pods, with their retry rules.

This module owns how the kubelet writes to the API server for its pods, and what it does
when a call fails; it holds no pod state (``kubelet.py`` does) and decides nothing about
*what* to write (``podstatus.py``).

=================  ===========================================================================
call               on failure
=================  ===========================================================================
write_status       Conflict: re-read and rebuild; NotFound: give up. Never writes over a pod
                   that is terminating (but its terminal status), terminal, or another pod
                   under the same name (a different UID): returns ``None`` instead.
record_event       best effort (``EventRecorder``): a failed create is counted and dropped
confirm_deletion   ``delete`` with grace 0 and the pod's UID as precondition; NotFound or
                   Conflict (a new pod under the name) mean ours is gone
get                ``None`` when the object is gone or the call failed
=================  ===========================================================================

Any other ``ApiError`` (an injected ``InternalError``, a missing namespace) is retried until
the call goes through, after the waits of ``API_RETRY``: 0.5 s, 1 s, 2 s ... capped at 30 s,
without jitter (the run's randomness stays in the seeded streams). A Conflict re-read does
not advance the backoff. ``heartbeat.py`` retries its node and Lease writes the same way.
``PodWorker.write_status`` makes a status write's first try itself when the client cannot
suspend (``client.instant``) and hands a failure to ``retry_status``, as ``write_status`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from msgspec.structs import replace

from emulator.base.api.core import Pod, PodStatus
from emulator.base.api.errors import ApiError, Conflict, NotFound
from emulator.base.api.meta import ObjectReference
from emulator.base.client.client import Client
from emulator.base.client.events import EventRecorder
from emulator.base.client.retry import UNLIMITED, Backoff, on_error
from emulator.base.runtime.clock import Clock

__all__ = ["API_RETRY", "PodWriter"]

# The phases after which no status is written (the write refusals are kept alike in
# ``PodWriter.first_try`` and ``PodWriter.retry_status``).
_TERMINAL: Final = ("Succeeded", "Failed")

API_RETRY: Final = Backoff(duration=0.5, factor=2.0, cap=30.0, steps=UNLIMITED)
"""The kubelet's waits between tries of a failed write: doubling from 0.5 s up to 30 s,
then 30 s for as long as it takes (used with ``attempts=UNLIMITED``)."""


class PodWriter:
    """Pod writes of the kubelet of ``node_name``; counts what happened."""

    def __init__(self, client: Client, clock: Clock, node_name: str) -> None:
        self._client = self.client = client
        """``client``: read by ``PodWorker.write_status``, which makes the first try itself."""
        self._clock = clock
        self._node_name = node_name
        self.status_writes = 0
        self.conflicts = 0
        self.api_errors = 0
        self.events = EventRecorder(
            client, clock, "kubelet", instance=node_name, host=node_name, on_error=self._count_error
        )

    def __repr__(self) -> str:
        return f"<PodWriter {self._node_name} status_writes={self.status_writes} conflicts={self.conflicts}>"

    def _count_error(self, _err: ApiError) -> None:
        self.api_errors += 1

    def _transient(self, err: Exception) -> bool:
        """Retried after a backoff wait (and counted): an ApiError but NotFound or Conflict."""
        if isinstance(err, ApiError) and not isinstance(err, NotFound | Conflict):
            self.api_errors += 1
            return True
        return False

    async def get(self, kind: str, name: str, namespace: str = "") -> Any:
        """A fresh read; ``None`` if the object is gone or the call failed."""
        try:
            return await self._client.get(kind, name, namespace)
        except NotFound:
            return None
        except ApiError:
            self.api_errors += 1
            return None

    async def write_status(
        self, current: Pod, uid: str, build: Callable[[Pod], PodStatus], *, deleting: bool = False
    ) -> Pod | None:
        """Write ``build(pod)`` as the status of pod ``uid`` (``current`` is the newest
        version known); the written pod, or ``None`` if nothing was written. ``deleting``:
        the terminal status of a terminating pod (``deletedstatus.py``), written over its
        ``deletionTimestamp``."""
        if self._client.instant("Pod"):  # the first try made at once, without the retry loop's frames
            first = self.first_try(current, uid, build, deleting)
            if not isinstance(first, ApiError):
                return first
            return await self.retry_status(current, uid, build, deleting, first)
        return await self.retry_status(current, uid, build, deleting, None)

    def first_try(
        self, current: Pod, uid: str, build: Callable[[Pod], PodStatus], deleting: bool
    ) -> Pod | ApiError | None:
        """``write_status``'s first try, made at once by a caller that checked
        ``client.instant("Pod")``: the written pod; ``None`` when nothing may be written (another
        uid, a terminating pod unless ``deleting``, a terminal phase: as the retry loop
        refuses); or the ``ApiError`` the try met, for ``retry_status`` to take up (returned,
        not raised: the retry runs outside this handler, so a later error has no context)."""
        meta = current.metadata
        if meta.uid != uid or (meta.deletion_timestamp is not None and not deleting):
            return None
        if current.status.phase in _TERMINAL:
            return None
        try:
            written: Pod = self._client.update_status_now(replace(current, status=build(current)))
        except ApiError as err:
            return err
        self.status_writes += 1
        return written

    async def retry_status(
        self, current: Pod, uid: str, build: Callable[[Pod], PodStatus], deleting: bool, first: ApiError | None
    ) -> Pod | None:
        """``write_status`` through the retry loop; ``first``: the error of a first try already
        made (``write_status``'s or ``PodWorker.write_status``'s), taken up as the loop would
        have taken it up (a Conflict re-reads at once; a transient error waits the first backoff
        step; NotFound gives up)."""
        namespace, name = current.metadata.namespace, current.metadata.name
        pod: Pod | None = current
        backoff = API_RETRY
        if isinstance(first, Conflict):
            self.conflicts += 1
            pod = None
        elif first is not None:
            if not self._transient(first):
                if isinstance(first, NotFound):
                    return None
                raise first
            pod = None
            wait, backoff = backoff.step()
            if wait > 0:
                await self._clock.sleep(wait)

        async def attempt() -> Pod | None:
            nonlocal pod
            while True:  # a Conflict re-reads at once, without a backoff wait
                if pod is None:
                    pod = await self._client.get("Pod", name, namespace)
                assert pod is not None
                meta = pod.metadata
                terminating = meta.deletion_timestamp is not None and not deleting
                if meta.uid != uid or terminating or pod.status.phase in _TERMINAL:
                    return None
                try:
                    written: Pod = await self._client.update_status(replace(pod, status=build(pod)))
                except Conflict:
                    self.conflicts += 1
                    pod = None
                    continue
                except ApiError:
                    pod = None
                    raise
                self.status_writes += 1
                return written

        try:
            return await on_error(backoff, self._transient, attempt, clock=self._clock, attempts=UNLIMITED)
        except NotFound:
            return None

    async def record_event(self, pod: Pod, type_: str, reason: str, message: str, *, field_path: str = "") -> None:
        """An Event about ``pod`` from this kubelet, named as upstream (``<pod>.<unix ns hex>``);
        ``field_path``: about one of its containers (``spec.containers{web}``)."""
        meta = pod.metadata
        ref = ObjectReference(
            api_version="v1",
            kind="Pod",
            namespace=meta.namespace,
            name=meta.name,
            uid=meta.uid,
            field_path=field_path,
        )
        await self.events.event(ref, type_, reason, message)

    async def confirm_deletion(self, namespace: str, name: str, uid: str) -> None:
        """Remove the terminated pod: ``delete`` with grace 0, preconditioned on its UID."""

        async def delete() -> None:
            await self._client.delete("Pod", name, namespace, grace_period_seconds=0, uid=uid)

        try:
            await on_error(API_RETRY, self._transient, delete, clock=self._clock, attempts=UNLIMITED)
        except (NotFound, Conflict):
            return
