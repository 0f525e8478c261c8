"""Syntax of label keys, label values and DNS names (upstream ``k8s.io/apimachinery/pkg/util/validation``).

What this module owns: the one copy of each name regex the API uses, and the checks that return
upstream's messages for them, word for word:

==========================  ====================================  =====================================
check                       upstream                              used for
==========================  ====================================  =====================================
``qualified_name_errors``   ``IsQualifiedName``                   label keys, topology keys
``label_value_errors``      ``IsValidLabelValue``                 label values
``dns1123_label_errors``    ``IsDNS1123Label``                    namespace names
``dns1123_subdomain_errors`` ``IsDNS1123Subdomain``               object names, key prefixes
==========================  ====================================  =====================================

Each returns a list of messages, empty when the value is valid. ``is_label_key`` /
``is_label_value`` are the same checks as memoised booleans for hot matching loops;
``parse_int64`` is ``strconv.ParseInt(s, 10, 64)`` (``Gt``/``Lt`` requirements).

It does not own where these checks apply (``labelselector``, ``nodeaffinity``, ``validation``)
nor field paths: callers prefix the messages with their own.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Final

__all__ = [
    "DNS1123_LABEL_MAX_LEN",
    "DNS1123_LABEL_RE",
    "DNS1123_SUBDOMAIN_MAX_LEN",
    "DNS1123_SUBDOMAIN_RE",
    "config_key_errors",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "go_quote",
    "go_strings",
    "is_dns1123_label",
    "is_label_key",
    "is_label_value",
    "label_value_errors",
    "parse_int64",
    "qualified_name_errors",
]

_QNAME_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_ERR: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_QNAME_MAX_LEN: Final = 63
_LABEL_VALUE_FMT: Final = f"({_QNAME_FMT})?"
_LABEL_VALUE_ERR: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_MAX_LEN: Final = 63
_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_ERR: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
DNS1123_LABEL_MAX_LEN: Final = 63
_DNS1123_SUBDOMAIN_FMT: Final = _DNS1123_LABEL_FMT + r"(\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_ERR: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
DNS1123_SUBDOMAIN_MAX_LEN: Final = 253

_QNAME_RE: Final = re.compile(_QNAME_FMT)
_LABEL_VALUE_RE: Final = re.compile(_LABEL_VALUE_FMT)
DNS1123_LABEL_RE: Final = re.compile(_DNS1123_LABEL_FMT)
"""An RFC 1123 label; use with ``fullmatch`` (and check ``DNS1123_LABEL_MAX_LEN``)."""
DNS1123_SUBDOMAIN_RE: Final = re.compile(_DNS1123_SUBDOMAIN_FMT)
"""An RFC 1123 subdomain; use with ``fullmatch`` (and check ``DNS1123_SUBDOMAIN_MAX_LEN``)."""
_INT64_RE: Final = re.compile(r"[+-]?[0-9]+")
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


def go_quote(value: str) -> str:
    """``value`` quoted the way Go's ``%q`` shows it in an error message."""
    return json.dumps(value, ensure_ascii=False)


def go_strings(values: list[str] | tuple[str, ...]) -> str:
    """Go's ``%#v`` of a ``[]string`` (as ``field.Invalid`` prints a list value)."""
    if not values:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


def _blen(value: str) -> int:
    """Length in bytes, as Go's ``len`` counts it."""
    return len(value) if value.isascii() else len(value.encode())


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``validation.RegexError``: the message, the examples, the regex."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_KEY_RE = re.compile(_CONFIG_KEY_FMT)
_CONFIG_KEY_ERR = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"


def config_key_errors(value: str) -> list[str]:
    """``IsConfigMapKey``: a ConfigMap's or Secret's data key (``[-._a-zA-Z0-9]+``, at most
    253 characters, not ``.``, ``..`` nor starting with ``..``: upstream's ``hasChDirPrefix``)."""
    errs: list[str] = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX_LEN:
        errs.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX_LEN} characters")
    if _CONFIG_KEY_RE.fullmatch(value) is None:
        errs.append(_regex_error(_CONFIG_KEY_ERR, _CONFIG_KEY_FMT, "key.name", "KEY_NAME", "key-name"))
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def dns1123_label_errors(value: str) -> list[str]:
    """``IsDNS1123Label``: at most 63 characters of ``[a-z0-9-]``, alphanumeric at both ends."""
    errs: list[str] = []
    if _blen(value) > DNS1123_LABEL_MAX_LEN:
        errs.append(f"must be no more than {DNS1123_LABEL_MAX_LEN} characters")
    if DNS1123_LABEL_RE.fullmatch(value) is None:
        errs.append(_regex_error(_DNS1123_LABEL_ERR, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_label(value: str) -> bool:
    """``not dns1123_label_errors(value)``, without building the messages."""
    return _blen(value) <= DNS1123_LABEL_MAX_LEN and DNS1123_LABEL_RE.fullmatch(value) is not None


def dns1123_subdomain_errors(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: dot-separated RFC 1123 labels, at most 253 characters."""
    errs: list[str] = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX_LEN:
        errs.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX_LEN} characters")
    if DNS1123_SUBDOMAIN_RE.fullmatch(value) is None:
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_ERR, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def qualified_name_errors(value: str) -> list[str]:
    """``IsQualifiedName``: ``[DNS-subdomain "/"] name``, the name at most 63 characters."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain_errors(prefix))
    else:
        return [
            "a qualified name "
            + _regex_error(_QNAME_ERR, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif _blen(name) > _QNAME_MAX_LEN:
        errs.append(f"name part must be no more than {_QNAME_MAX_LEN} characters")
    if _QNAME_RE.fullmatch(name) is None:
        errs.append("name part " + _regex_error(_QNAME_ERR, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value: str) -> list[str]:
    """``IsValidLabelValue``: empty, or at most 63 characters shaped like a qualified name's name."""
    errs: list[str] = []
    if _blen(value) > _LABEL_VALUE_MAX_LEN:
        errs.append(f"must be no more than {_LABEL_VALUE_MAX_LEN} characters")
    if _LABEL_VALUE_RE.fullmatch(value) is None:
        errs.append(_regex_error(_LABEL_VALUE_ERR, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


@lru_cache(maxsize=16384)
def is_label_key(key: str) -> bool:
    """``not qualified_name_errors(key)``, memoised (matching loops ask it per node per pod)."""
    return not qualified_name_errors(key)


@lru_cache(maxsize=16384)
def is_label_value(value: str) -> bool:
    """``not label_value_errors(value)``, memoised."""
    return not label_value_errors(value)


@lru_cache(maxsize=4096)
def parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``; ``None`` where Go returns an error."""
    if _INT64_RE.fullmatch(text) is None:
        return None
    value = int(text)
    if value < _INT64_MIN or value > _INT64_MAX:
        return None
    return value
