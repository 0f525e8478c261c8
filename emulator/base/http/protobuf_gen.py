"""Writes ``data/protobuf_messages.json``, the protobuf message tables the HTTP door reads.

Run from the repository root, with local git mirrors of k8s.io/api and k8s.io/apimachinery::

    python -m emulator.base.http.protobuf_gen API_GIT_DIR APIMACHINERY_GIT_DIR

It reads each group's ``generated.proto`` (the messages, field numbers, types, maps) and the
Go sources beside it (which fields are pointers, which are embedded structs whose JSON is
inlined into the parent, and the JSON names) at the mirrors' ``HEAD``, and those of any other
version a read message refers to; nothing is fetched at
run time and the written file is committed. Owns the parsing and the table format only; the
wire reader and writer are ``protobuf`` / ``protobuf_encode``, the tables' reader
``protobuf_schema``.

Table format: ``{"messages": {full name: [[number, json name, type, ref, flags], ...]},
"packages": {apiVersion: proto package}, "lists": [full names whose JSON is the list of their
single ``items`` field]}``; ``type`` is ``s`` string, ``y`` bytes, ``?`` bool, ``i`` a signed
varint (int32/int64), ``u`` unsigned varint, ``d`` double, ``f`` float, ``m`` a message
(``ref`` its full name), ``M`` a map (``ref`` ``[key type, value type, value message or ""]``);
``flags`` bit 1 repeated, 2 a Go pointer (its zero value is kept), 4 inlined in JSON.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

GROUPS: Final = (
    "core",
    "apps",
    "batch",
    "policy",
    "coordination",
    "scheduling",
    "storage",
    "resource",
    "autoscaling",
    "networking",
    "rbac",
    "authentication",
    "authorization",
    "events",
    "discovery",
)
EXTRA_VERSIONS: Final = ("autoscaling/v2",)
"""Served versions other than a group's v1 (``autoscaling/v2``: HorizontalPodAutoscaler)."""
MACHINERY: Final = ("pkg/apis/meta/v1", "pkg/runtime", "pkg/api/resource", "pkg/util/intstr")
OUT: Final = Path(__file__).parent / "data" / "protobuf_messages.json"
_SCALARS: Final = {
    "string": "s",
    "bytes": "y",
    "bool": "?",
    "int32": "i",
    "int64": "i",
    "uint32": "u",
    "uint64": "u",
    "double": "d",
    "float": "f",
}
_FIELD = re.compile(r"^\s*(optional|repeated|required)\s+(\S+)\s+(\w+)\s*=\s*(\d+)")
_MAP = re.compile(r"^\s*map<\s*(\S+)\s*,\s*(\S+)\s*>\s+(\w+)\s*=\s*(\d+)")


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def _go_fields(source: str) -> dict[str, dict[int, tuple[str, bool, bool]]]:
    """struct name → protobuf number → (json name, pointer, inlined), from Go struct tags."""
    out: dict[str, dict[int, tuple[str, bool, bool]]] = {}
    struct = ""
    for line in source.splitlines():
        if m := re.match(r"^type (\w+) struct", line):
            struct = m.group(1)
            continue
        tag = re.search(r'protobuf:"([^"]*)"', line)
        if not struct or tag is None or line.lstrip().startswith("//"):
            continue
        parts = tag.group(1).split(",")
        if len(parts) < 2 or not parts[1].isdigit():
            continue
        head = line.split("`", 1)[0].split()
        js = re.search(r'json:"([^"]*)"', line)
        json_name = js.group(1).split(",")[0] if js else ""
        inline = not json_name  # an embedded struct without a JSON name: its fields are the parent's
        pointer = len(head) >= 2 and head[1].startswith("*")
        out.setdefault(struct, {})[int(parts[1])] = (json_name, pointer, inline)
    return out


