"""Reading what users hand us, safely: the input-error family and its paths (``errors``),
bounded file reading (``reader``), YAML with aliases, recursion and depth bounded and node
marks kept (``yamldocs``), and ``kind: List`` flattening with a size limit (``lists``).

A base package: it imports nothing of ours, so every layer above (api, agents, scenario,
commands) reports bad input with the same ``InputError`` and the same message format.
"""

from emulator.base.inputs.errors import (
    InputError,
    PlainInputError,
    join_path,
    join_paths,
    msgspec_error,
    show,
    split_path,
)
from emulator.base.inputs.lists import MAX_ITEMS, flatten_list, is_list
from emulator.base.inputs.reader import MAX_FILE_BYTES, ReadError, read_bytes, read_text
from emulator.base.inputs.yamldocs import MAX_ALIASES, MAX_DEPTH, YamlDocuments, YamlError, YamlLoader, load_documents

__all__ = [
    "MAX_ALIASES",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_ITEMS",
    "InputError",
    "PlainInputError",
    "ReadError",
    "YamlDocuments",
    "YamlError",
    "YamlLoader",
    "flatten_list",
    "is_list",
    "join_path",
    "join_paths",
    "load_documents",
    "msgspec_error",
    "read_bytes",
    "read_text",
    "show",
    "split_path",
]
