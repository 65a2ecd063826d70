"""Run one fuzz case and judge it; and a worker process that does so.

A case is scenario text (or raw bytes, read as a file would be). It must
either be refused with `satqm.ConfigError` (a key path and a rule, no Rust
type named) or run for `DURATION` simulated seconds and satisfy the
invariants of a run (`invariant_violations`).

The worker (``python tests/fuzz_check.py``) reads one JSON request per line
on stdin and answers one JSON line on stdout, so that a crash of the
native core (a signal, an abort) ends the worker and not the test session:
the parent sees the worker die and counts a crash.
"""

from __future__ import annotations

import base64
import json
import math
import re
import sys
import tempfile
import traceback
import warnings
from pathlib import Path
from typing import Any

import satqm
from satqm import _core

#: Simulated seconds of every run.
DURATION = 1.0

#: Outcomes a case may have. The first two are fine.
REFUSED, RAN = "refused", "ran"
BAD_ERROR = "bad_error"  # a ConfigError without a path/rule, or naming a Rust type
EXCEPTION = "exception"  # any other Python exception (a Rust panic included)
INVARIANT = "invariant"  # ran, and broke an invariant of a run
CRASH = "crash"  # the process died (signal, abort)
TIMEOUT = "timeout"  # the run took longer than the parent allowed
OUTCOMES = (REFUSED, RAN, BAD_ERROR, EXCEPTION, INVARIANT, CRASH, TIMEOUT)

#: Words of the core's implementation that must not reach a user.
RUST_TYPES = re.compile(r"\b(struct|enum) Raw|\b[iu](8|16|32|64|size)\b|\bf(32|64)\b|a sequence")

#: Relative slack for comparisons of sums of floats.
TOL = 1e-9


def error_problems(e: satqm.ConfigError) -> list[str]:
    """What is wrong with a refusal (nothing, for a good one)."""
    out = []
    if not isinstance(e.path, str) or not isinstance(e.rule, str) or not e.rule:
        out.append(f"ConfigError without a rule: path={e.path!r} rule={e.rule!r}")
    elif e.path and str(e) != f"{e.path}: {e.rule}":
        out.append(f"ConfigError text is not 'path: rule': {e}")
    if RUST_TYPES.search(str(e)):
        out.append(f"the message names a Rust type: {e}")
    return out


def _quantity(v: Any, dim: str, default: float) -> float:
    return default if v is None else float(_core.parse_quantity(v, dim))


def _buffer_limit(link: dict[str, Any], key: str = "buffer") -> tuple[str, float]:
    """("packets" | "bytes", limit) of a link table's buffer (default 1000
    packets; a missing reverse buffer is the forward one)."""
    b = link.get(key, link.get("buffer") if key == "reverse_buffer" else None)
    if b is None:
        return "packets", 1000
    if isinstance(b, int):
        return "packets", b
    if "packets" in b:
        return "packets", b["packets"]
    return "bytes", _quantity(b["bytes"], "bytes", math.inf)


def _bottleneck_table(res: satqm.Results) -> dict[str, Any]:
    """The scenario table of the link Results.bottleneck names."""
    topo = res.scenario.data["topology"]
    return topo["downlink"] if topo["kind"] == "ipos" else topo["bottleneck"]


