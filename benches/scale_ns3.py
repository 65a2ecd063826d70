"""ns-3 at the scale bench's points: the cost per bottleneck packet of satqm and
of ns-3 on the same dumbbell, measured side by side.

    PYTHONPATH=python python benches/scale_ns3.py                 # the points in BENCHMARKS.md
    PYTHONPATH=python python benches/scale_ns3.py --points 10:10:60,1000:100:10
    PYTHONPATH=python python benches/scale_ns3.py --list          # what would run

A point is ``N:RATE:SECONDS``: N bulk SACK flows, a bottleneck of RATE Mbit/s,
SECONDS of simulated time in both simulators. satqm runs the scale bench's own
case (``benches/scale.rs``, ``--case N RATE SECONDS``), the scenario that
``--scenario N RATE SECONDS`` prints; this script translates that scenario into
the parameters of the validation's ns-3 program
(``satqm/validation/ns3/dumbbell.cc``) through the validation's own
translation (``satqm.validation.scenarios.ns3_params``), so the TCP settings
are the ones ``docs/validation.md`` matches. What the translation adds:

- starts: ``uniform = ["0 s", "1 s"]`` becomes ns-3's ``startSpread`` 1 s:
  the same distribution, drawn by each simulator's own generator;
- the access buffer goes to every ns-3 device queue but the bottleneck's,
  including the bottleneck's reverse (ACK) direction, where satqm's is the
  bottleneck buffer; acknowledgements never fill either;
- ns-3 samples its queue and per-flow counters only at the start and the
  end (its program otherwise records every flow every sample), while satqm
  keeps the scale bench's 100 ms time series: the comparison leaves ns-3 no
  work that satqm does not also do.

Each side runs in its own child process; its CPU time is the child's user +
system time (``wait4``), building included (ns-3: creating the nodes and
global routing; satqm: building the scenario). satqm runs ``--repeat`` times
(median); ns-3 once, with a limit of ``--limit`` CPU-seconds (``RLIMIT_CPU``)
and 1.5 times that in wall time (``--wall-limit``): a point beyond either is
"over 10 min".

Prints a Markdown table; ``--jsonl FILE`` keeps every measurement. Needs ns-3
(``pip install 'satqm[ns3]'``) and cargo.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from satqm.validation import scenarios as S

ROOT = Path(__file__).resolve().parents[1]

#: (flows, Mbit/s, simulated s): the points in BENCHMARKS.md. Simulated time is
#: chosen so that ns-3 moves up to a few hundred thousand bottleneck packets in
#: a few minutes at most (ns-3's cost per packet grows with the flows).
POINTS: list[tuple[int, int, int]] = [
    *((n, 10, 300) for n in (1, 10, 100, 1_000)),
    *((n, 100, 30) for n in (1, 10, 100)),
    (1_000, 100, 10),
    (10, 1_000, 10),
    (1_000, 1_000, 2),
    (10, 10_000, 2),
    (10_000, 10, 300),
    (10_000, 100, 30),
]

# Keys of the scale bench's scenario, each translated below or satqm-only.
_KEYS = {
    "name": None,
    "simulation": {"duration", "seed", "sample_interval", "max_memory"},
    "topology": {"kind", "pairs", "access", "bottleneck"},
    "tcp": {"recovery", "mss", "initial_window", "delayed_ack", "window_scaling"},
    "traffic": {"kind", "pairs", "start"},
}
_LINK_KEYS = {"rate", "delay", "buffer"}
_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9}


def _quantity(text: Any, key: str, units: tuple[str, ...]) -> float:
    """``"2.5 ms"`` -> 0.0025, ``"100 Mbps"`` -> 1e8 (units among ``units``)."""
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-z]+)\s*", str(text))
    if not m or m.group(2).lower() not in units:
        raise ValueError(f"{key}: expected a number and one of {', '.join(units)}, got {text!r}")
    return float(m.group(1)) * _UNITS[m.group(2).lower()]


def _check_keys(table: dict, allowed: set[str], where: str) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise ValueError(f"{where}.{extra[0]}: no ns-3 translation for this key")


def ns3_params(toml_text: str) -> dict[str, Any]:
    """The ns-3 program's parameters for a scale-bench scenario (TOML text)."""
    doc = tomllib.loads(toml_text)
    _check_keys(doc, set(_KEYS), "scenario")
    for sec in ("simulation", "topology", "tcp"):
        _check_keys(doc[sec], _KEYS[sec], sec)
    sim, topo, tcp = doc["simulation"], doc["topology"], doc["tcp"]
    if topo["kind"] != "dumbbell":
        raise ValueError(f"topology.kind: expected dumbbell, got {topo['kind']!r}")
    acc, btl = topo["access"], topo["bottleneck"]
    _check_keys(acc, _LINK_KEYS, "topology.access")
    _check_keys(btl, _LINK_KEYS, "topology.bottleneck")
    traffic = doc["traffic"]
    if len(traffic) != 1:
        raise ValueError("traffic: expected one entry")
    tr = traffic[0]
    _check_keys(tr, _KEYS["traffic"], "traffic[0]")
    if tr["kind"] != "bulk" or tr["pairs"] != "all":
        raise ValueError("traffic[0]: expected bulk flows on all pairs")
    lo, hi = (_quantity(x, "traffic[0].start", ("s", "ms")) for x in tr["start"]["uniform"])
    if lo != 0.0:
        raise ValueError("traffic[0].start: ns-3 spreads starts from 0")

    n = int(topo["pairs"])
    dur = _quantity(sim["duration"], "simulation.duration", ("s", "ms"))
    delay = _quantity(acc["delay"], "topology.access.delay", ("s", "ms", "us"))
    desc = S.make(
        "scale",
        flows=n,
        recovery=tcp["recovery"],
        duration_s=dur,
        warmup_s=0.0,
        buffer_packets=int(btl["buffer"]),
        access_delays_s=[delay] * n,
        seed=int(sim["seed"]),
    )
    desc["bottleneck"]["rate_bps"] = _quantity(
        btl["rate"], "topology.bottleneck.rate", ("mbps", "gbps")
    )
    desc["bottleneck"]["delay_s"] = _quantity(
        btl["delay"], "topology.bottleneck.delay", ("s", "ms")
    )
    desc["access"]["rate_bps"] = _quantity(acc["rate"], "topology.access.rate", ("mbps", "gbps"))
    desc["access"]["rx_delay_s"] = delay  # receiver_access defaults to access
    desc["tcp"].update(
        mss=int(tcp["mss"]),
        initial_window=int(tcp["initial_window"]),
        delayed_ack=bool(tcp["delayed_ack"]),
        window_scaling=bool(tcp["window_scaling"]),
    )
    # ns-3 samples only at the start and the end (see the module docstring)
    desc["sample_interval_s"] = dur
    p = S.ns3_params(desc)
    del p["startTimes"]
    p.update(startSpread=hi, accessDelays=[delay], accessBufferPackets=int(acc["buffer"]))
    return p


