"""The memory estimate against the measured peak at the scale bench's points.

    PYTHONPATH=python python benches/scale_memory.py                    # every point
    PYTHONPATH=python python benches/scale_memory.py --points 10:10,1000:100
    PYTHONPATH=python python benches/scale_memory.py --no-python        # the core only

A point is ``N:RATE`` (N bulk SACK flows, a bottleneck of RATE Mbit/s), run for
the scale bench's own duration (``benches/scale.rs``: 1,000 s at 10 Mbit/s,
100 s at 100 Mbit/s, 10 s from 1 Gbit/s up). For each point, in its own child
process:

- the core: the scale bench's case (``--case N RATE``), whose peak resident
  memory (VmHWM) it reports itself, against the estimate for a Rust program;
- Python: ``satqm run FILE --out DIR --quiet`` on the scenario the bench prints
  (``--scenario N RATE``): the run, its results as DataFrames, the Parquet
  files and the plot, whose peak is the child's ``ru_maxrss`` (``wait4``),
  against the estimate for Python (``satqm._core.estimate_memory``).

Prints a Markdown table for docs/reliability.md. Peak memory does not depend
on the machine's load; the whole grid takes a few CPU-minutes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import satqm._core as core  # noqa: E402
from scale_ns3 import scale_bench  # noqa: E402

FLOWS = [1, 10, 100, 1_000, 10_000, 100_000]
RATES_MBPS = [10, 100, 1_000, 10_000]


def peak_kb(cmd: list[str]) -> tuple[int, str]:
    """Run ``cmd``; the child's peak resident memory (KiB) and its stdout."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = status
        if status != 0:
            err.seek(0)
            raise RuntimeError(f"{' '.join(cmd)} failed ({status}): {err.read().decode()}")
        out.seek(0)
        return ru.ru_maxrss, out.read().decode()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", help="N:RATE,... (default: the whole grid)")
    ap.add_argument("--no-python", action="store_true", help="measure the core only")
    args = ap.parse_args()
    if args.points:
        points = [tuple(int(x) for x in p.split(":")) for p in args.points.split(",")]
    else:
        points = [(n, r) for r in RATES_MBPS for n in FLOWS]
    bench = str(scale_bench())
    print(
        "| flows | bottleneck | core: estimate MB | core: peak MB | ratio "
        "| Python: estimate MB | Python: peak MB | ratio |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="satqm-scale-memory-") as tmp:
        for n, rate in points:
            text = subprocess.run(
                [bench, "--scenario", str(n), str(rate)], capture_output=True, text=True, check=True
            ).stdout
            est_rust = core.estimate_memory(text, host="rust")["total"] / 1e6
            _, out = peak_kb([bench, "--case", str(n), str(rate)])
            rust_mb = float(out.split()[4]) / 1024
            ratio = est_rust / rust_mb
            row = f"| {n:,} | {rate:,} Mbit/s | {est_rust:.1f} | {rust_mb:.1f} | {ratio:.2f} "
            if args.no_python:
                print(row + "| | | |", flush=True)
                continue
            path = Path(tmp) / f"scale-{n}-{rate}.toml"
            path.write_text(text)
            est_py = core.estimate_memory(text)["total"] / 1e6
            kb, _ = peak_kb(
                [
                    sys.executable,
                    "-m",
                    "satqm.cli",
                    "run",
                    str(path),
                    "--out",
                    str(Path(tmp) / "out"),
                    "--quiet",
                ]
            )
            py_mb = kb / 1024
            print(row + f"| {est_py:.1f} | {py_mb:.1f} | {est_py / py_mb:.2f} |", flush=True)


if __name__ == "__main__":
    main()
