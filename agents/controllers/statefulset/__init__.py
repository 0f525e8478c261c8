"""The StatefulSet controller: ``identity`` (ordinal names, the pod a revision makes),
``control`` (one sync as a pure plan), ``controller`` (the agent: informers, queue, writes).
Revisions are hashed by ``agents.controllers.history``."""

from agents.controllers.statefulset.controller import StatefulSetController

__all__ = ["StatefulSetController"]
