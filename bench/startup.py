"""How long the command line takes to start: wall time of fresh interpreters running
``import emulator.cli``, ``run --help`` and ``validate scenarios/quickstart.yaml``, the median
of N interleaved runs for each tree named (the current one by default). Not a test: prints the
figures.

    python bench/startup.py [--runs N] [TREE ...]     # e.g. a worktree of an older commit, then .

Measured 2026-12-06 on a 2 vCPU Intel Xeon guest under load (load average 2-3), median of 7,
before (14b784a, every command imported at start) and after (issue 22's lazy start), ms:
``import emulator.cli`` 759 → 119 (6.4×), ``run --help`` 748 → 146 (5.1×), ``validate`` 769 → 509
(1.5×: the rest is the scheduler it builds to check the configuration). ``python -X importtime
-c "import emulator.cli"``: 1,084 ms cumulative before, 65 ms after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "import emulator.cli": ["-c", "import emulator.cli"],
    "run --help": ["-m", "emulator", "run", "--help"],
    "validate quickstart": ["-m", "emulator", "validate", "scenarios/quickstart.yaml"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("trees", nargs="*", type=Path, default=[Path.cwd()])
    args = parser.parse_args()
    trees = [t.resolve() for t in args.trees]
    times: dict[tuple[str, Path], list[float]] = {}
    for _ in range(args.runs):
        for tree in trees:
            env = {**os.environ, "PYTHONPATH": str(tree)}
            for name, argv in COMMANDS.items():
                start = time.perf_counter()
                subprocess.run([sys.executable, *argv], cwd=tree, env=env, capture_output=True, check=True)
                times.setdefault((name, tree), []).append(time.perf_counter() - start)
    print(f"median of {args.runs}, wall ms: " + " | ".join(str(t) for t in trees))
    for name in COMMANDS:
        cells = [f"{statistics.median(times[(name, t)]) * 1000:7.0f}" for t in trees]
        print(f"{name:22s} " + " ".join(cells))


if __name__ == "__main__":
    main()
