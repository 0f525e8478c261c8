"""Completion indexes of an Indexed Job, as upstream's ``indexed_job_utils.go`` keeps them.

What this module owns (pure functions, no I/O):

- ``completion_index(pod)``: the index a pod runs, from its annotation
  ``batch.kubernetes.io/job-completion-index`` (``None`` when missing, not a decimal, or
  negative: upstream's ``unknownCompletionIndex``);
- ``format_intervals`` / ``parse_intervals``: ``status.completedIndexes`` and
  ``status.failedIndexes`` text, ordered intervals joined by commas (``"1,3-5"``; a single
  index has no dash and two adjacent ones are written ``"3,4"``, as upstream's
  ``orderedIntervals.String``), and back;
- ``first_pending_indexes``: the lowest indexes neither succeeded nor running, the ones a
  sync creates pods for;
- ``duplicated_index_pods``: active pods beyond the first of each index, and pods of an
  index out of range or without one, which a sync deletes before it creates anything;
- ``index_template``: the pod template of one index (upstream ``addCompletionIndexAnnotation``,
  ``addCompletionIndexLabel``, hostname ``<job>-<index>``, ``podGenerateNameWithIndex``).

It does not own when pods are created or deleted (``controller``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from msgspec.structs import replace

from emulator.base.api.core import Pod
from emulator.base.api.podtemplate import PodTemplateSpec

__all__ = [
    "COMPLETION_INDEX",
    "completion_index",
    "duplicated_index_pods",
    "first_pending_indexes",
    "format_intervals",
    "index_template",
    "parse_intervals",
]

COMPLETION_INDEX: Final = "batch.kubernetes.io/job-completion-index"
"""The annotation (and, since PodIndexLabel, the label) that carries a pod's index."""


def completion_index(pod: Pod) -> int | None:
    """Upstream ``getCompletionIndex``: the annotation's value, ``None`` if unusable."""
    raw = pod.metadata.annotations.get(COMPLETION_INDEX)
    if raw is None or not raw.isdecimal():
        return None
    return int(raw)


def format_intervals(indexes: Iterable[int]) -> str:
    """``orderedIntervals.String``: ``[1, 3, 4, 5]`` → ``"1,3-5"``, ``[3, 4]`` → ``"3,4"``."""
    parts: list[str] = []
    ordered = sorted(set(indexes))
    i = 0
    while i < len(ordered):
        first = last = ordered[i]
        while i + 1 < len(ordered) and ordered[i + 1] == last + 1:
            i += 1
            last = ordered[i]
        if first == last:
            parts.append(str(first))
        else:
            parts.append(f"{first}{',' if last == first + 1 else '-'}{last}")
        i += 1
    return ",".join(parts)


def parse_intervals(text: str, completions: int) -> set[int]:
    """``parseIndexesFromString``: the indexes below ``completions`` in ``text``; a
    malformed part is skipped, as upstream logs and skips it."""
    out: set[int] = set()
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        if not first.isdecimal() or (last and not last.isdecimal()):
            continue
        lo = int(first)
        hi = int(last) if last else lo
        out.update(range(lo, min(hi, completions - 1) + 1))
    return out


def first_pending_indexes(succeeded: set[int], running: set[int], count: int, completions: int) -> list[int]:
    """Upstream ``firstPendingIndexes``: up to ``count`` lowest indexes below
    ``completions`` that neither succeeded nor have an active pod (the caller adds the
    failed indexes of a Job with ``backoffLimitPerIndex`` to ``succeeded``)."""
    out: list[int] = []
    for ix in range(completions):
        if len(out) >= count:
            break
        if ix not in succeeded and ix not in running:
            out.append(ix)
    return out


def duplicated_index_pods(active: Sequence[Pod], completions: int) -> tuple[list[Pod], list[Pod]]:
    """Upstream ``appendDuplicatedIndexPodsForRemoval``: (to remove, to keep). Of the
    active pods of one index the first in (index, name) order is kept; pods with no index
    or one out of range are removed."""
    remove: list[Pod] = []
    keep: list[Pod] = []
    seen: set[int] = set()
    keyed = sorted(active, key=lambda p: (completion_index(p) is None, completion_index(p) or 0, p.metadata.name))
    for pod in keyed:
        ix = completion_index(pod)
        if ix is None or ix >= completions or ix in seen:
            remove.append(pod)
        else:
            seen.add(ix)
            keep.append(pod)
    return remove, keep


def index_template(
    template: PodTemplateSpec, job_name: str, index: int, annotations: Mapping[str, str]
) -> tuple[PodTemplateSpec, str]:
    """The template of index ``index``'s pod (with the extra ``annotations``: the failure
    counts under ``backoffLimitPerIndex``) and its ``generateName``."""
    meta = template.metadata
    out = replace(
        template,
        metadata=replace(
            meta,
            annotations={**meta.annotations, COMPLETION_INDEX: str(index), **annotations},
            labels={**meta.labels, COMPLETION_INDEX: str(index)},
        ),
        spec=replace(template.spec, hostname=f"{job_name}-{index}"),
    )
    return out, f"{job_name}-{index}-"
