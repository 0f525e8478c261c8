"""The registry of strategies: every stored kind has one, and a kind is added with one more.

``Widget`` is a kind made up here: a Struct, a strategy and its line in ``STRATEGIES`` are
all it takes for create/get/update/list/watch with its own field selector
(``docs/architecture.md``, "Adding a kind", lists the HTTP door's places).
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from msgspec.structs import replace

from emulator.base.api.codec import KINDS
from emulator.base.api.core import Namespace
from emulator.base.api.errors import AlreadyExists, Invalid
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver import CLUSTER_SCOPED, ApiServer
from emulator.base.apiserver.registry import STRATEGIES, Strategy
from emulator.base.runtime.clock import StoppedClock


def test_every_decoded_kind_has_a_strategy() -> None:
    assert sorted(STRATEGIES) == sorted(kind for _, kind in KINDS)
    assert all(kind == strategy.kind for kind, strategy in STRATEGIES.items())
    assert frozenset(k for k, s in STRATEGIES.items() if not s.namespaced) == CLUSTER_SCOPED


class WidgetSpec(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    color: str = ""


class Widget(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    api_version: str = "example.com/v1"
    kind: str = "Widget"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: WidgetSpec = msgspec.field(default_factory=WidgetSpec)


class WidgetStrategy(Strategy):
    kind = "Widget"
    generation_on_create = True
    fields = {"spec.color": lambda w: w.spec.color}

    def prepare_for_create(self, obj: Any, *, restore: bool) -> Any:
        return obj if obj.spec.color else replace(obj, spec=WidgetSpec(color="grey"))

    def validate_update(self, current: Any, candidate: Any) -> None:
        if candidate.spec.color == "clear":
            raise Invalid.at("Widget", candidate.metadata.name, "spec.color", 'Unsupported value: "clear"')


def test_a_kind_is_one_strategy_and_one_registration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(STRATEGIES, "Widget", WidgetStrategy)  # the registration line
    srv = ApiServer(StoppedClock(), random.Random(0))
    srv.create(Namespace(metadata=ObjectMeta(name="default")))
    made = srv.create(Widget(metadata=ObjectMeta(name="w")))
    assert (made.metadata.namespace, made.spec.color, made.metadata.generation) == ("default", "grey", 1)
    with pytest.raises(AlreadyExists, match='widgets "w" already exists'):
        srv.create(Widget(metadata=ObjectMeta(name="w")))
    watcher = srv.watch("Widget", fields={"spec.color": "red"})
    red = srv.update(replace(made, spec=WidgetSpec(color="red")))
    assert red.metadata.generation == 2
    with pytest.raises(Invalid, match=r"spec\.color"):
        srv.update(replace(red, spec=WidgetSpec(color="clear")))
    assert srv.list("Widget", fields={"spec.color": "red"})[0] == [red]
    assert srv.list("Widget", fields={"spec.color": "grey"})[0] == []
    assert [e.type for e in watcher.channel.get_nowait_batch()] == ["ADDED"]
