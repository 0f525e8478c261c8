"""The API server: an etcd-like versioned store with a watch hub (see ``server``)."""

from emulator.apiserver.server import CLUSTER_SCOPED, ApiServer, ServerSettings, Verb, WriteRecord
from emulator.apiserver.watch import Watcher, WatchEvent, object_fields

__all__ = [
    "CLUSTER_SCOPED",
    "ApiServer",
    "ServerSettings",
    "Verb",
    "WatchEvent",
    "Watcher",
    "WriteRecord",
    "object_fields",
]
