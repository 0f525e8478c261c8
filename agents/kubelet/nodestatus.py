"""The node status a kubelet reports, its addresses, and image names: pure functions.

This module owns what the emulated kubelet writes into ``Node.status`` (upstream
``pkg/kubelet/nodestatus/setters.go``): the four kubelet-owned conditions (upstream order
MemoryPressure, DiskPressure, PIDPressure, Ready, with their reasons and messages, each
keeping its ``lastTransitionTime`` while its status holds and taking a fresh
``lastHeartbeatTime`` on every write), ``nodeInfo``, default addresses, and the image list
(largest first, at most 50, as upstream's ``nodeStatusMaxImages``). Capacity and
allocatable are the scenario's and are never touched. It does not decide when the status
is written (``kubelet.py``).

Addresses are fake but deterministic, from the node's *index*: the number its name ends
with, else 20 bits of SHA-256 of the name. Host IP ``172.16.0.0/12`` + index + 1 (unless the
node lists an ``InternalIP``); pod CIDR ``spec.podCIDR`` or ``10.<hi>.<lo>.0/24`` with
index + 1 = hi * 256 + lo (wrapping beyond 65,535 nodes). ``PodIPs`` hands out the addresses of
``pod_ip_pool`` (the reference list); for an IPv4 CIDR it reads them from ``pod_ip_range``,
which formats each address when asked instead of building the whole list per node.

Image names are compared normalised as the scheduler's ImageLocality does: a name
without a tag after its last ``/`` gets ``:latest``.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, overload

from msgspec.structs import replace

from emulator.base.api.core import ContainerImage, Node, NodeAddress, NodeCondition, NodeStatus, NodeSystemInfo

__all__ = [
    "MAX_IMAGES",
    "NODE_CONDITIONS",
    "PodIPs",
    "host_ip",
    "image_index",
    "node_conditions",
    "node_index",
    "node_status",
    "normalize_image",
    "pod_cidr",
    "pod_ip_pool",
    "pod_ip_range",
    "report_images",
    "system_info",
]

MAX_IMAGES: Final = 50
NODE_CONDITIONS: Final = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)
"""(type, status, reason, message) of the conditions a healthy kubelet posts."""

_TRAILING_NUMBER: Final = re.compile(r"(\d+)$")


def normalize_image(name: str) -> str:
    """``nginx`` -> ``nginx:latest``; a tag or digest after the last ``/`` is kept."""
    return name if name.rfind(":") > name.rfind("/") else name + ":latest"


def node_index(name: str) -> int:
    """The number the node's name ends with, else a stable 20-bit hash of the name."""
    m = _TRAILING_NUMBER.search(name)
    if m is not None:
        return int(m[1])
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:3], "big") >> 4


def host_ip(node: Node) -> str:
    """The node's ``InternalIP``, else a fake one in 172.16.0.0/12 from its index."""
    for addr in node.status.addresses:
        if addr.type == "InternalIP":
            return addr.address
    i = (node_index(node.metadata.name) + 1) % (1 << 20)
    return f"172.{16 + (i >> 16)}.{(i >> 8) & 255}.{i & 255}"


def pod_cidr(node: Node) -> str:
    """``spec.podCIDR``, else ``10.<hi>.<lo>.0/24`` from the node's index."""
    if node.spec.pod_cidr:
        return node.spec.pod_cidr
    i = (node_index(node.metadata.name) + 1) % (1 << 16)
    return f"10.{i >> 8}.{i & 255}.0/24"


def pod_ip_pool(cidr: str) -> list[str]:
    """Pod addresses of ``cidr`` in order, skipping the first host (the gateway); at most
    1,024 of them (far more than a node's pod capacity)."""
    net = ipaddress.ip_network(cidr, strict=False)
    if net.version == 4 and net.prefixlen <= 30:
        # Fast path (one per node at start-up): hosts are network+1 .. broadcast-1.
        first = int(net.network_address) + 2
        count = min(net.num_addresses - 3, 1024)
        return [f"{i >> 24}.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}" for i in range(first, first + count)]
    hosts: Iterable[ipaddress.IPv4Address | ipaddress.IPv6Address] = ipaddress.ip_network(cidr, strict=False).hosts()
    out: list[str] = []
    for n, addr in enumerate(hosts):
        if n == 0:
            continue
        out.append(str(addr))
        if len(out) >= 1024:
            break
    return out


class _V4Range(Sequence[str]):
    """IPv4 addresses ``first`` .. ``first + count - 1`` as dotted strings, made on access."""

    __slots__ = ("_count", "_first")

    def __init__(self, first: int, count: int) -> None:
        self._first = first
        self._count = count

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        i = self._first + index
        return f"{i >> 24}.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"


