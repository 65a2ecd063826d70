"""Verdicts on the papers' claims: five kinds of claim, each with one numeric
criterion, shared by every reproduction (docs/reproductions.md#verdicts).

- **match**: a satqm value against a value the paper prints (or a setpoint
  it names). Holds when ``|ours - paper| <= max(rel * |paper|, abs)`` with
  the quantity's tolerance *against a paper* (:attr:`Quantity.paper`),
  judged on the mean over seeds.
- **same**: two satqm values the paper says are about equal. Holds when
  ``|a - b| <= max(rel * |b|, abs)`` with the quantity's margin *between
  runs* (:attr:`Quantity.runs`), in every seed.
- **order**: A below (or above) B. Holds when ``a < b - margin(b)`` (or
  ``a > b + margin(b)``), the margin between runs, in every seed; "A not
  above B" holds when ``a <= b + margin(b)`` in every seed.
- **bound**: a value beyond a level the paper states or its setting fixes
  (a threshold, the link's rate), or the level stated here for a word the
  paper gives no number for (:data:`MOST`). Holds when the value is on the
  claimed side of the level in every seed.
- **transient**: a claim about a stretch of time. Judged with the kinds
  above on values measured in named windows only (:func:`window`), apart
  from the steady state.

A verdict is ``holds`` or ``not reproduced``; :meth:`Verdict.line` writes it
with the numbers it was judged on and its criterion.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Union

HOLDS = "holds"
NOT_REPRODUCED = "not reproduced"

#: One value, or one per seed.
Values = Union[float, Sequence[float]]


@dataclass(frozen=True)
class Tolerance:
    """``max(rel * |reference|, abs * scale)``: a relative part and a floor in
    the quantity's unit (``scale`` converts the floor, e.g. a share of a
    link's capacity into Mbit/s)."""

    rel: float
    abs: float

    def of(self, reference: float, scale: float = 1.0) -> float:
        return max(self.rel * abs(reference), self.abs * scale)


@dataclass(frozen=True)
class Quantity:
    """A kind of measured value, with its tolerance against a paper's number
    (``paper``) and its margin between two satqm values (``runs``).
    ``floor`` says in words what a tolerance's absolute part is: ``{abs}``
    is filled with it in the values' unit, ``{raw}`` with the bare number,
    ``{pct}`` with it in percent."""

    name: str
    unit: str
    paper: Tolerance
    runs: Tolerance
    digits: int
    floor: str = "{abs}"

    def fmt(self, x: float, digits: int | None = None) -> str:
        d = self.digits if digits is None else digits
        return "nan" if math.isnan(x) else f"{x:.{d}f}"

    def describe(self, tol: Tolerance, scale: float, unit: str, of: str) -> str:
        """The tolerance in words: "25 % of it, at least 1 packet"."""
        raw = _g(tol.abs * scale)
        floor = self.floor.format(abs=_with(raw, unit), raw=raw, pct=_g(100 * tol.abs))
        if tol.rel and tol.abs:
            return f"{_g(100 * tol.rel)} % of {of}, at least {floor}"
        if tol.rel:
            return f"{_g(100 * tol.rel)} % of {of}"
        return floor


def _g(x: float) -> str:
    return f"{x:.3g}"


# The quantities: tolerance against a paper, margin between runs (why these
# numbers: docs/reproductions.md#why-these-numbers).

#: Queue length statistics (mean, standard deviation), packets (or KB of
#: 1 KB packets).
QUEUE = Quantity("queue", "packets", Tolerance(0.25, 1.0), Tolerance(0.10, 1.0), 1)
#: Queueing delay, seconds.
DELAY = Quantity("delay", "s", Tolerance(0.25, 0.001), Tolerance(0.10, 0.001), 3)
#: A duration (transfer, delivery or recovery time), seconds.
TIME = Quantity("time", "s", Tolerance(0.25, 0.1), Tolerance(0.10, 0.1), 2)
#: Loss, drop or mark rate, percent of packets.
LOSS = Quantity("loss", "%", Tolerance(0.25, 0.05), Tolerance(0.10, 0.05), 3,
                floor="{raw} percentage points")
#: A share of a link: utilization, or a throughput with ``scale`` = the
#: link's capacity in the throughput's unit.
SHARE = Quantity("share", "", Tolerance(0.0, 0.02), Tolerance(0.0, 0.01), 3,
                 floor="{pct} % of the link's capacity")
#: Jain's fairness index.
FAIRNESS = Quantity("fairness", "", Tolerance(0.0, 0.01), Tolerance(0.0, 0.01), 4)
#: A fraction of the samples (time spent in a region), 0-1.
FRACTION = Quantity("fraction of samples", "", Tolerance(0.0, 0.10), Tolerance(0.0, 0.10), 2,
                    floor="{pct} % of the samples")
