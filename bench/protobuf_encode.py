"""What answering in protobuf costs per pod next to JSON: the JSON ``PodList`` the verbs
write, then (protobuf only) that JSON decoded and re-encoded by ``negotiate.render``. Rounds
alternate JSON and protobuf; the medians are printed. Not a test: prints the figures.

    PYTHONPATH=. python bench/protobuf_encode.py [N] [ROUNDS]

Measured 2026-12-06 on the 2 vCPU guest shared with other runs, 2,000 running pods, median of 7
alternated rounds: JSON 12.4 ms (6.2 µs and 1,086 B a pod), protobuf 126.8 ms (63 µs and 407 B a
pod: the JSON, its decoding and the pure-Python protobuf writer).
"""

from __future__ import annotations

import statistics
import sys
import time

from bench.http_list import populate
from emulator.base.http.calls import Call
from emulator.base.http.negotiate import JSON, PROTOBUF, render
from emulator.base.http.routing import Target, route
from emulator.base.http.server import HttpApi, HttpSettings


def main(n: int, rounds: int) -> None:
    http = HttpApi(populate(n), HttpSettings(port=0))
    target = route("/api/v1/pods")
    assert isinstance(target, Target)
    call = Call(method="GET", target=target, query={}, body=b"", content_type="", agent="bench")
    render(http.verbs.handle(call).body, PROTOBUF)  # loads the tables once
    times: dict[str, list[float]] = {JSON: [], PROTOBUF: []}
    sizes: dict[str, int] = {}
    for _ in range(rounds):
        for media in (JSON, PROTOBUF):
            t0 = time.perf_counter()
            body, _ = render(http.verbs.handle(call).body, media)
            times[media].append(time.perf_counter() - t0)
            sizes[media] = len(body)
    for media, ts in times.items():
        med = statistics.median(ts)
        print(f"{media:40} {med * 1e3:8.1f} ms  {med / n * 1e6:6.1f} µs/pod  {sizes[media] / n:6.0f} B/pod")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000, int(sys.argv[2]) if len(sys.argv) > 2 else 7)
