"""The Horizontal Pod Autoscaler controller (upstream ``pkg/controller/podautoscaler``, v1.34):
``horizontal`` (the controller), ``metrics`` (a proposal per metric), ``replica_calculator``
(upstream's arithmetic), ``behavior`` (stabilization and scaling policies), ``conditions``."""

from agents.controllers.podautoscaler.horizontal import HorizontalController

__all__ = ["HorizontalController"]
