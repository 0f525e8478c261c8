"""Field selectors in their string form (upstream ``k8s.io/apimachinery/pkg/fields``).

What this module owns: ``parse_field_requirements`` (``fields.ParseSelector``: ``=``, ``==``
and ``!=`` terms, with its backslash escapes), ``parse_field_selector`` (its equality-only
form) and ``fields_match``. It does not own which fields an object
exposes (the API server's table of selectable fields) nor node affinity's ``matchFields``
(``nodeaffinity``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from emulator.base.api.labels import go_quote

__all__ = ["fields_match", "parse_field_requirements", "parse_field_selector"]


def _split_terms(text: str) -> list[str]:
    """Split on the commas that no backslash escapes."""
    terms: list[str] = []
    start = 0
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _unescape_field_value(value: str) -> str:
    if "\\" not in value and "," not in value and "=" not in value:
        return value
    out: list[str] = []
    escaped = False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise ValueError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise ValueError(f"invalid field selector: unescaped character in value: {ch}")
        else:
            out.append(ch)
    if escaped:
        raise ValueError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _terms(text: str) -> Iterator[tuple[str, str, str, str]]:
    """(term, field, op, value) of each non-empty term, in order, parsed as it is reached;
    ``op`` is ``=`` (for ``=`` and ``==``) or ``!=``."""
    for term in _split_terms(text) if text else []:
        if not term:
            continue
        cut = -1
        op = ""
        for i, ch in enumerate(term):
            if ch == "!" and term.startswith("!=", i):
                op = "!="
            elif ch == "=":
                op = "==" if term.startswith("==", i) else "="
            else:
                continue
            cut = i
            break
        if cut < 0:
            raise ValueError(f"invalid selector: '{text}'; can't understand '{term}'")
        value = _unescape_field_value(term[cut + len(op) :])
        yield term, term[:cut], "!=" if op == "!=" else "=", value


def parse_field_requirements(text: str) -> list[tuple[str, str, str]]:
    """``metadata.name=x,status.phase!=Failed`` as ``(field, op, value)`` terms in order, ``op``
    ``=`` (for ``=`` and ``==``) or ``!=`` (``fields.ParseSelector``): empty terms are skipped,
    an empty value is allowed, values may escape ``\\``, ``,`` and ``=`` with a backslash."""
    return [(field, op, value) for _, field, op, value in _terms(text)]


def parse_field_selector(text: str) -> dict[str, str]:
    """``metadata.name=x,spec.nodeName=`` as ``{field: value}``: ``parse_field_requirements``
    with ``=`` and ``==`` only (``!=`` raises). A field given two different values raises
    (upstream ANDs them: nothing would match).
    """
    result: dict[str, str] = {}
    for term, field, op, value in _terms(text):
        if op == "!=":
            raise ValueError(f"invalid selector: '{text}'; '!=' is not supported in '{term}' (only = and ==)")
        if result.get(field, value) != value:
            raise ValueError(f"invalid selector: '{text}'; field {go_quote(field)} is given two different values")
        result[field] = value
    return result


def fields_match(fields: Mapping[str, str], obj_fields: Mapping[str, str]) -> bool:
    """Every selected field equals the object's (a field the object lacks reads as ``""``)."""
    return all(obj_fields.get(field, "") == value for field, value in fields.items())
