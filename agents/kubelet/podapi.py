"""``PodWriter``: the kubelet's API calls about pods, with their retry rules.

This module owns how the kubelet writes to the API server for its pods, and what it does
when a call fails; it holds no pod state (``kubelet.py`` does) and decides nothing about
*what* to write (``podstatus.py``).

=================  ===========================================================================
call               on failure
=================  ===========================================================================
write_status       Conflict: re-read and rebuild; NotFound: give up. Never writes over a pod
                   that is terminating, terminal, or another pod under the same name
                   (a different UID): returns ``None`` instead.
record_event       best effort, as upstream's event recorder: a failed create is dropped
confirm_deletion   ``delete`` with grace 0 and the pod's UID as precondition; NotFound or
                   Conflict (a new pod under the name) mean ours is gone
get                ``None`` when the object is gone or the call failed
=================  ===========================================================================

Any other ``ApiError`` (an injected ``InternalError``) is retried after ``retry_delay``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from msgspec.structs import replace

from agents.kubelet.retry import retry_delay
from emulator.api.core import Event, EventSource, Pod, PodStatus
from emulator.api.errors import ApiError, Conflict, NotFound
from emulator.api.meta import ObjectMeta, ObjectReference
from emulator.client.client import Client
from emulator.runtime.clock import EPOCH, Clock

__all__ = ["PodWriter"]

_TERMINAL: Final = ("Succeeded", "Failed")
_EPOCH_NS: Final = int(EPOCH.timestamp()) * 10**9


class PodWriter:
    """Pod writes of the kubelet of ``node_name``; counts what happened."""

    def __init__(self, client: Client, clock: Clock, node_name: str) -> None:
        self._client = client
        self._clock = clock
        self._node_name = node_name
        self.status_writes = 0
        self.conflicts = 0
        self.api_errors = 0

    def __repr__(self) -> str:
        return f"<PodWriter {self._node_name} status_writes={self.status_writes} conflicts={self.conflicts}>"

    async def _backoff(self, attempt: int) -> None:
        self.api_errors += 1
        await self._clock.sleep(retry_delay(attempt))

    async def get(self, kind: str, name: str, namespace: str = "") -> Any:
        """A fresh read; ``None`` if the object is gone or the call failed."""
        try:
            return await self._client.get(kind, name, namespace)
        except NotFound:
            return None
        except ApiError:
            self.api_errors += 1
            return None

    async def write_status(self, current: Pod, uid: str, build: Callable[[Pod], PodStatus]) -> Pod | None:
        """Write ``build(pod)`` as the status of pod ``uid`` (``current`` is the newest
        version known); the written pod, or ``None`` if nothing was written."""
        namespace, name = current.metadata.namespace, current.metadata.name
        pod: Pod | None = current
        attempt = 0
        while True:
            if pod is None:
                try:
                    pod = await self._client.get("Pod", name, namespace)
                except NotFound:
                    return None
                except ApiError:
                    await self._backoff(attempt)
                    attempt += 1
                    continue
            meta = pod.metadata
            if meta.uid != uid or meta.deletion_timestamp is not None or pod.status.phase in _TERMINAL:
                return None
            try:
                written: Pod = await self._client.update_status(replace(pod, status=build(pod)))
            except Conflict:
                self.conflicts += 1
                pod = None
                continue
            except NotFound:
                return None
            except ApiError:
                await self._backoff(attempt)
                attempt += 1
                pod = None
                continue
            self.status_writes += 1
            return written

    async def record_event(self, pod: Pod, type_: str, reason: str, message: str) -> None:
        """An Event about ``pod`` from this kubelet, named as upstream (``<pod>.<unix ns hex>``)."""
        now = self._clock.timestamp()
        meta = pod.metadata
        event = Event(
            metadata=ObjectMeta(
                name=f"{meta.name}.{_EPOCH_NS + round(self._clock.now() * 1e9):x}", namespace=meta.namespace
            ),
            involved_object=ObjectReference(
                api_version="v1", kind="Pod", namespace=meta.namespace, name=meta.name, uid=meta.uid
            ),
            reason=reason,
            message=message,
            type=type_,
            source=EventSource(component="kubelet", host=self._node_name),
            first_timestamp=now,
            last_timestamp=now,
            reporting_component="kubelet",
            reporting_instance=self._node_name,
        )
        try:
            await self._client.create(event)
        except ApiError:
            self.api_errors += 1

    async def confirm_deletion(self, namespace: str, name: str, uid: str) -> None:
        """Remove the terminated pod: ``delete`` with grace 0, preconditioned on its UID."""
        attempt = 0
        while True:
            try:
                await self._client.delete("Pod", name, namespace, grace_period_seconds=0, uid=uid)
            except (NotFound, Conflict):
                return
            except ApiError:
                await self._backoff(attempt)
                attempt += 1
                continue
            return
