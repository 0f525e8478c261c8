"""The resourceclaim controller of kube-controller-manager (upstream
``pkg/controller/resourceclaim``): claims from templates per pod, reservations of scheduled
pods, ``reservedFor`` cleanup, deallocation and deletion of claims no pod needs
(``controller.py``)."""

from agents.controllers.resourceclaim.controller import COMPONENT, FIELD_MANAGER, NAME, ResourceClaimController

__all__ = ["COMPONENT", "FIELD_MANAGER", "NAME", "ResourceClaimController"]
