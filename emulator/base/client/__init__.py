"""Agents' side of the API: ``Client`` (latency, faults) and ``Informer`` (list/watch cache)."""

from emulator.base.client.client import Client, Interceptor, Latency, WatchStream
from emulator.base.client.informer import Informer

__all__ = ["Client", "Informer", "Interceptor", "Latency", "WatchStream"]
