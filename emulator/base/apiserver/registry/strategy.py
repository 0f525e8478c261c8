"""What a kind's strategy may say about its objects, and what it says when it says nothing.

A strategy is upstream's ``rest.RESTCreateStrategy``/``RESTUpdateStrategy`` of one kind
(``pkg/registry/<group>/<kind>/strategy.go``): the store (``emulator.base.apiserver.store``) keeps
the objects and the revision, the verbs (``emulator.base.apiserver.server``) run the same steps for
every kind, and at each step ask the kind's strategy. A strategy never writes: it returns the
object to store or raises a typed ``ApiError`` before anything is changed.

=============================  =================================================================
hook                           when the verbs call it (upstream's name)
=============================  =================================================================
``namespaced``                 scope: a cluster-scoped kind's namespace is dropped (NamespaceScoped)
``create_refusal``             a kind that cannot be created (Binding): ``Invalid`` with it
``prepare_for_create``         defaulting, status reset (PrepareForCreate; ``restore`` keeps it)
``validate``                   the object as it will be stored (Validate)
``check_create``               rules against other stored objects, once the name is free
``generation_on_create``       ``metadata.generation`` starts at 1
``generation_on_update``       a spec change bumps ``metadata.generation`` (not for Leases:
                               upstream's lease strategy never sets it)
``complete_create``            what needs the uid (a Job's generated selector)
``prepare_for_update``         defaulting of the client's object (PrepareForUpdate)
``validate_update``            the candidate against the stored object (ValidateUpdate)
``prepare_for_status_update``  what a status write may change (the status strategy's
                               PrepareForUpdate: the status only)
``validate_status_update``     the status write's candidate (ValidateUpdate of the status)
``graceful_delete``            the grace period of a delete; 0 deletes at once (CheckGracefulDelete)
``held_on_delete``             a kind whose own rules keep a deleted object, marked (a Namespace
                               with spec finalizers: ``Terminating``; its storage's ``Delete``)
``status_update_deletes``      a status write that removes the object (a terminating Namespace's
                               last spec finalizer gone: ``ShouldDeleteNamespaceDuringUpdate``)
``fields``                     selectable fields besides ``metadata.name``/``namespace`` (GetAttrs)
``ttl``                        the store deletes an object this kind's TTL after its last write
``invalidated_by``             kinds whose writes empty this strategy's memo (``invalidate``)
=============================  =================================================================

It does not own the store's bookkeeping (revisions, history, watch, listeners), the rules every
kind shares (finalizers, owner references, preconditions: ``emulator.base.apiserver.deletion``), nor
the HTTP door's view of a kind (``emulator.base.http.resources``, ``emulator.base.http.printers``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Protocol

from msgspec.structs import replace

from emulator.base.api.validation import validate, validate_status_update, validate_update

__all__ = ["FieldGetter", "StoreView", "Strategy", "field_text"]

FieldGetter = Callable[[Any], str]


class StoreView(Protocol):
    """What a strategy may read of the store it serves."""

    def table(self, kind: str) -> Mapping[tuple[str, str], Any]:
        """The stored objects of ``kind`` by (namespace, name)."""
        ...

    def feature_gates(self) -> Mapping[str, bool]:
        """The feature gates set for this API server (the others keep v1.34's defaults)."""
        ...

    def name_suffix(self) -> str:
        """Five random characters for ``generateName`` (the store's seeded rng)."""
        ...


def field_text(value: Any) -> str:
    """A field's value as a field selector compares it (``true``/``false`` for booleans)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


class Strategy:
    """The rules of one kind; every hook's default is the rule of a kind with no rules of its
    own. One instance per API server (``store``: what it may read of it)."""

    kind: ClassVar[str] = ""
    namespaced: ClassVar[bool] = True
    generation_on_create: ClassVar[bool] = False
    generation_on_update: ClassVar[bool] = True
    create_refusal: ClassVar[str | None] = None
    """Set: ``create`` refuses the kind with ``Invalid`` at ``kind`` with this detail."""
    fields: ClassVar[Mapping[str, FieldGetter]] = {}
    ttl: ClassVar[bool] = False
    """The store expires the objects of this kind (``ServerSettings.event_ttl``): Events."""
    invalidated_by: ClassVar[tuple[str, ...]] = ()

    def __init__(self, store: StoreView) -> None:
        self.store = store

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.kind}>"

    def invalidate(self) -> None:
        """An object of a kind in ``invalidated_by`` was written: forget what was memoised."""

    # --- create -------------------------------------------------------------------------

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        """The client's object as it will be stored (defaulted). ``restore``: seeding existing
        state, the given status is kept."""
        return obj

    def validate(self, obj: Any) -> None:
        validate(obj)

    def check_create(self, obj: Any) -> None:
        """Rules that read other stored objects (the name is known to be free)."""

    def complete_create(self, obj: Any) -> Any:
        """The object once it has its uid and timestamps."""
        return obj

    # --- update -------------------------------------------------------------------------

    def prepare_for_update(self, current: Any, candidate: Any) -> Any:
        """``candidate``: the client's object with the stored metadata and the client's labels,
        annotations, owner references and finalizers (its status is replaced by the stored one
        after this)."""
        return candidate

    def validate_update(self, current: Any, candidate: Any) -> None:
        validate_update(candidate)

    def prepare_for_status_update(self, current: Any, obj: Any) -> Any:
        """A status write changes the status only."""
        return replace(current, status=obj.status)

    def validate_status_update(self, current: Any, candidate: Any) -> None:
        validate_status_update(candidate)

    # --- delete -------------------------------------------------------------------------

    def graceful_delete(self, current: Any, grace_period_seconds: int | None) -> int:
        """Seconds the object stays, marked, before it goes; 0: deleted at once."""
        return 0

    def held_on_delete(self, current: Any) -> Any | None:
        """The object a delete keeps (before ``deletion.mark_deleting``), or None: it goes
        unless metadata finalizers keep it."""
        return None

    def status_update_deletes(self, candidate: Any) -> bool:
        """The status write of ``candidate`` removes the object instead."""
        return False
