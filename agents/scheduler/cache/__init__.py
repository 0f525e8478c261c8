"""The scheduler cache (assume / forget / confirm in ``pod_states``; ghost nodes, image states
in ``cache``) and the per-cycle ``Snapshot`` it keeps up to date incrementally; node order
from ``NodeTree``.

Upstream: ``pkg/scheduler/backend/cache/{cache,snapshot,node_tree}.go``.
"""

from .cache import Cache, CacheDump, CacheStatistics, NodeDump
from .node_tree import NodeTree, get_zone_key
from .pod_states import CacheError
from .snapshot import Snapshot, normalized_image_name

__all__ = [
    "Cache",
    "CacheDump",
    "CacheError",
    "CacheStatistics",
    "NodeDump",
    "NodeTree",
    "Snapshot",
    "get_zone_key",
    "normalized_image_name",
]
