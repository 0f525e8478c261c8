"""The ``storage`` section: simulated CSI drivers, one agent each (``agents.csi``).

.. code-block:: yaml

    storage:
      drivers:
        - name: ebs.csi.aws.com            # the CSIDriver object; every node's CSINode lists it
          topologyKeys: [topology.kubernetes.io/zone]   # provisioned PVs' node affinity keys
          attachLimit: 25                  # CSINode allocatable.count (omitted: no limit)
          provisionDelay: {mean: 2s, jitter: 500ms}
          attachDelay: {mean: 1s}
          capacity: {perTopology: 10Ti}    # published as CSIStorageCapacity per topology segment

Delays are ``Delay`` as the kubelet's (``{mean, jitter}``), drawn from the driver's own seeded
stream ``csi/<name>``. ``storage_problems`` holds the checks across entries (a driver named
twice, names and topology keys upstream would refuse); the loader reports the first.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

import msgspec

from emulator.app.scenario.schema.base import Bytes, NonNegativeInt, Spec
from emulator.app.scenario.schema.cluster import Delay
from emulator.base.api.labels import dns1123_subdomain_errors, qualified_name_errors

__all__ = ["DriverCapacity", "StorageConfig", "StorageDriver", "storage_problems"]


class DriverCapacity(Spec, frozen=True, kw_only=True):
    per_topology: Bytes
    """Bytes each topology segment (each distinct value tuple of ``topologyKeys`` among the
    nodes; the whole cluster without keys) can hold, per StorageClass of the driver."""


class StorageDriver(Spec, frozen=True, kw_only=True):
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=63)]
    """The CSI driver's name (``CSIDriver`` name, StorageClass ``provisioner``, PV ``csi.driver``)."""
    topology_keys: list[str] = []
    attach_limit: NonNegativeInt | None = None
    provision_delay: Delay = Delay()
    attach_delay: Delay = Delay()
    capacity: DriverCapacity | None = None


class StorageConfig(Spec, frozen=True, kw_only=True):
    drivers: list[StorageDriver] = []


def storage_problems(storage: StorageConfig) -> Iterator[tuple[str, str]]:
    """``(path, detail)`` for each driver entry upstream would refuse, in file order."""
    first: dict[str, int] = {}
    for i, driver in enumerate(storage.drivers):
        path = f"storage.drivers[{i}]"
        if errs := dns1123_subdomain_errors(driver.name):
            yield f"{path}.name", f"expected a CSI driver name (a DNS-1123 subdomain): {errs[0]}"
        if driver.name in first:
            twice = f'driver "{driver.name}" is named twice'
            yield f"{path}.name", f"{twice} (first at storage.drivers[{first[driver.name]}])"
        first.setdefault(driver.name, i)
        seen: set[str] = set()
        for j, key in enumerate(driver.topology_keys):
            if errs := qualified_name_errors(key):
                yield f"{path}.topologyKeys[{j}]", f"expected a label key: {errs[0]}"
            if key in seen:
                yield f"{path}.topologyKeys[{j}]", f'topology key "{key}" is listed twice'
            seen.add(key)