#: A dimensionless statistic (a ratio, a dispersion index, the fraction of
#: drops in runs) or a spread (a throughput's standard deviation).
STATISTIC = Quantity("statistic", "", Tolerance(0.25, 0.0), Tolerance(0.10, 0.0), 2)

#: "Most of the time": more than half of the samples.
MOST = 0.5


def fill_time(bdp_packets: float, rtt_s: float) -> float:
    """"Fast", where a paper says a sender takes or yields capacity quickly
    without a number: within the round trips a slow start from one segment
    needs to reach the path's bandwidth-delay product, ceil(log2(BDP))."""
    return math.ceil(math.log2(max(bdp_packets, 2.0))) * rtt_s


@dataclass(frozen=True)
class Verdict:
    """Whether a claim holds, the numbers it was judged on and its criterion."""

    holds: bool
    numbers: str
    criterion: str

    @property
    def word(self) -> str:
        return HOLDS if self.holds else NOT_REPRODUCED

    def line(self, claim: str) -> str:
        """A report's verdict line: ``- **holds**: claim — numbers (criterion: ...)``."""
        return f"- **{self.word}**: {claim} — {self.numbers} (criterion: {self.criterion})"


def _seeds(x: Values) -> list[float]:
    if isinstance(x, numbers.Real):
        return [float(x)]
    return [float(v) for v in x]


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else math.nan


def _every(ok: list[bool]) -> tuple[bool, str]:
    """All seeds hold; the criterion's suffix naming the seeds."""
    n = len(ok)
    if n <= 1:
        return all(ok) and n == 1, ""
    return all(ok), f", in every seed ({sum(ok)} of {n})"


def _unit(q: Quantity, unit: str | None) -> str:
    return q.unit if unit is None else unit


def _with(x: str, unit: str) -> str:
    """A number and its unit: "3.3 packets", "1 packet", "2.5 %", "0.98"."""
    if not unit:
        return x
    if unit == "packets" and x == "1":
        return "1 packet"
    return f"{x} {unit}"


def match(ours: Values, paper: float, q: Quantity, *, scale: float = 1.0,
          unit: str | None = None, digits: int | None = None,
          what: str = "the paper's value", name: str = "", printed: float = 0.0) -> Verdict:
    """A satqm value (the mean over seeds) against ``paper`` (``what`` names
    it: the paper's value, a setpoint; ``name`` names ours in the numbers).
    ``printed``: half the last digit the paper prints the value with ("about
    0.9": 0.05), where that is wider than the quantity's tolerance."""
    u = _unit(q, unit)
    m = _mean(_seeds(ours))
    tol = max(q.paper.of(paper, scale), printed)
    ok = math.isfinite(m) and abs(m - paper) <= tol
    numbers = _with(f"{q.fmt(m, digits)} vs {q.fmt(paper, digits)}", u)
    if name:
        numbers = f"{name} {numbers}"
    plus = _with(_g(tol), u)
    rule = q.describe(q.paper, scale, u, "it")
    if printed > q.paper.of(paper, scale):
        rule = "half the last digit the paper prints"
    crit = f"within ±{plus} of {what}" + ("" if rule == plus else f": {rule}")
    return Verdict(ok, numbers, crit)


def same(a: Values, b: Values, q: Quantity, *, scale: float = 1.0, unit: str | None = None,
         digits: int | None = None, names: tuple[str, str] = ("", "")) -> Verdict:
    """Two satqm values the paper says are about equal, seed by seed."""
    u = _unit(q, unit)
    sa, sb = _pair(a, b)
    ok = [abs(x - y) <= q.runs.of(y, scale) for x, y in zip(sa, sb)]
    holds, every = _every(ok)
    numbers = _pair_numbers(sa, sb, q, u, digits, names, " vs ")
    crit = f"apart by at most {_rule(q, scale, u, 'the other')}{every}"
    return Verdict(holds, numbers, crit)


def below(a: Values, b: Values, q: Quantity, *, scale: float = 1.0, unit: str | None = None,
          digits: int | None = None, names: tuple[str, str] = ("", "")) -> Verdict:
    """A below B by at least the margin between runs, seed by seed."""
    return _order(a, b, q, scale, unit, digits, names, "below")


def above(a: Values, b: Values, q: Quantity, *, scale: float = 1.0, unit: str | None = None,
          digits: int | None = None, names: tuple[str, str] = ("", "")) -> Verdict:
    """A above B by at least the margin between runs, seed by seed."""
    return _order(a, b, q, scale, unit, digits, names, "above")