def _proto(
    text: str, go: dict[str, dict[int, tuple[str, bool, bool]]], messages: dict[str, Any], lists: list[str]
) -> str:
    package = re.search(r"^package ([\w.]+);", text, re.M)
    assert package is not None
    pkg = package.group(1)
    name = ""
    nullable = False
    rows: list[list[Any]] = []

    def ref(t: str) -> str:
        return t.lstrip(".") if t.startswith(".") else f"{pkg}.{t}"

    for line in text.splitlines():
        if "+protobuf.nullable=true" in line:
            nullable = True
        elif m := re.match(r"^message (\w+) \{", line):
            name, rows = m.group(1), []
        elif line.startswith("}") and name:
            full = f"{pkg}.{name}"
            messages[full] = sorted(rows)
            if nullable and [r[1] for r in rows] == ["items"]:
                lists.append(full)
            name, nullable = "", False
        elif name and (m := _FIELD.match(line)):
            label, typ, fname, num = m.groups()
            json_name, pointer, inline = go.get(name, {}).get(int(num), (fname, False, False))
            kind = _SCALARS.get(typ, "m")
            flags = (label == "repeated") | pointer << 1 | inline << 2
            rows.append([int(num), json_name or fname, kind, ref(typ) if kind == "m" else "", flags])
        elif name and (m := _MAP.match(line)):
            key, value, fname, num = m.groups()
            vkind = _SCALARS.get(value, "m")
            rows.append([int(num), fname, "M", [_SCALARS[key], vkind, ref(value) if vkind == "m" else ""], 0])
    return pkg


def _go_sources(repo: str, folder: str) -> str:
    names = _git(repo, "ls-tree", "--name-only", "HEAD", f"{folder}/").split()
    keep = [n for n in names if n.endswith(".go") and not n.endswith("_test.go") and "generated" not in n]
    return "\n".join(_git(repo, "show", f"HEAD:{n}") for n in keep)


def generate(api_repo: str, machinery_repo: str) -> dict[str, Any]:
    messages: dict[str, Any] = {}
    lists: list[str] = []
    packages: dict[str, str] = {}
    for folder in MACHINERY:
        go = _go_fields(_go_sources(machinery_repo, folder))
        _proto(_git(machinery_repo, "show", f"HEAD:{folder}/generated.proto"), go, messages, lists)
    for group in GROUPS:
        folder = f"{group}/v1"
        go = _go_fields(_go_sources(api_repo, folder))
        pkg = _proto(_git(api_repo, "show", f"HEAD:{folder}/generated.proto"), go, messages, lists)
        packages["v1" if group == "core" else f"{_api_group(group)}/v1"] = pkg
    for folder in EXTRA_VERSIONS:
        go = _go_fields(_go_sources(api_repo, folder))
        pkg = _proto(_git(api_repo, "show", f"HEAD:{folder}/generated.proto"), go, messages, lists)
        group, version = folder.split("/")
        packages[f"{_api_group(group)}/{version}"] = pkg
    while missing := sorted({_package(ref) for ref in _refs(messages) if ref not in messages}):
        for package in missing:  # a served message names one of another version (an alpha's)
            folder = "/".join(package.removeprefix("k8s.io.api.").split(".")[:2])
            go = _go_fields(_go_sources(api_repo, folder))
            _proto(_git(api_repo, "show", f"HEAD:{folder}/generated.proto"), go, messages, lists)
    return {"messages": dict(sorted(messages.items())), "packages": packages, "lists": sorted(lists)}


def _refs(messages: dict[str, Any]) -> set[str]:
    return {row[3][2] if row[2] == "M" else row[3] for rows in messages.values() for row in rows} - {""}


def _package(message: str) -> str:
    return message.rsplit(".", 1)[0]


def _api_group(group: str) -> str:
    if group in ("apps", "batch", "policy", "autoscaling"):
        return group
    return "rbac.authorization.k8s.io" if group == "rbac" else f"{group}.k8s.io"


def render(tables: dict[str, Any]) -> str:
    """One message per line, so that a diff of the committed file reads."""
    lines = [
        '{"packages": ' + json.dumps(tables["packages"], sort_keys=True) + ",",
        '"lists": ' + json.dumps(tables["lists"]) + ",",
        '"messages": {',
    ]
    items = list(tables["messages"].items())
    for i, (name, rows) in enumerate(items):
        sep = "," if i < len(items) - 1 else ""
        lines.append(f"{json.dumps(name)}: {json.dumps(rows, separators=(',', ':'))}{sep}")
    lines.append("}}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    OUT.write_text(render(generate(argv[0], argv[1])))
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
