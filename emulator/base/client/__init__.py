"""Agents' side of the API: ``Client`` (latency, faults) and ``Informer`` (list/watch cache)."""

from emulator.base.client.client import Client, Interceptor, Latency
from emulator.base.client.informer import Informer
from emulator.base.client.watchstream import WatchStream

__all__ = ["Client", "Informer", "Interceptor", "Latency", "WatchStream"]
