"""The per-object rendering of benchmark templates the harness calls while it creates objects:
``render`` (a Node or Pod, from a template with Go-template actions: ``{{.Index}}``,
``{{.Count}}``, ``templateParams``) and ``render_any`` (any kind), as upstream's scheduler_perf
executes its templates (``gotemplate.py``); pods with ``spec.priority`` refer to a PriorityClass
of that value (``with_priority_class``).
"""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from emulator.app.bench.gotemplate import has_actions, parse
from emulator.app.bench.steps import Params
from emulator.base.api.codec import ApiObject, object_from_dict
from emulator.base.api.core import Node, Pod
from emulator.base.inputs import load_documents

__all__ = ["PRIORITY_CLASS_PREFIX", "render", "render_any", "with_priority_class", "without_nulls"]

PRIORITY_CLASS_PREFIX = "bench-priority-"


def render(text: str, index: int, *, count: int = 1, params: Params = (), source: str = "template") -> Node | Pod:
    """The Node or Pod of a Go-template template's text for the object at ``index`` of ``count``."""
    obj = render_any(text, index, count=count, params=params, source=source)
    assert isinstance(obj, Node | Pod)
    return with_priority_class(obj)


def render_any(
    text: str, index: int, *, count: int = 1, params: Params = (), source: str = "template", validated: bool = True
) -> ApiObject:
    """Any kind's object from a template's text, executed as upstream does (``gotemplate.py``:
    ``templateParams`` plus ``Index`` and ``Count``); ``TemplateError``, ``YamlError`` or
    ``ManifestError`` if it is not one. ``validated=False``: a partial object for a
    subresource (``pods/resize`` takes only the containers' resources, as upstream's template
    gives them: no image)."""
    rendered = parse(text).render({**dict(params), "Index": index, "Count": count}) if has_actions(text) else text
    docs = load_documents(rendered, source=source).docs
    return object_from_dict(without_nulls(docs[0]) if docs else None, source=source, validated=validated)


def without_nulls(doc: Any) -> Any:
    """``doc`` without the mapping entries whose value is null: upstream decodes its templates
    into Go structs, where ``null`` leaves a field unset (``constraints: {{$constraints}}`` renders
    ``null`` without the parameter)."""
    if isinstance(doc, dict):
        return {k: without_nulls(v) for k, v in doc.items() if v is not None}
    if isinstance(doc, list):
        return [without_nulls(v) for v in doc]
    return doc


def with_priority_class(obj: Node | Pod) -> Node | Pod:
    """Upstream's templates set ``spec.priority`` directly (scheduler_perf's apiserver runs no
    Priority admission); ours admits it only with a PriorityClass of that value, so refer to one."""
    if isinstance(obj, Pod) and obj.spec.priority is not None and not obj.spec.priority_class_name:
        spec = replace(obj.spec, priority_class_name=f"{PRIORITY_CLASS_PREFIX}{obj.spec.priority}")
        return replace(obj, spec=spec)
    return obj
