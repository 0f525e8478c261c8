"""Hostile PATCH bodies through the HTTP door (issue 24 #2, #3): medians of --repeat runs.

    python bench/hostile_patch.py [--repeat 5] [--tree DIR ...]

Cases, each a real request over loopback to an in-process ``HttpApi`` (``tests/http/server_support``):

- ``smp-4000``: a strategic merge patch setting the image of every container of a pod with
  4,000 containers (the pod is created first, untimed);
- ``ssa-2000``: a server-side apply of a pod with 2,000 containers as a second manager over an
  object first applied by another manager (the first apply is untimed);
- ``bomb-20``/``bomb-30``: a JSON patch ``add`` then n x ``copy`` of the growing list.

Each figure is the request's wall time in seconds and its status code (-1: the run died under
a 2 GiB address-space limit or passed --timeout; its time is then the subprocess's). With ``--tree``, every
repeat runs each case once per tree, alternated, each in a fresh subprocess with ``PYTHONPATH``
set to that tree (so a worktree of an older commit can be measured against this one in one run
on a shared machine); without it, the current tree only. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MEMORY_LIMIT = 2 * 1024**3
"""Address space per run: the n=30 bomb on the original code runs out of it (status -1)."""
CASES = ("smp-4000", "ssa-2000", "bomb-20", "bomb-30")


def _containers(n: int, image: str) -> list[dict[str, Any]]:
    return [{"name": f"c{i}", "image": image} for i in range(n)]


def _bomb(n: int) -> bytes:
    ops: list[dict[str, object]] = [{"op": "add", "path": "/spec/x", "value": ["a" * 40]}]
    ops += [{"op": "copy", "from": "/spec/x", "path": "/spec/x/-"} for _ in range(n)]
    return json.dumps(ops).encode()


async def _case(name: str) -> tuple[float, int]:
    from tests.http.server_support import serving

    pods = "/api/v1/namespaces/default/pods"
    async with serving() as s:
        if name == "smp-4000":
            pod = {"metadata": {"name": "big"}, "spec": {"containers": _containers(4000, "a")}}
            code, _ = await s.call("POST", pods, pod)
            assert code == 201, code
            body = json.dumps({"spec": {"containers": _containers(4000, "b")}}).encode()
            headers = {"Content-Type": "application/strategic-merge-patch+json"}
            started = time.perf_counter()
            code, _ = await s.call("PATCH", f"{pods}/big", raw=body, headers=headers)
            return time.perf_counter() - started, code
        if name == "ssa-2000":
            headers = {"Content-Type": "application/apply-patch+yaml"}

            def applied(image: str) -> bytes:
                obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"}}
                obj["spec"] = {"containers": _containers(2000, image)}
                return json.dumps(obj).encode()

            code, _ = await s.call("PATCH", f"{pods}/big?fieldManager=one", raw=applied("a"), headers=headers)
            assert code == 201, code
            started = time.perf_counter()
            code, _ = await s.call(
                "PATCH", f"{pods}/big?fieldManager=two&force=true", raw=applied("b"), headers=headers
            )
            return time.perf_counter() - started, code
        n = int(name.split("-")[1])
        headers = {"Content-Type": "application/json-patch+json"}
        started = time.perf_counter()
        code, _ = await s.call("PATCH", f"{pods}/p0", raw=_bomb(n), headers=headers)
        return time.perf_counter() - started, code


def _once(name: str) -> None:
    seconds, code = asyncio.run(_case(name))
    print(json.dumps({"seconds": seconds, "code": code}))


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _in(tree: Path, name: str, timeout: float) -> tuple[float, int]:
    """(seconds, status) of one run; status -1 and the elapsed time when the run died (out of
    memory under the address-space limit) or passed ``timeout``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    started = time.perf_counter()
    try:
        out = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--once", name],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
            preexec_fn=_limit_memory,
        )
    except subprocess.TimeoutExpired:
        return time.perf_counter() - started, -1
    if out.returncode != 0:
        print(f"{name} in {tree} failed: {out.stderr[-300:]}", file=sys.stderr)
        return time.perf_counter() - started, -1
    row = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"{name} {tree}: {row}", file=sys.stderr)
    return float(row["seconds"]), int(row["code"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tree", action="append", type=Path, help="a source tree to measure (repeatable)")
    parser.add_argument("--case", action="append", choices=CASES, help="only these cases (repeatable)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per run before it counts as -1")
    parser.add_argument("--once", choices=CASES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.once:
        _once(args.once)
        return
    trees = [t.resolve() for t in (args.tree or [ROOT])]
    cases = args.case or list(CASES)
    runs: dict[str, dict[str, list[tuple[float, int]]]] = {str(t): {c: [] for c in cases} for t in trees}
    for _ in range(args.repeat):
        for case in cases:
            for tree in trees:  # alternated: each case on every tree before the next repeat
                runs[str(tree)][case].append(_in(tree, case, args.timeout))
    report = {
        tree: {
            case: {
                "median_s": round(statistics.median(s for s, _ in rows), 3),
                "runs_s": [round(s, 3) for s, _ in rows],
                "codes": sorted({c for _, c in rows}),
            }
            for case, rows in by_case.items()
        }
        for tree, by_case in runs.items()
    }
    print(json.dumps({"repeat": args.repeat, "results": report}, indent=2))


if __name__ == "__main__":
    main()
