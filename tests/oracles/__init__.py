"""Independent Python reference implementations ("oracles") of satqm's AQMs.

Each module implements one algorithm of ``docs/aqm.md`` from the papers /
RFCs and that spec, without looking at the Rust code, so that a recorded
trace replayed through ``satqm._core.aqm_replay`` can be checked event by
event.

``fq_codel.py`` is a queue discipline rather than an AQM decision rule: it
holds the packets itself and is replayed through ``satqm._core.qdisc_replay``
(enqueue and dequeue operations; see that module and ``fq_codel_traces.py``).

Conventions shared by every oracle (mirroring the Rust state machines):

* An event is a dict of the trace format (see ``traces.py``); times are
  integer nanoseconds, converted to seconds as ``ns * 1e-9`` where the spec
  computes in seconds.
* Parameters are named exactly as in ``docs/aqm.md``. Time parameters are
  given in seconds and held as integer nanoseconds (rounded to the nearest
  ns, as the scenario parser does), so that the TOML written by
  :func:`spec_toml` (``"<ns> ns"``) gives the simulator exactly the same
  values.
* ``hits`` counts the branches taken, so that tests can assert that a set of
  traces exercised every branch.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

NAN = float("nan")

#: Every probe key of the replay interface.
PROBE_KEYS = ("avg", "prob", "vq_bytes", "vcap_bps", "price", "max_p", "qdelay", "count")

#: Every verdict string an oracle may return for an arrival or departure.
VERDICTS = ("pass", "mark:early", "mark:forced", "drop:early", "drop:forced")

KINDS = ("droptail", "red", "ared", "gkvq", "avq", "avqred", "pi", "rem", "pie", "codel")


def to_ns(seconds: float) -> int:
    """Seconds to integer ns, rounding half away from zero (as Rust's ``f64::round``)."""
    x = float(seconds) * 1e9
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def secs(ns: int) -> float:
    """Integer ns to seconds, as the simulator's ``SimTime::secs_f64``."""
    return ns * 1e-9


class Oracle:
    """Base class: parameter checking, branch counters, default probe."""

    kind = ""
    #: parameters that must be given
    required: tuple[str, ...] = ()
    #: optional parameters and their defaults (``None``: computed from the link)
    defaults: dict[str, Any] = {}
    #: parameters in seconds, held as integer ns
    time_params: tuple[str, ...] = ()
    #: parameters in bit/s
    rate_params: tuple[str, ...] = ()
    #: probe keys the spec defines for this algorithm (compared strictly)
    spec_probes: tuple[str, ...] = ()

    def __init__(self, params: dict, rate_bps: int, limit_bytes: int):
        params = dict(params)
        params.pop("kind", None)
        allowed = set(self.required) | set(self.defaults)
        unknown = sorted(set(params) - allowed)
        if unknown:
            raise ValueError(f"{self.kind}: unknown parameter(s) {unknown}")
        missing = [k for k in self.required if k not in params]
        if missing:
            raise ValueError(f"{self.kind}: missing parameter(s) {missing}")
        self.given = dict(params)
        self.p = {**self.defaults, **params}
        for k in self.time_params:
            if self.p.get(k) is not None:
                self.p[k] = to_ns(self.p[k])
        self.rate_bps = int(rate_bps)
        self.limit_bytes = int(limit_bytes)
        self.hits: Counter[str] = Counter()

    def hit(self, branch: str) -> None:
        self.hits[branch] += 1

    # -- the interface ---------------------------------------------------
    def on_arrival(self, ev: dict) -> str:
        return "pass"

    def on_departure(self, ev: dict) -> str:
        return "pass"

    def on_timer(self, ev: dict) -> None:
        return None

    def probe(self) -> dict:
        return {}

    def timer_interval_ns(self) -> int | None:
        """Period of ``on_timer`` (``None``: the algorithm has no timer)."""
        return None

    # -- helpers -----------------------------------------------------------
    def full_probe(self) -> dict:
        """The probe with every key of :data:`PROBE_KEYS` (NaN when missing)."""
        got = self.probe()
        return {k: float(got.get(k, NAN)) for k in PROBE_KEYS}


def registry() -> dict[str, type[Oracle]]:
    """Kind name to oracle class (imported lazily to avoid import cycles)."""
    from . import ared, avq, avqred, codel, droptail, gkvq, pi, pie, red, rem

    return {
        "droptail": droptail.DropTail,
        "red": red.Red,
        "ared": ared.AdaptiveRed,
        "gkvq": gkvq.Gkvq,
        "avq": avq.Avq,
        "avqred": avqred.AvqRed,
        "pi": pi.Pi,
        "rem": rem.Rem,
        "pie": pie.Pie,
        "codel": codel.CoDel,
    }


def make(kind: str, params: dict, rate_bps: int, limit_bytes: int) -> Oracle:
    return registry()[kind](params, rate_bps, limit_bytes)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError("non-finite parameter")
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def spec_toml(kind: str, params: dict) -> str:
    """The AQM table as TOML text: ``kind`` and the parameters as given, time
    parameters written as exact nanosecond strings (``"15000000 ns"``) and
    rates in bit/s (``"4000000.0 bps"``)."""
    cls = registry()[kind]
    lines = [f"kind = {_toml_value(kind)}"]
    for k, v in params.items():
        if k in cls.time_params:
            lines.append(f'{k} = "{to_ns(v)} ns"')
        elif k in cls.rate_params:
            lines.append(f'{k} = "{_toml_value(float(v))} bps"')
        else:
            lines.append(f"{k} = {_toml_value(v)}")
    return "\n".join(lines) + "\n"


def qdisc_spec_toml(cls: Any, params: dict) -> str:
    """A queue discipline's table as TOML (``cls``: its oracle class, with
    ``kind``, ``defaults`` and ``time_params``): ``kind`` and the parameters
    as given, times as exact ``"<ns> ns"`` strings, ``None`` left out (the
    default)."""
    lines = [f"kind = {_toml_value(cls.kind)}"]
    for k, v in params.items():
        if k not in cls.defaults:
            raise ValueError(f"{cls.kind}: unknown parameter {k!r}")
        if v is None:
            continue
        if k in cls.time_params:
            lines.append(f'{k} = "{to_ns(v)} ns"')
        else:
            lines.append(f"{k} = {_toml_value(v)}")
    return "\n".join(lines) + "\n"


def qdisc_params_from_toml(cls: Any, table: dict) -> dict:
    """The inverse of :func:`qdisc_spec_toml`: a parsed table to the oracle's
    parameters (times in seconds)."""
    table = dict(table)
    if table.pop("kind", None) != cls.kind:
        raise ValueError(f"not a {cls.kind} table")
    out: dict[str, Any] = {}
    for k, v in table.items():
        if k in cls.time_params:
            if not (isinstance(v, str) and v.endswith(" ns")):
                raise ValueError(f"{k}: expected '<ns> ns', got {v!r}")
            v = int(v[:-3]) * 1e-9
        out[k] = v
    return out
