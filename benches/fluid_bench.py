"""Speed of ``satqm.models.simulate_fluid`` by backend, as a user calls it.

    python benches/fluid_bench.py            # the numbers in BENCHMARKS.md
    python benches/fluid_bench.py --quick    # a smoke test of this script

The Misra-Gong-Towsley model with gentle RED on the tests' dumbbell (N = 20
to 119 flows, C = 3750 packets/s, Tp = 200 ms), dt = 1 ms:

1. one parameter set, 20 minutes of model time (1.2 million steps),
   recorded every 10 ms (the default);
2. a batch of 100 sets, 20 minutes, recorded every second (every 10 ms
   would be 670 MB of output).

The Rust backend is timed on both (best of ``--repeat``); the Python
reference on (1) once; numpy on (1), and both references on (2), with 2
minutes of model time (they take minutes for the full 20), scaled by 10 in
the table. Wall
time and CPU time of this process (the Rust kernel runs in this process,
with the GIL released).
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from satqm.models.fluid import simulate_fluid

RED = {"aqm": "red", "min_th": 50, "max_th": 550, "max_p": 0.1, "w_q": 1e-4, "gentle": True}


def _time(fn, repeat: int) -> tuple[float, float]:
    """Best wall time and the CPU time of that run (s)."""
    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        w, c = time.perf_counter() - w0, time.process_time() - c0
        if w < best[0]:
            best = (w, c)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="samples of the Rust backend")
    ap.add_argument("--quick", action="store_true", help="tiny durations (smoke test)")
    args = ap.parse_args()
    full, short = (12.0, 1.2) if args.quick else (1200.0, 120.0)
    scale = full / short
    N1 = 60.0
    N100 = np.arange(20.0, 120.0)

    def one(backend: str, duration: float = full):
        return lambda: simulate_fluid(N1, 3750, 0.2, duration, backend=backend, **RED)

    def batch(backend: str, duration: float):
        return lambda: simulate_fluid(
            N100, 3750, 0.2, duration, backend=backend, record_interval=1.0, **RED
        )

    print(
        f"# {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {full:g} s of model time at dt = 1 ms"
    )
    print()
    print(f"Times are for {full:g} s of model time; rows marked (xN) ran a shorter")
    print("duration and are scaled by N.")
    print()
    print("| sets | backend | model time run | wall s | CPU s | wall vs Rust |")
    print("|---:|---|---:|---:|---:|---:|")
    rows = []
    w, c = _time(one("rust"), args.repeat)
    rows.append((1, "rust", full, w, c))
    w, c = _time(one("python"), 1)
    rows.append((1, "python", full, w, c))
    w, c = _time(one("numpy", short), 1)
    rows.append((1, "numpy", short, w * scale, c * scale))
    w, c = _time(batch("rust", full), args.repeat)
    rows.append((100, "rust", full, w, c))
    for b in ("python", "numpy"):
        w, c = _time(batch(b, short), 1)
        rows.append((100, b, short, w * scale, c * scale))
    base = {m: w for m, b, _, w, _ in rows if b == "rust"}
    for m, b, d, w, c in rows:
        timed = f"{d:g} s" + ("" if d == full else f" (x{scale:g})")
        print(f"| {m} | {b} | {timed} | {w:.3f} | {c:.3f} | {w / base[m]:.0f}x |")


if __name__ == "__main__":
    main()
