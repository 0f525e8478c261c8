"""The API server: a versioned store with a watch hub (``store``), the verbs (``server``) and one
strategy per kind (``registry``)."""

from emulator.base.apiserver.server import CLUSTER_SCOPED, ApiServer, ServerSettings, Verb, WriteRecord
from emulator.base.apiserver.watcher import Watcher, WatchEvent, object_fields

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
