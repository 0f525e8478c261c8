"""The Deployment controller (upstream ``pkg/controller/deployment``), one module per
upstream file: ``controller`` (handlers, queue, ``syncDeployment``), ``sync`` (new
ReplicaSet, scaling, cleanup, status writes), ``rolling``, ``recreate``, ``progress``
(conditions and ``progressDeadlineSeconds``) and ``util`` (pure helpers)."""

from agents.controllers.deployment.controller import DeploymentController

__all__ = ["DeploymentController"]