# ----- measuring ----------------------------------------------------------------


def scale_bench() -> Path:
    """Build the scale bench (release) and return its executable."""
    out = subprocess.run(
        [
            "cargo",
            "bench",
            "-p",
            "satqm-core",
            "--bench",
            "scale",
            "--no-run",
            "--message-format=json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "scale":
            if msg.get("executable"):
                return Path(msg["executable"])
    raise RuntimeError("cargo did not report the scale bench's executable")


def run_child(
    cmd: list[str], cpu_limit: float | None = None, wall_limit: float | None = None
) -> dict:
    """Run ``cmd``; its exit status, CPU (user + system) and wall seconds, stdout.
    ``cpu_limit``: RLIMIT_CPU of the child; ``wall_limit``: killed after that."""

    def limit() -> None:
        if cpu_limit:
            soft = int(cpu_limit)
            resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))

    with tempfile.TemporaryFile() as out:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, preexec_fn=limit)
        timer = threading.Timer(wall_limit, proc.kill) if wall_limit else None
        if timer:
            timer.start()
        err = proc.stderr.read() if proc.stderr else b""
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - t0
        if timer:
            timer.cancel()
        if proc.stderr:
            proc.stderr.close()
        out.seek(0)
        return {
            "rc": proc.returncode,
            "cpu_s": ru.ru_utime + ru.ru_stime,
            "wall_s": wall,
            "max_rss_kb": ru.ru_maxrss,
            "stdout": out.read().decode(),
            "stderr": err.decode(errors="replace")[-2000:],
        }