def not_above(a: Values, b: Values, q: Quantity, *, scale: float = 1.0,
              unit: str | None = None, digits: int | None = None,
              names: tuple[str, str] = ("", "")) -> Verdict:
    """A at most B plus the margin between runs (A no worse than B), seed by seed."""
    return _order(a, b, q, scale, unit, digits, names, "not above")


def _order(a: Values, b: Values, q: Quantity, scale: float, unit: str | None,
           digits: int | None, names: tuple[str, str], how: str) -> Verdict:
    u = _unit(q, unit)
    sa, sb = _pair(a, b)
    ok = []
    for x, y in zip(sa, sb):
        m = q.runs.of(y, scale)
        ok.append(x < y - m if how == "below" else x > y + m if how == "above" else x <= y + m)
    holds, every = _every(ok)
    numbers = _pair_numbers(sa, sb, q, u, digits, names, " against ")
    rule = _rule(q, scale, u, "the other")
    if how == "not above":
        crit = f"not higher by more than {rule}{every}"
    else:
        crit = f"{'lower' if how == 'below' else 'higher'} by more than {rule}{every}"
    return Verdict(holds, numbers, crit)


def _rule(q: Quantity, scale: float, unit: str, of: str) -> str:
    """The margin between runs in words, with its size where it is a fixed
    share of a capacity given in another unit."""
    rule = q.describe(q.runs, scale, unit, of)
    if not q.runs.rel and scale != 1.0:
        rule += f" ({_with(_g(q.runs.abs * scale), unit)})"
    return rule


def bound(values: Values, level: float, q: Quantity, *, below: bool, unit: str | None = None,
          digits: int | None = None, level_text: str = "", name: str = "") -> Verdict:
    """A value below (``below=True``) or above a stated level, in every seed;
    ``level_text`` says where the level comes from, ``name`` names the value."""
    u = _unit(q, unit)
    xs = _seeds(values)
    ok = [x < level if below else x > level for x in xs]
    holds, every = _every(ok)
    side = "below" if below else "above"
    numbers = _with(q.fmt(_mean(xs), digits), u)
    if name:
        numbers = f"{name} {numbers}"
    src = f" ({level_text})" if level_text else ""
    crit = f"{side} {_with(q.fmt(level, digits), u)}{src}{every}"
    return Verdict(holds, numbers, crit)


def window(label: str, verdict: Verdict) -> Verdict:
    """A verdict on values measured in a stretch of time (a transient claim):
    the window's name leads its numbers."""
    return Verdict(verdict.holds, f"{label}: {verdict.numbers}", verdict.criterion)


def all_of(*parts: Verdict) -> Verdict:
    """A claim made of several parts holds when every part holds."""
    criteria = list(dict.fromkeys(p.criterion for p in parts))  # each once, in order
    return Verdict(
        all(p.holds for p in parts),
        "; ".join(p.numbers for p in parts),
        "; ".join(criteria),
    )


def paper_rule(q: Quantity, scale: float = 1.0, unit: str | None = None,
               digits: int | None = None) -> str:
    """A match's tolerance in words, for a table of matches: "25 % of the
    paper's value, at least 0.05 percentage points"."""
    u = _unit(q, unit)
    rule = q.describe(q.paper, scale, u, "the paper's value")
    if not q.paper.rel:
        rule += f" ({_with(_g(q.paper.abs * scale), u)}) of the paper's value"
    return rule


def each(cells: dict[str, Verdict], q: Quantity, scale: float = 1.0, unit: str | None = None,
         digits: int | None = None) -> Verdict:
    """A table's column of matches (named ``cells``, each from :func:`match`
    with the same quantity) as one verdict: it holds when every cell holds,
    and names the cells outside."""
    bad = [f"{k} {v.numbers}" for k, v in cells.items() if not v.holds]
    return Verdict(
        not bad,
        f"{len(cells) - len(bad)} of {len(cells)} within"
        + (f"; outside: {', '.join(bad)}" if bad else ""),
        "each within " + paper_rule(q, scale, unit, digits),
    )


def _pair(a: Values, b: Values) -> tuple[list[float], list[float]]:
    sa, sb = _seeds(a), _seeds(b)
    if len(sa) != len(sb):
        raise ValueError(f"one value per seed on both sides, got {len(sa)} and {len(sb)}")
    return sa, sb


def _pair_numbers(sa: list[float], sb: list[float], q: Quantity, unit: str,
                  digits: int | None, names: tuple[str, str], sep: str) -> str:
    na, nb = (f"{n} " if n else "" for n in names)
    return (f"{na}{_with(q.fmt(_mean(sa), digits), unit)}{sep}"
            f"{nb}{_with(q.fmt(_mean(sb), digits), unit)}")
