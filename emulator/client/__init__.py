"""Agents' side of the API: ``Client`` (latency, faults) and ``Informer`` (list/watch cache)."""

from emulator.client.client import Client, Interceptor, Latency, WatchStream
from emulator.client.informer import Informer

__all__ = ["Client", "Informer", "Interceptor", "Latency", "WatchStream"]