def pod_ip_range(cidr: str) -> Sequence[str]:
    """``pod_ip_pool(cidr)``, computed lazily where the pool is a plain IPv4 range."""
    net = ipaddress.ip_network(cidr, strict=False)
    if net.version == 4 and net.prefixlen <= 30:
        return _V4Range(int(net.network_address) + 2, min(net.num_addresses - 3, 1024))
    return pod_ip_pool(cidr)


class PodIPs:
    """Pod addresses of one node, handed out round robin as host-local IPAM does (a freed
    address is not reused at once); ``""`` when the pool is exhausted."""

    __slots__ = ("_cidr", "_cursor", "_first", "_pool", "_size", "_used")

    def __init__(self, cidr: str = "") -> None:
        self._cidr = cidr
        self._pool: Sequence[str] | None = None  # made on the first allocation (1,000s of nodes)
        self._size = 0
        self._first = -1
        """For a ``_V4Range`` pool, its first address: ``allocate`` formats the address itself
        (what ``_V4Range.__getitem__`` returns, without its frames)."""
        self._used: set[str] = set()
        self._cursor = 0

    def __len__(self) -> int:
        return len(self._used)

    def allocate(self) -> str:
        pool = self._pool
        if pool is None:
            pool = self._pool = pod_ip_range(self._cidr) if self._cidr else []
            self._size = len(pool)
            if isinstance(pool, _V4Range):
                self._first = pool._first
        size, cursor, first, used = self._size, self._cursor, self._first, self._used
        for step in range(size):
            index = (cursor + step) % size
            if first >= 0:
                i = first + index
                ip = f"{i >> 24}.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"
            else:
                ip = pool[index]
            if ip not in used:
                self._cursor = (cursor + step + 1) % size
                used.add(ip)
                return ip
        return ""

    def claim(self, ip: str) -> None:
        """Mark ``ip`` as used (a pod adopted with its address)."""
        if ip:
            self._used.add(ip)

    def release(self, ip: str) -> None:
        self._used.discard(ip)


def node_conditions(old: Sequence[NodeCondition], now: str) -> list[NodeCondition]:
    """The kubelet's conditions (heartbeat ``now``) in place of the old ones; conditions
    it does not own (NetworkUnavailable...) are kept where they were."""
    by_type = {c.type: c for c in old}
    fresh: dict[str, NodeCondition] = {}
    for ctype, status, reason, message in NODE_CONDITIONS:
        prev = by_type.get(ctype)
        since = now
        if prev is not None and prev.status == status and prev.last_transition_time:
            since = prev.last_transition_time
        fresh[ctype] = NodeCondition(
            type=ctype,
            status=status,
            reason=reason,
            message=message,
            last_heartbeat_time=now,
            last_transition_time=since,
        )
    out = [fresh.pop(c.type, c) for c in old]
    out.extend(fresh.values())
    return out


def system_info(node: Node, *, kubelet_version: str, ids: Sequence[str]) -> NodeSystemInfo:
    """``status.nodeInfo``: OS and architecture from the node (its old nodeInfo or
    ``kubernetes.io/arch`` label) when given, else linux/amd64; ``ids`` are machineID,
    systemUUID and bootID."""
    old = node.status.node_info or NodeSystemInfo()
    labels = node.metadata.labels
    machine_id, system_uuid, boot_id = ids
    return NodeSystemInfo(
        machine_id=machine_id,
        system_uuid=system_uuid,
        boot_id=boot_id,
        kernel_version="6.8.0-emulated",
        os_image="kube-emulator",
        container_runtime_version="containerd://2.0.0-emulated",
        kubelet_version=kubelet_version,
        operating_system=old.operating_system or labels.get("kubernetes.io/os", "linux"),
        architecture=old.architecture or labels.get("kubernetes.io/arch", "amd64"),
    )


def report_images(entries: Sequence[ContainerImage]) -> list[ContainerImage]:
    """``status.images``: the largest first (stable), at most ``MAX_IMAGES``."""
    return sorted(entries, key=lambda e: -e.size_bytes)[:MAX_IMAGES]


def node_status(
    node: Node,
    *,
    now: str,
    info: NodeSystemInfo,
    images: Sequence[ContainerImage] | None,
) -> NodeStatus:
    """The status to write: conditions with heartbeat ``now``, ``info``, default addresses
    (InternalIP, Hostname) if the node has none, and ``images`` when given."""
    status = node.status
    changes: dict[str, object] = {
        "conditions": node_conditions(status.conditions, now),
        "node_info": info,
    }
    if not status.addresses:
        changes["addresses"] = [
            NodeAddress(type="InternalIP", address=host_ip(node)),
            NodeAddress(type="Hostname", address=node.metadata.name),
        ]
    if images is not None:
        changes["images"] = list(images)
    return replace(status, **changes)


def image_index(entries: Iterable[ContainerImage]) -> Mapping[str, int]:
    """Normalised image name -> size, over every name of every entry."""
    return {normalize_image(name): e.size_bytes for e in entries for name in e.names}