def invariant_violations(res: satqm.Results) -> list[str]:
    """The invariants every run keeps (docs/reliability.md lists them)."""
    out: list[str] = []
    sc = res.scenario
    p = res.packets
    if p["created"] != p["delivered"] + p["dropped"] + p["in_flight"]:
        out.append(f"packets not conserved: {p}")
    if min(p.values()) < 0:
        out.append(f"negative packet count: {p}")
    if not math.isclose(res.duration, sc.duration, rel_tol=TOL):
        out.append(f"ran {res.duration} s, asked for {sc.duration} s")

    ts = res.timeseries
    u = ts["utilization"]
    if not (u.between(0, 1 + TOL)).all():
        out.append(f"utilization outside [0, 1]: {u[~u.between(0, 1 + TOL)].tolist()[:5]}")

    link = _bottleneck_table(res)
    bl = res.link()
    kind, limit = _buffer_limit(link)
    column = "queue_packets" if kind == "packets" else "queue_bytes"
    # the queue counts the device queue below the buffer too (at most a
    # jumbo packet's bytes each, when the limit is in bytes)
    device = int(link.get("device_queue", 0))
    limit += device if kind == "packets" else device * 65_536
    if len(bl) and bl[column].max() > limit:
        out.append(f"{res.bottleneck} queue {bl[column].max()} {kind} above its limit {limit}")

    rate = _quantity(link["rate"], "rate", math.nan)
    end = res.duration
    warmup = sc.warmup
    summary = res.summary()
    measured = summary.get("measured_s", math.nan)
    if not math.isclose(measured, max(0.0, end - warmup), rel_tol=TOL, abs_tol=1e-12):
        out.append(f"measured_s {measured} is not end - warmup = {end - warmup}")
    fl = res.flows
    for f in fl.itertuples():
        # Every byte a flow delivers crossed the bottleneck after the flow
        # started (as payload, under headers): at most rate x (end - start).
        if f.bytes_delivered * 8 > rate * max(end - f.start_s, 0) * (1 + TOL):
            out.append(
                f"flow {f.flow} delivered {f.bytes_delivered} bytes in "
                f"{end - f.start_s:.6g} s through a {rate:.6g} bit/s bottleneck"
            )
        # A window that opens at the flow's start holds only such bytes.
        if f.start_s >= warmup and f.goodput_bps > rate * (1 + TOL):
            out.append(f"flow {f.flow} goodput {f.goodput_bps} above the bottleneck's {rate}")
    total = summary.get("goodput_total_bps", math.nan)
    if measured > 0 and len(fl):
        first = float(fl["start_s"].min())
        if not total <= rate * (end - min(first, warmup)) / measured * (1 + TOL):
            out.append(f"total goodput {total} over {measured} s through {rate} bit/s")
        if first >= warmup and not total <= rate * (1 + TOL):
            out.append(f"total goodput {total} above the bottleneck's {rate}")
    return out


def judge(case: str | bytes, duration: float = DURATION, save: str | None = None) -> dict:
    """Refuse-or-run one case; the outcome and what went wrong."""
    try:
        try:
            if isinstance(case, bytes):
                with tempfile.TemporaryDirectory() as tmp:
                    path = Path(tmp) / "case.toml"
                    path.write_bytes(case)
                    sc = satqm.load(path, duration=duration)
            else:
                sc = satqm.Scenario.from_toml(case, duration=duration)
            res = satqm.run(sc)
        except satqm.ConfigError as e:
            problems = error_problems(e)
            if problems:
                return {"outcome": BAD_ERROR, "detail": "; ".join(problems)}
            return {"outcome": REFUSED, "detail": str(e)}
        problems = invariant_violations(res)
        if problems:
            return {"outcome": INVARIANT, "detail": "; ".join(problems)}
        if save is not None:
            res.save(save, plot=False)
        return {"outcome": RAN, "detail": ""}
    except BaseException as e:  # a Rust panic is a BaseException
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        tb = traceback.format_exception(type(e), e, e.__traceback__)
        return {"outcome": EXCEPTION, "detail": f"{type(e).__name__}: {e}\n{''.join(tb[-3:])}"}


def encode(case: str | bytes) -> dict:
    if isinstance(case, bytes):
        return {"bytes": base64.b64encode(case).decode()}
    return {"text": case}


def decode(msg: dict) -> str | bytes:
    return base64.b64decode(msg["bytes"]) if "bytes" in msg else msg["text"]


def main() -> None:
    warnings.simplefilter("error")  # as in the test suite
    for line in sys.stdin:
        msg = json.loads(line)
        answer = judge(decode(msg), msg.get("duration", DURATION), msg.get("save"))
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
