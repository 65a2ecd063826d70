"""Run the ns-3 dumbbell reference (``dumbbell.cc`` in this package) and return its JSON.

As a library::

    from satqm.validation.ns3 import run_ns3
    res = run_ns3({"nFlows": 3, "queueDisc": "droptail", "duration": 60})
    res["aggregate"]["goodput_bps"], res["bottleneck"]["utilization"]

``params`` uses the program's own parameter names (camelCase, see ``PARAMS``);
a few aliases are accepted (``flows``, ``queue``, ``buffer``).  Unset
parameters take the program's defaults, listed in ``docs/validation.md``.

As a command::

    python -m satqm.validation.ns3.run --flows 3 --queue droptail --duration 60 --out result.json

Every parameter has a kebab-case option (``--bottleneck-rate 10e6``) and its
camelCase twin (``--bottleneckRate 10e6``).  The binary is built on first use
(see build.py).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from satqm.validation.ns3 import build

# name -> (type, default shown in --help, help).  Types: float, int, bool, str,
# "floats" (a list of floats passed comma-separated).  Defaults live in dumbbell.cc.
PARAMS: dict[str, tuple[Any, Any, str]] = {
    "nFlows": (int, 3, "number of sender/receiver pairs"),
    "bottleneckRate": (float, 10e6, "bottleneck rate, bit/s"),
    "bottleneckDelay": (float, 0.290, "bottleneck one-way delay, s"),
    "accessRate": (float, 100e6, "access link rate, bit/s (both sides)"),
    "accessDelays": (
        "floats",
        "0.005",
        "sender-side access one-way delays, s, one per flow (last repeats)",
    ),
    "accessDelayRx": (float, 0.005, "receiver-side access one-way delay, s"),
    "bufferPackets": (int, 800, "bottleneck queue-disc limit, packets"),
    "accessBufferPackets": (int, 100000, "device queue on every other device, packets"),
    "deviceQueuePackets": (int, 1, "bottleneck NetDevice queue under the queue disc, packets"),
    "queueDisc": (str, "droptail", "droptail|red|ared|pie|codel|fq_codel|fq_pie|fq_cobalt"),
    "minTh": (float, 5, "RED min threshold, packets"),
    "maxTh": (float, 15, "RED max threshold, packets"),
    "maxP": (float, 0.02, "RED max_p (LInterm = 1/maxP)"),
    "qW": (float, 0.002, "RED queue weight"),
    "gentle": (bool, True, "RED gentle"),
    "packetMode": (bool, True, "RED counts packets (false: bytes)"),
    "wait": (bool, True, "RED wait"),
    "meanPktSize": (int, 0, "RED MeanPktSize, bytes (0: full data packet)"),
    "redUseEcn": (bool, False, "RED UseEcn: mark ECN-capable packets instead of dropping"),
    "redHardDrop": (bool, True, "RED UseHardDrop: drop in the forced region even with ECN"),
    "aredAuto": (bool, True, "ared: ns-3 ARED flag (automatic minTh/maxTh/qW)"),
    "aredAdaptMaxP": (bool, True, "ared: AdaptMaxP (when aredAuto is false)"),
    "aredFeng": (bool, False, "ared: Feng's adaptive RED instead"),
    "aredTargetDelay": (float, 0.005, "ared: TargetDelay, s"),
    "aredInterval": (float, 0.5, "ared: Interval, s"),
    "aredTop": (float, 0.5, "ared: Top"),
    "aredBottom": (float, 0.0, "ared: Bottom (0: automatic)"),
    "aredAlpha": (float, 0.01, "ared: Alpha"),
    "aredBeta": (float, 0.9, "ared: Beta"),
    "aredRtt": (float, 0.1, "ared: Rtt for automatic Bottom, s"),
    "pieTarget": (float, 0.015, "PIE QueueDelayReference, s"),
    "pieTupdate": (float, 0.015, "PIE Tupdate, s"),
    "pieMaxBurst": (float, 0.150, "PIE MaxBurstAllowance, s"),
    "pieDqRate": (bool, False, "PIE UseDequeueRateEstimator"),
    "codelTarget": (float, 0.005, "CoDel Target, s"),
    "codelInterval": (float, 0.100, "CoDel Interval, s"),
    "fqFlows": (int, 1024, "FQ-CoDel Flows"),
    "fqQuantum": (int, 0, "FQ-CoDel quantum, bytes (0: the device's MTU)"),
    "fqDropBatch": (int, 64, "FQ-CoDel DropBatchSize, packets"),
    "fqMinBytes": (int, 1500, "FQ-CoDel: each flow queue's CoDel MinBytes"),
    "fqUseEcn": (bool, True, "FQ-CoDel UseEcn: CoDel marks ECN-capable packets"),
    "tcp": (str, "NewReno", "congestion control: NewReno|Cubic|Bbr|Dctcp|... (ns3::Tcp<name>)"),
    "recovery": (str, "classic", "classic|prr"),
    "mss": (int, 1460, "segment size, payload bytes"),
    "initialCwnd": (int, 2, "initial window, segments"),
    "delAckCount": (int, 2, "1 = ACK every segment, 2 = delayed ACK"),
    "delAckTimeout": (float, 0.2, "delayed-ACK timeout, s"),
    "sack": (bool, False, "SACK"),
    "windowScaling": (bool, True, "window scaling"),
    "timestamps": (bool, False, "timestamps"),
    "minRto": (float, 1.0, "minimum RTO, s"),
    "initialRto": (float, 1.0, "initial RTO, s"),
    "clockGranularity": (float, 0.001, "RTO clock granularity, s"),
    "dataRetries": (int, 100, "retransmissions of one segment before the connection gives up"),
    "rcvBuf": (int, 16 * 1024 * 1024, "receive buffer, bytes"),
    "sndBuf": (int, 16 * 1024 * 1024, "send buffer, bytes"),
    "limitedTransmit": (bool, True, "RFC 3042 limited transmit"),
    "pacing": (bool, False, "TcpSocketState::EnablePacing (TcpBbr turns it on itself)"),
    "ecn": (bool, False, "TcpSocketBase::UseEcn On (TcpDctcp turns it on itself)"),
    "errorRate": (float, 0.0, "per-packet loss probability on the bottleneck (data direction)"),
    "duration": (float, 60.0, "simulated time, s"),
    "sampleInterval": (float, 0.1, "sampling interval, s"),
    "warmup": (float, 0.0, "also report stats from this time on, s"),
    "startSpread": (float, 0.0, "start times uniform in [0, x] s"),
    "startTimes": ("floats", "", "flow start times, s, one per flow (last repeats)"),
    "seed": (int, 1, "RNG seed"),
    "run": (int, 1, "RNG run number"),
    "cwndLog": (bool, True, "log flow 0's cwnd on every change"),
    "attrs": (str, "", "extra ns-3 defaults 'ns3::Type::Attr=value;...'"),
}

ALIASES = {"flows": "nFlows", "queue": "queueDisc", "buffer": "bufferPackets"}


def _kebab(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def _fmt(name: str, value: Any) -> str:
    kind = PARAMS[name][0]
    if kind is bool:
        if isinstance(value, str):
            v = value.strip().lower()
            if v not in ("true", "false", "1", "0", "on", "off", "yes", "no"):
                raise ValueError(f"{name}: not a boolean: {value!r}")
            value = v in ("true", "1", "on", "yes")
        return "true" if value else "false"
    if kind == "floats":
        if isinstance(value, (list, tuple)):
            vals = [float(v) for v in value]
        else:
            vals = [float(v) for v in str(value).split(",") if v.strip()]
        if not vals:
            raise ValueError(f"{name}: empty list")
        return ",".join(repr(v) for v in vals)
    if kind is int:
        if isinstance(value, float) and not value.is_integer():
            raise ValueError(f"{name}: not an integer: {value!r}")
        return str(int(value))
    if kind is float:
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"{name}: not finite: {value!r}")
        return repr(v)
    return str(value)


def command_line(params: dict, out: str | os.PathLike) -> list[str]:
    """The argument list for the binary (without the binary itself)."""
    args = []
    for key, value in params.items():
        name = ALIASES.get(key, key)
        if name not in PARAMS:
            raise ValueError(
                f"unknown ns-3 dumbbell parameter {key!r} (known: {', '.join(PARAMS)})"
            )
        if value is None:
            continue
        args.append(f"--{name}={_fmt(name, value)}")
    args.append(f"--out={os.fspath(out)}")
    return args


def run_ns3(
    params: dict,
    *,
    out: str | os.PathLike | None = None,
    timeout: float | None = None,
    binary: str | os.PathLike | None = None,
) -> dict:
    """Run one ns-3 dumbbell simulation and return the parsed JSON result.

    ``params``: program parameters by name (see ``PARAMS``); missing ones take
    the defaults.  ``out``: keep the JSON there (otherwise a temporary file is
    used and removed).  ``binary``: use this executable instead of building.
    Raises ``RuntimeError`` if the simulation fails, ``ValueError`` for bad
    parameters.
    """
    exe = Path(binary) if binary else build.ensure_binary()
    with tempfile.TemporaryDirectory(prefix="satqm-ns3-") as tmp:
        path = Path(out) if out else Path(tmp) / "result.json"
        cmd = [str(exe)] + command_line(params, path)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise RuntimeError(f"ns-3 run timed out after {timeout} s: {' '.join(cmd)}") from e
        if proc.returncode != 0:
            raise RuntimeError(
                f"ns-3 run failed (exit {proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-4000:]}"
            )
        with open(path) as f:
            result = json.load(f)
    result["command"] = cmd
    return result


def summary(res: dict) -> str:
    """A short human-readable summary of a result."""
    b = res["bottleneck"]
    lines = []
    for f in res["flows"]:
        lines.append(
            f"flow {f['flow']:3d}: goodput {f['goodput_bps'] / 1e6:8.4f} Mbit/s  "
            f"rtx {f['retransmissions']:6d}  drops {f['bottleneck_drops']:5d}  "
            f"fast-rec {f['fast_recovery_events']:4d}  rto {f['rto_events']:3d}"
        )
    a = res["aggregate"]
    jain = a["jain_index"]  # null when no flow delivered anything
    lines.append(
        f"aggregate goodput {a['goodput_bps'] / 1e6:.4f} Mbit/s  "
        f"Jain {'n/a' if jain is None else f'{jain:.4f}'}"
    )
    lines.append(
        f"bottleneck: utilization {b['utilization']:.4f} (IP bytes {b['utilization_ip']:.4f})  "
        f"tx packets {b['tx_packets']}  drops {b['drops']}  marks {b['marks']}  "
        f"error drops {b['error_model_drops']}  access drops {b['access_drops']}"
    )
    queue = (
        f"queue (qdisc, packets): mean {b['queue_mean_pkts']:.2f}  std {b['queue_std_pkts']:.2f}"
    )
    if res["params"].get("warmup", 0) > 0:
        queue += (
            f"  | after warmup: mean {b['queue_mean_pkts_after_warmup']:.2f}"
            f" std {b['queue_std_pkts_after_warmup']:.2f}"
        )
    lines.append(queue)
    lines.append(f"wall clock (Simulator::Run): {res['wall_clock_s']:.2f} s")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        description="Run the ns-3 dumbbell reference and write its JSON result.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    ap.add_argument("--flows", dest="nFlows", type=int, help="alias of --n-flows")
    ap.add_argument("--queue", dest="queueDisc", help="alias of --queue-disc")
    ap.add_argument("--buffer", dest="bufferPackets", type=int, help="alias of --buffer-packets")
    for name, (kind, default, text) in PARAMS.items():
        opts = [f"--{_kebab(name)}"]
        if name != _kebab(name):
            opts.append(f"--{name}")
        kw: dict[str, Any] = {"dest": name, "help": f"{text} (default {default})", "default": None}
        if kind is bool:
            kw["type"] = str
            kw["metavar"] = "{true,false}"
        elif kind == "floats":
            kw["type"] = str
            kw["metavar"] = "D1,D2,..."
        else:
            kw["type"] = kind
        ap.add_argument(*opts, **kw)
    ap.add_argument("--out", default="ns3-result.json", help="where to write the JSON result")
    ap.add_argument("--binary", help="use this dumbbell binary instead of building one")
    ap.add_argument("--timeout", type=float, help="give up after this many wall-clock seconds")
    ap.add_argument("--quiet", action="store_true", help="print nothing but errors")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    params = {k: v for k, v in vars(args).items() if k in PARAMS and v is not None}
    try:
        res = run_ns3(params, out=args.out, timeout=args.timeout, binary=args.binary)
    except (ValueError, RuntimeError, build.Ns3NotFound) as e:
        print(f"satqm.validation.ns3.run: {e}", file=sys.stderr)
        return 2 if isinstance(e, ValueError) else 1
    if not args.quiet:
        print(summary(res))
        print(f"result: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
