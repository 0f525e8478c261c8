"""``LeaseWriter``: how one kubelet creates and renews its node's heartbeat Lease.

This module owns the Lease object the kubelet last wrote and the writes themselves: the
create (``kube-node-lease/<node>``, owned by the Node), the renewal (``spec.renewTime`` now,
``holderIdentity`` and ``leaseDurationSeconds`` set) through the retried ``update``
(``renew``: a ``Conflict`` re-reads at once, other errors wait ``podapi.API_RETRY``) or the
client's synchronous fast path (``renew_now`` → ``Client.renew_lease_now``), and the count of
Lease writes. It does not own *when* a renewal happens, the ticker's batched renewals or the
standing renewals held by the API server: those are ``heartbeat.py``'s (``NodeReporter``),
which hands this writer's ``renewed`` to the batch as its answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from msgspec.structs import replace

from agents.kubelet.podapi import API_RETRY
from agents.kubelet.settings import KubeletSettings
from emulator.base.api.core import Node
from emulator.base.api.errors import AlreadyExists, ApiError, Conflict, NotFound
from emulator.base.api.meta import ObjectMeta, OwnerReference
from emulator.base.api.scheduling import Lease, LeaseSpec
from emulator.base.client.client import Client
from emulator.base.client.retry import UNLIMITED, on_error
from emulator.base.runtime.clock import Clock

__all__ = ["LEASE_NAMESPACE", "LeaseWriter"]

LEASE_NAMESPACE: Final = "kube-node-lease"


class LeaseWriter:
    """Creates and renews the Lease of node ``node_name``; ``node()`` is the newest Node seen
    (its UID owns a Lease created)."""

    def __init__(
        self,
        client: Client,
        clock: Clock,
        node_name: str,
        settings: KubeletSettings,
        node: Callable[[], Node | None],
    ) -> None:
        self._client = client
        self._clock = clock
        self._name = node_name
        self._settings = settings
        self._node = node
        self.lease: Lease | None = None
        """The Lease as this kubelet last wrote it (None: to be read or created)."""
        self.writes = 0
        self.conflicts = 0
        self.api_errors = 0

    def __repr__(self) -> str:
        return f"<LeaseWriter {self._name} writes={self.writes}>"

    def _transient(self, err: Exception) -> bool:
        """Retried after an ``API_RETRY`` wait (and counted): an ApiError but a Conflict."""
        if isinstance(err, ApiError) and not isinstance(err, Conflict):
            self.api_errors += 1
            return True
        return False

    def _new_lease(self) -> Lease:
        node = self._node()
        owners = []
        if node is not None and node.metadata.uid:
            owners = [OwnerReference(api_version="v1", kind="Node", name=self._name, uid=node.metadata.uid)]
        return Lease(
            metadata=ObjectMeta(name=self._name, namespace=LEASE_NAMESPACE, owner_references=owners),
            spec=LeaseSpec(
                holder_identity=self._name,
                lease_duration_seconds=self._settings.lease_duration_seconds,
                renew_time=self._clock.timestamp(),
            ),
        )

    async def renew(self) -> None:
        """Create the node's Lease, or move its ``renewTime`` to now; retried until done."""

        async def attempt() -> None:
            while True:  # a Conflict re-reads at once, without a backoff wait
                try:
                    if await self._renew_once():
                        self.writes += 1
                        return
                except Conflict:
                    self.conflicts += 1
                    self.lease = None
                except ApiError:  # NotFound here: the namespace is missing
                    self.lease = None
                    raise

        await on_error(API_RETRY, self._transient, attempt, clock=self._clock, attempts=UNLIMITED)

    def renew_spec(self, lease: Lease) -> LeaseSpec:
        """``lease``'s spec renewed now by this kubelet."""
        return replace(
            lease.spec,
            holder_identity=self._name,
            lease_duration_seconds=self._settings.lease_duration_seconds,
            renew_time=self._clock.timestamp(),
        )

    def renew_now(self) -> bool:
        """A renewal of the Lease this kubelet last wrote, done at once through the client's
        fast path (``Client.renew_lease_now``): the same write ``renew`` makes when its
        update needs no retry; False if it does not apply (nothing written)."""
        lease = self.lease
        if lease is None:
            return False
        new = self._client.renew_lease_now(lease, self.renew_spec(lease))
        if new is None:
            return False
        self.renewed(new)
        return True

    def renewed(self, lease: Lease) -> None:
        """A fast-path renewal was written (``renew_now``, or the ticker's ``LeaseBatch``)."""
        self.lease = lease
        self.writes += 1

    async def _renew_once(self) -> bool:
        client = self._client
        lease = self.lease
        if lease is None:
            try:
                self.lease = await client.create(self._new_lease())
            except AlreadyExists:
                lease = await client.get("Lease", self._name, LEASE_NAMESPACE)
            else:
                return True
        try:
            self.lease = await client.update(replace(lease, spec=self.renew_spec(lease)))
        except NotFound:  # deleted meanwhile: create it again next round
            self.lease = None
            return False
        return True
