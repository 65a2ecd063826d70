"""Sweep benchmarks: speed-up of 2 local workers over 1, and the cost per run
of the Dask path against the local process pool.

    python benches/sweep_bench.py            # the numbers in BENCHMARKS.md
    python benches/sweep_bench.py --quick    # a smoke test of this script

1. Speed-up: 8 runs of a few seconds each (the example dumbbell with 30
   flows, 4500 s simulated, 4 buffer sizes x 2 seeds) with ``workers=1`` and
   ``workers=2``; wall time of the whole ``sweep()`` call (pool start, runs,
   writing, manifest), best of ``--repeat`` interleaved samples.
2. Overhead: many tiny runs (the test suite's 2-flow scenario, 0.5 s
   simulated, a few ms each) in this process (``workers=0``), on the local
   pool of 2 processes, and on a Dask ``LocalCluster`` of 2 worker processes
   with one thread each (started and warmed before timing); best of 2.
   Reported per run.

Each measurement writes a fresh sweep folder under a temporary directory.
Needs ``dask[distributed]`` for the Dask part.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import satqm
from satqm.sweep import sweep

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
DROPTAIL = ROOT / "scenarios" / "examples" / "dumbbell-droptail.toml"

TINY = {
    "name": "tiny",
    "simulation": {"duration": "0.5 s", "seed": 1, "sample_interval": "100 ms"},
    "topology": {
        "kind": "dumbbell",
        "pairs": 2,
        "access": {"rate": "100 Mbps", "delay": "5 ms", "buffer": 1000},
        "bottleneck": {"rate": "10 Mbps", "delay": "50 ms", "buffer": 20},
    },
    "traffic": [{"kind": "bulk", "pairs": "all"}],
}


def _timed(tmp: Path, name: str, **kw) -> float:
    out = tmp / name
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    res = sweep(out=out, progress=False, **kw)
    wall = time.perf_counter() - t0
    assert res.ok, res.failures
    return wall


def speedup(tmp: Path, quick: bool, repeat: int) -> dict[str, float]:
    base = tomllib.loads(DROPTAIL.read_text())
    base["topology"]["pairs"] = 30
    base["simulation"]["duration"] = "150 s" if quick else "4500 s"
    base["simulation"]["trace_cwnd"] = []
    kw = dict(
        base=base,
        grid={"topology.bottleneck.buffer": [200, 400, 800, 1600]},
        seeds=[1, 2],
    )
    # Interleaved, best of `repeat`: on a shared machine, a burst of someone
    # else's work then spoils one sample of each rather than all of one kind.
    times: dict[str, list[float]] = {"serial": [], "workers1": [], "workers2": []}
    for i in range(repeat):
        times["workers1"].append(_timed(tmp, f"w1-{i}", workers=1, **kw))
        times["workers2"].append(_timed(tmp, f"w2-{i}", workers=2, **kw))
        times["serial"].append(_timed(tmp, f"w0-{i}", workers=0, **kw))
    best = {k: min(v) for k, v in times.items()}
    best["speedup"] = best["workers1"] / best["workers2"]
    return best


def overhead(tmp: Path, n: int) -> dict[str, float]:
    seeds = list(range(1, n + 1))
    kw = dict(base=TINY, grid={"topology.bottleneck.buffer": [20]}, seeds=seeds)
    out = {"n": float(n)}
    out["serial"] = min(_timed(tmp, f"o-serial-{i}", workers=0, **kw) for i in range(2))
    out["local"] = min(_timed(tmp, f"o-local-{i}", workers=2, **kw) for i in range(2))
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        print("dask[distributed] not installed: no Dask numbers", file=sys.stderr)
        return out
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with cluster, Client(cluster) as client:
        # Warm the workers (import satqm, pandas, pyarrow) before timing.
        _timed(tmp, "o-warm", client=client, base=TINY, seeds=[1, 2])
        out["dask"] = min(_timed(tmp, f"o-dask-{i}", client=client, **kw) for i in range(2))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short runs, few of them")
    ap.add_argument("--repeat", type=int, default=3, help="best of N for the speed-up")
    ap.add_argument("--tiny-runs", type=int, default=400, help="runs for the overhead part")
    ap.add_argument(
        "--part", choices=("all", "speedup", "overhead"), default="all", help="what to measure"
    )
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="satqm-sweep-bench-"))
    try:
        print(
            f"satqm {satqm.__version__}, Python {platform.python_version()}, "
            f"{os.cpu_count()} CPUs, {platform.platform()}"
        )
        if args.part in ("all", "speedup"):
            s = speedup(tmp, args.quick, 1 if args.quick else args.repeat)
            print("\n8 runs of the dumbbell, 30 flows, "
                  f"{'150' if args.quick else '4500'} s simulated each:")  # fmt: skip
            print("| executor | wall s | per run s | speed-up |")
            print("|---|---:|---:|---:|")
            print(f"| in this process (workers=0) | {s['serial']:.2f} | {s['serial'] / 8:.2f} | |")
            print(
                f"| local pool, 1 worker | {s['workers1']:.2f} | {s['workers1'] / 8:.2f} | 1.00 |"
            )
            print(
                f"| local pool, 2 workers | {s['workers2']:.2f} | {s['workers2'] / 8:.2f} "
                f"| {s['speedup']:.2f} |"
            )
        if args.part in ("all", "overhead"):
            n = 40 if args.quick else args.tiny_runs
            o = overhead(tmp, n)
            print(f"\n{n} tiny runs (2 flows, 0.5 s simulated):")
            print("| executor | wall s | per run ms |")
            print("|---|---:|---:|")
            names = {
                "serial": "in this process (workers=0)",
                "local": "local pool, 2 workers",
                "dask": "Dask LocalCluster, 2 workers",
            }
            for k, label in names.items():
                if k in o:
                    print(f"| {label} | {o[k]:.2f} | {1e3 * o[k] / n:.1f} |")
            if "dask" in o:
                d = 1e3 * (o["dask"] - o["local"]) / n
                print(f"\nDask minus local pool: {d:+.1f} ms per run")
        print(f"\nload average at the end: {os.getloadavg()[0]:.2f} (1 min)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
