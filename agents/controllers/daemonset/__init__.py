"""The DaemonSet controller: ``eligibility`` (which nodes run a daemon pod, and the pod it
makes there), ``manage`` (one sync's creations, deletions and status), ``update`` (the
rolling update), ``controller`` (the agent: informers, queue, writes)."""

from agents.controllers.daemonset.controller import DaemonSetController

__all__ = ["DaemonSetController"]
