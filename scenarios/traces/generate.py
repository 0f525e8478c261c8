"""Generate the sample traces of this folder from published statistics (no real rows).

The real Alibaba ``cluster-trace-gpu-v2023`` rows may not be redistributed, so the samples
here are drawn, with a seeded ``random.Random``, from the openb trace's published summary
statistics (``shared/reference/workloads-and-sweeps.md`` §A.5: quantiles of CPU, memory,
lifetime and inter-arrival time; the num_gpu, GPU-sharing and QoS mixes; node shapes by GPU
model). The same seed writes the same bytes. Run from the repository root:

    python scenarios/traces/generate.py          # rewrites the three CSV files

To replay the real trace instead, download ``openb_pod_list_default.csv`` and
``openb_node_list_all_node.csv`` from
https://github.com/alibaba/clusterdata/tree/master/cluster-trace-gpu-v2023/csv
(research or study use; cite the FGD paper, USENIX ATC'23) and point a ``replay`` step
(``format: alibaba-gpu-2023``) and a ``nodes`` entry (``fromFile``) at them.
"""

from __future__ import annotations

import csv
import itertools
import math
import random
from pathlib import Path
from typing import TypeVar

from emulator.app.scenario.workload_traces import ALIBABA_NODE_COLUMNS, ALIBABA_POD_COLUMNS, CSV_OPTIONAL, CSV_REQUIRED

T = TypeVar("T")

HERE = Path(__file__).resolve().parent
SEED = 13
PODS = 120
NODES = 10
JOBS = 40

# Published quantiles (p0 is an assumed floor, p100 the published p99 or max), piecewise
# log-linear between them.
CPU_MILLI_Q = [(0.0, 1000), (0.10, 3152), (0.25, 4000), (0.50, 11300), (0.75, 12000), (0.90, 16400), (1.0, 32000)]
MEMORY_MIB_Q = [(0.0, 1024), (0.10, 5600), (0.50, 41560), (0.90, 58368), (1.0, 125952)]
LIFETIME_S_Q = [(0.0, 10), (0.10, 79), (0.25, 166), (0.50, 539), (0.75, 1947), (0.90, 6175), (1.0, 67500)]
INTERARRIVAL_S_Q = [(0.0, 1), (0.10, 6), (0.50, 160), (0.90, 936), (1.0, 2977)]
NUM_GPU: list[tuple[int, float]] = [(0, 1088), (1, 6989), (2, 16), (4, 15), (8, 44)]
GPU_MILLI_SHARED: list[tuple[int, float]] = [(810, 1078), (470, 750), (320, 328), (650, 253), (230, 300), (500, 369)]
SHARED_FRACTION = 3078 / 6989
QOS: list[tuple[str, float]] = [("LS", 4647), ("BE", 3398), ("Burstable", 100), ("Guaranteed", 7)]
# (model, gpus, cpu cores, memory GiB, weight): the top node shapes by model.
NODE_SHAPES = [("G2", 8, 96, 384, 549), ("T4", 2, 96, 512, 387), ("", 0, 104, 512, 310), ("P100", 2, 32, 384, 131)]
GPU_SPECS: list[tuple[str, float]] = [("", 0.67), ("T4", 0.18), ("G2", 0.05), ("P100", 0.06), ("V100M16|V100M32", 0.04)]


def quantile(table: list[tuple[float, float]], u: float) -> float:
    """The inverse CDF through ``table``'s (probability, value) points, log-interpolated."""
    for (p0, v0), (p1, v1) in itertools.pairwise(table):
        if u <= p1:
            f = (u - p0) / (p1 - p0) if p1 > p0 else 0.0
            return math.exp(math.log(v0) + f * (math.log(v1) - math.log(v0)))
    return table[-1][1]


def pick(rng: random.Random, weighted: list[tuple[T, float]]) -> T:
    return rng.choices([k for k, _ in weighted], [w for _, w in weighted])[0]


def alibaba_pods(rng: random.Random) -> list[list[object]]:
    rows: list[list[object]] = []
    t = 10_000_000.0  # the openb trace's times are seconds from its own origin
    for i in range(PODS):
        t += round(quantile(INTERARRIVAL_S_Q, rng.random()))
        num_gpu = pick(rng, NUM_GPU)
        gpu_milli = 1000 if num_gpu else 0
        if num_gpu == 1 and rng.random() < SHARED_FRACTION:
            gpu_milli = pick(rng, GPU_MILLI_SHARED)
        spec = pick(rng, GPU_SPECS) if num_gpu else ""
        queued = round(quantile([(0.0, 1), (0.5, 2), (0.9, 106), (1.0, 908)], rng.random()))
        scheduled = t + queued
        deleted = scheduled + round(quantile(LIFETIME_S_Q, rng.random()))
        rows.append(
            [
                f"openb-pod-{i:04d}",
                int(round(quantile(CPU_MILLI_Q, rng.random()), -2)),
                round(quantile(MEMORY_MIB_Q, rng.random())),
                num_gpu,
                gpu_milli,
                spec,
                pick(rng, QOS),
                "Running",
                int(t),
                int(deleted),
                int(scheduled),
            ]
        )
    return rows


def alibaba_nodes(rng: random.Random) -> list[list[object]]:
    rows: list[list[object]] = []
    for i in range(NODES):
        model, gpus, cores, gib, _ = rng.choices(NODE_SHAPES, [s[4] for s in NODE_SHAPES])[0]
        rows.append([f"openb-node-{i:04d}", cores * 1000, gib * 1024, gpus, model])
    return rows


def jobs(rng: random.Random) -> list[list[object]]:
    rows: list[list[object]] = []
    t = 0.0
    for i in range(JOBS):
        t += rng.expovariate(1 / 20)
        gpu = rng.choice([0, 0, 0, 1, 2])
        rows.append(
            [
                f"{t:.1f}",
                f"{rng.randint(30, 600)}s",
                f"{rng.choice([250, 500, 1000, 2000])}m",
                f"{rng.choice([256, 512, 1024, 4096])}Mi",
                gpu,
                rng.choice(["", "high", "100"]),
                f"job-{i:03d}",
                "",
                f"team={rng.choice(['a', 'b'])};kind={'gpu' if gpu else 'cpu'}",
            ]
        )
    return rows


def write(out: Path, name: str, header: list[str], rows: list[list[object]]) -> None:
    with (out / name).open("w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(header)
        out.writerows(rows)


def main(out: Path = HERE) -> None:
    """Write the three samples into ``out`` (this folder by default)."""
    rng = random.Random(SEED)
    write(
        out,
        "alibaba-gpu-2023-pods.csv",
        list(ALIBABA_POD_COLUMNS),
        alibaba_pods(rng),
    )
    write(out, "alibaba-gpu-2023-nodes.csv", list(ALIBABA_NODE_COLUMNS), alibaba_nodes(rng))
    write(
        out,
        "jobs.csv",
        [*CSV_REQUIRED, *CSV_OPTIONAL],
        jobs(rng),
    )


if __name__ == "__main__":
    main()