def scenario(bench: Path, n: int, rate: int, secs: int) -> str:
    """The scale bench's scenario for a point, as TOML."""
    return subprocess.run(
        [str(bench), "--scenario", str(n), str(rate), str(secs)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def measure_satqm(bench: Path, n: int, rate: int, secs: int, repeat: int) -> dict:
    """The scale bench's case, ``repeat`` times; the run with the median CPU."""
    runs = []
    for _ in range(repeat):
        r = run_child([str(bench), "--case", str(n), str(rate), str(secs)])
        if r["rc"] != 0:
            raise RuntimeError(f"satqm case {n} x {rate} Mbit/s failed: {r['stderr']}")
        v = [float(x) for x in r["stdout"].split()]
        runs.append(
            {"cpu_s": r["cpu_s"], "wall_s": r["wall_s"], "packets": int(v[2]), "goodput_bps": v[7]}
        )
    runs.sort(key=lambda x: x["cpu_s"])
    mid = dict(runs[len(runs) // 2])
    mid["cpu_s_all"] = [x["cpu_s"] for x in runs]
    return mid


def measure_ns3(binary: Path, params: dict, limit: float, wall_limit: float | None = None) -> dict:
    from satqm.validation.ns3.run import command_line

    with tempfile.TemporaryDirectory(prefix="satqm-scale-ns3-") as tmp:
        path = Path(tmp) / "result.json"
        wall_limit = wall_limit or 1.5 * limit
        r = run_child([str(binary)] + command_line(params, path), limit, wall_limit)
        base = {"cpu_s": r["cpu_s"], "wall_s": r["wall_s"], "max_rss_kb": r["max_rss_kb"]}
        if r["rc"] != 0 or not path.exists():
            over = r["cpu_s"] >= 0.99 * limit or r["wall_s"] >= wall_limit
            if not over:
                raise RuntimeError(f"ns-3 failed (exit {r['rc']}): {r['stderr']}")
            return {**base, "over": True}
        res = json.loads(path.read_text())
    return {
        **base,
        "over": False,
        "packets": int(res["bottleneck"]["tx_packets"]),
        "goodput_bps": float(res["aggregate"]["goodput_bps"]),
        "setup_cpu_s": float(res["setup_cpu_s"]),
        "run_cpu_s": float(res["run_cpu_s"]),
    }


# ----- the table ------------------------------------------------------------------


def _rate(mbps: int) -> str:
    return f"{mbps // 1000} Gbit/s" if mbps >= 1000 else f"{mbps} Mbit/s"


HEADER = (
    "| flows | bottleneck | simulated s | packets satqm | packets ns-3 "
    "| CPU s satqm | CPU s ns-3 (of which setup) | packets / CPU s satqm "
    "| packets / CPU s ns-3 | ns-3 / satqm | goodput Mbit/s satqm / ns-3 |\n"
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def row(point: dict) -> str:
    n, rate, secs = point["flows"], point["rate_mbps"], point["seconds"]
    s, t = point["satqm"], point["ns3"]
    s_pps = s["packets"] / s["cpu_s"]
    head = f"| {n:,} | {_rate(rate)} | {secs} | {s['packets']:,} "
    if t["over"]:
        over = f"over {point['limit_s'] / 60:g} min"
        gp = s["goodput_bps"] / 1e6
        return head + f"| {over} | {s['cpu_s']:.3f} | {over} | {s_pps:,.0f} | | | {gp:.2f} / – |"
    t_pps = t["packets"] / t["cpu_s"]
    diff = (s["goodput_bps"] - t["goodput_bps"]) / t["goodput_bps"] * 100
    return (
        head + f"| {t['packets']:,} | {s['cpu_s']:.3f} | {t['cpu_s']:.1f} ({t['setup_cpu_s']:.1f}) "
        f"| {s_pps:,.0f} | {t_pps:,.0f} | {s_pps / t_pps:.0f} "
        f"| {s['goodput_bps'] / 1e6:.2f} / {t['goodput_bps'] / 1e6:.2f} ({diff:+.1f} %) |"
    )


def parse_points(text: str) -> list[tuple[int, int, int]]:
    out = []
    for item in text.split(","):
        parts = item.strip().replace("_", "").split(":")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise ValueError(f"--points: {item!r} is not FLOWS:MBITPS:SECONDS (positive integers)")
        out.append((int(parts[0]), int(parts[1]), int(parts[2])))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=parse_points, default=POINTS, help="FLOWS:MBITPS:SECONDS,...")
    ap.add_argument("--limit", type=float, default=600.0, help="ns-3's CPU-second limit per point")
    ap.add_argument(
        "--wall-limit",
        type=float,
        help="ns-3's wall-second limit per point (default 1.5 x --limit)",
    )
    ap.add_argument("--repeat", type=int, default=3, help="satqm runs per point (median)")
    ap.add_argument("--jsonl", type=Path, help="append every measurement to this file")
    ap.add_argument("--ns3-binary", type=Path, help="the ns-3 dumbbell program (default: build it)")
    ap.add_argument("--list", action="store_true", help="print the points and the ns-3 parameters")
    args = ap.parse_args(argv)

    bench = scale_bench()
    if args.list:
        for n, rate, secs in args.points:
            toml = scenario(bench, n, rate, secs)
            print(f"{n} flows, {_rate(rate)}, {secs} s: {json.dumps(ns3_params(toml))}")
        return 0
    from satqm.validation.ns3 import build

    binary = args.ns3_binary or build.ensure_binary()
    print(HEADER, flush=True)
    for n, rate, secs in args.points:
        toml = scenario(bench, n, rate, secs)
        params = ns3_params(toml)
        point = {
            "flows": n,
            "rate_mbps": rate,
            "seconds": secs,
            "limit_s": args.limit,
            "ns3_params": params,
        }
        point["satqm"] = measure_satqm(bench, n, rate, secs, args.repeat)
        point["ns3"] = measure_ns3(binary, params, args.limit, args.wall_limit)
        point["when"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
        point["loadavg"] = os.getloadavg()
        if args.jsonl:
            with open(args.jsonl, "a") as f:
                f.write(json.dumps(point) + "\n")
        print(row(point), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
