"""The scenario schema as the core states it, and hypothesis strategies over it.

Nothing here lists the schema's keys or kinds by hand. The core is asked:

- a table's keys: put an unknown key into it and read the refusal
  ("unknown field `x`, expected one of `a`, `b`, ..." for the file's tables,
  "is not a parameter of red (its parameters: a, b, ...)" for an AQM);
- the values a text key accepts: put an unknown word there and read
  "... (known: a, b, c)" (AQM kinds, traffic kinds, topologies, loss
  recoveries, congestion controls, modes, ...).

The shipped scenarios (scenarios/**/*.toml) are the valid starting points
and give valid values for each key. `valid_scenarios` recombines them
along the schema; `mutated_scenarios` then breaks them in the ways a
hostile or careless user would.
"""

from __future__ import annotations

import copy
import functools
import math
import re
from dataclasses import dataclass, field
from typing import Any

import satqm
from conftest import ROOT, TINY, to_toml, tomllib
from fuzz_check import DURATION
from hypothesis import strategies as st
from satqm import _core

#: A key no table has: asking the core about it lists the table's keys.
PROBE = "zz_probe"

#: A valid scenario that uses most keys of the dumbbell, so that mutations
#: reach them (the shipped scenarios cover the rest).
FUZZ_BASE = """\
name = "fuzz"
description = "touches most of the schema"

[simulation]
duration = "1 s"
seed = 3
sample_interval = "50 ms"
warmup = "0.1 s"
trace_cwnd = [0, 2]
trace_seq = [1]
capture = ["bottleneck"]
capture_side = "both"
capture_from = "0.2 s"
capture_until = "0.5 s"
capture_snaplen = 128

[topology]
kind = "dumbbell"
pairs = 3

[topology.access]
rate = "100 Mbps"
delay = { min = "5 ms", max = "20 ms" }
buffer = 200
loss = 0.0

[topology.receiver_access]
rate = "100 Mbps"
delay = ["1 ms", "2 ms", "3 ms"]

[topology.bottleneck]
rate = "10 Mbps"
delay = { uniform = ["20 ms", "30 ms"] }
buffer = { packets = 30 }
reverse_buffer = { bytes = "64 KiB" }
loss = 0.001
reverse_loss = 0.001

[tcp]
recovery = "sack"
cc = "reno"
mss = 1460
initial_window = 3
delayed_ack = true
delayed_ack_timeout = "40 ms"
window_scaling = true
receive_buffer = "1 MiB"
ecn = false
min_rto = "200 ms"
max_rto = "60 s"
initial_rto = "1 s"
handshake = true
dupack_threshold = 3
rto_rule = "linux"
cc_rules = "linux"
quickack = 16
profile = "rfc"

[[traffic]]
kind = "bulk"
pairs = [0, 1]
start = { uniform = ["0 s", "0.2 s"] }
stop = "0.9 s"
size = "unlimited"
tcp = { recovery = "newreno", rate_cap = "5 Mbps" }

[[traffic]]
kind = "cbr"
pairs = 2
start = "0.1 s"
rate = "1 Mbps"
packet_size = 500
"""

#: Keys that set how much there is to simulate (hosts, connections, users,
#: arrivals per second): capped so that one second of any generated
#: scenario runs in well under a second of wall time. The refusal of
#: larger values is the bad-input table's business.
SIZE_CAPS = {
    "pairs": 40,
    "servers": 10,
    "clients": 20,
    "connections": 40,
    "sessions": 100,
    "arrival_rate": 200,
}

#: A key path: str keys and int list indices.
KeyPath = tuple


# ----- asking the core -----------------------------------------------------------


def refusal(data: dict[str, Any]) -> satqm.ConfigError | None:
    """The core's ConfigError for `data` written as TOML, or None if valid."""
    try:
        satqm.Scenario.from_toml(to_toml(data))
    except satqm.ConfigError as e:
        return e
    return None


def dotted(path: KeyPath) -> str:
    """("traffic", 0, "tcp") -> "traffic[0].tcp", as the core names paths."""
    out = ""
    for k in path:
        if isinstance(k, int):
            out += f"[{k}]"
        else:
            out += ("." if out else "") + k
    return out


def pattern(path: KeyPath) -> str:
    """A path with list indices generalised: "traffic[*].tcp"."""
    return re.sub(r"\[\d+\]", "[*]", dotted(path))


_EXPECTED = re.compile(r"unknown field `[^`]*`, expected (?:one of )?(.*)$")
_PARAMETERS = re.compile(r"is not a parameter of \S+ \(its parameters: (.*)\)$")
_KNOWN = re.compile(r"\(known: (.*)\)")


def _keys_from_rule(rule: str) -> list[str] | None:
    m = _EXPECTED.search(rule)
    if m:
        return re.findall(r"`([^`]+)`", m.group(1))
    m = _PARAMETERS.search(rule)
    if m:
        return [k.strip() for k in m.group(1).split(",") if k.strip()]
    return None


def ask_keys(data: dict[str, Any], path: KeyPath) -> list[str] | None:
    """The keys the core accepts in the table at `path` of the valid
    scenario `data` (None if its refusal does not list them)."""
    d = copy.deepcopy(data)
    get(d, path)[PROBE] = 1
    e = refusal(d)
    if e is None or e.path != dotted(path + (PROBE,)):
        return None
    return _keys_from_rule(e.rule)


def ask_words(data: dict[str, Any], path: KeyPath) -> list[str] | None:
    """The words the core accepts for the text key at `path` (None if its
    refusal of an unknown word does not list them)."""
    d = copy.deepcopy(data)
    set_at(d, path, PROBE)
    e = refusal(d)
    if e is None or e.path != dotted(path):
        return None
    m = _KNOWN.search(e.rule)
    if not m:
        return None
    return [w.strip().strip('"') for w in m.group(1).split(",") if w.strip()]


# ----- walking dicts -----------------------------------------------------------------


def get(d: Any, path: KeyPath) -> Any:
    for k in path:
        d = d[k]
    return d


def set_at(d: Any, path: KeyPath, value: Any) -> None:
    get(d, path[:-1])[path[-1]] = value


def leaves(d: Any, prefix: KeyPath = ()) -> list[tuple[KeyPath, Any]]:
    """Every (path, value) below `d`, tables and lists included."""
    out: list[tuple[KeyPath, Any]] = []
    items = d.items() if isinstance(d, dict) else enumerate(d) if isinstance(d, list) else []
    for k, v in items:
        out.append((prefix + (k,), v))
        out.extend(leaves(v, prefix + (k,)))
    return out


def tables(d: Any, prefix: KeyPath = ()) -> list[KeyPath]:
    """Paths of every table (dict) in `d`, `d` itself included."""
    out = [prefix] if isinstance(d, dict) else []
    items = d.items() if isinstance(d, dict) else enumerate(d) if isinstance(d, list) else []
    for k, v in items:
        out.extend(tables(v, prefix + (k,)))
    return out


# ----- the schema --------------------------------------------------------------------


@dataclass
class Schema:
    """What the core accepts, learnt from its refusals, and example values."""

    #: Valid scenarios to start from (name -> parsed TOML).
    bases: dict[str, dict[str, Any]]
    #: Table pattern ("traffic[*]", "aqm[*]:red", "topology.bottleneck") -> keys.
    keys: dict[str, list[str]] = field(default_factory=dict)
    #: Text key pattern ("aqm[*].kind", "tcp.cc") -> accepted words.
    words: dict[str, list[str]] = field(default_factory=dict)
    #: Key pattern -> values seen in valid scenarios.
    values: dict[str, list[Any]] = field(default_factory=dict)
    #: Leaf key name -> values seen under that name anywhere.
    by_name: dict[str, list[Any]] = field(default_factory=dict)
    #: Topology kind -> tables of each list ("aqm", "traffic", "pep") seen.
    lists: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)

    def table_keys(self, data: dict[str, Any], path: KeyPath) -> list[str]:
        t = get(data, path)
        pat = pattern(path)
        if pat == "aqm[*]" and isinstance(t.get("kind"), str):
            pat += ":" + t["kind"]
        return self.keys.get(pat, [])

    def values_for(self, path: KeyPath) -> list[Any]:
        got = self.values.get(pattern(path))
        if got:
            return got
        name = path[-1] if path and isinstance(path[-1], str) else None
        return self.by_name.get(name, []) if name else []


def _add(pool: dict[str, list[Any]], key: str, v: Any) -> None:
    vs = pool.setdefault(key, [])
    if v not in vs:
        vs.append(v)


def shipped_scenarios() -> dict[str, dict[str, Any]]:
    out = {"tiny": tomllib.loads(TINY), "fuzz": tomllib.loads(FUZZ_BASE)}
    for p in sorted((ROOT / "scenarios").rglob("*.toml")):
        out[str(p.relative_to(ROOT / "scenarios"))] = tomllib.loads(p.read_text())
    for d in out.values():
        _shorten(d)
        _shrink_pairs(d)
        _cap(d)
    return out


@functools.cache
def schema() -> Schema:
    """Ask the core about every table and text key of the shipped scenarios."""
    s = Schema(bases=shipped_scenarios())
    for data in s.bases.values():
        topo = data["topology"]["kind"]
        for name in ("aqm", "traffic", "pep"):
            for t in data.get(name, []):
                s.lists.setdefault(topo, {}).setdefault(name, []).append(t)
        for path, v in leaves(data):
            _add(s.values, pattern(path), v)
            if isinstance(path[-1], str):
                _add(s.by_name, path[-1], v)
        for path in tables(data):
            pat = pattern(path)
            t = get(data, path)
            if pat == "aqm[*]":
                pat += ":" + t["kind"]
            if pat not in s.keys:
                got = ask_keys(data, path)
                if got is not None:
                    s.keys[pat] = got
        for path, v in leaves(data):
            if isinstance(v, str) and pattern(path) not in s.words:
                got = ask_words(data, path)
                if got is not None:
                    s.words[pattern(path)] = got
    _learn_aqm_kinds(s)
    return s


#: Values tried, in turn, for a required AQM parameter no shipped scenario
#: sets (not a list of keys: the key comes from the core's refusal).
_PLAIN_VALUES = [1, 0.5, "1 ms", "1 Mbps", "1 kB"]


def _learn_aqm_kinds(s: Schema) -> None:
    """The parameters of every AQM kind, including kinds no shipped
    scenario uses: each kind on the bottleneck of the small scenario."""
    base = s.bases["tiny"]
    for kind in s.words.get("aqm[*].kind", []):
        if f"aqm[*]:{kind}" in s.keys:
            continue
        d = copy.deepcopy(base)
        d["aqm"] = [{"kind": kind, "at": "bottleneck"}]
        if refusal(d) is not None:
            # A kind with required parameters: borrow values by name until
            # the table is complete (or give up; mutated scenarios still
            # reach it through the kind word).
            for _ in range(20):
                e = refusal(d)
                if e is None or not e.path.startswith("aqm[0]."):
                    break
                key = e.path[len("aqm[0].") :]
                tried = d["aqm"][0].get(key)
                pool = [*s.by_name.get(key, []), *_PLAIN_VALUES]
                later = pool[pool.index(tried) + 1 :] if tried in pool else pool
                if not later:
                    break
                d["aqm"][0][key] = later[0]
        if refusal(d) is None:
            got = ask_keys(d, ("aqm", 0))
            if got is not None:
                s.keys[f"aqm[*]:{kind}"] = got
                s.lists.setdefault("dumbbell", {}).setdefault("aqm", []).append(d["aqm"][0])


# ----- strategies --------------------------------------------------------------------


def _cap(data: dict[str, Any]) -> None:
    """Apply SIZE_CAPS wherever those keys hold numbers."""
    for path, v in leaves(data):
        name = path[-1]
        if isinstance(name, str) and name in SIZE_CAPS:
            cap = SIZE_CAPS[name]
            if isinstance(v, (int, float)) and not isinstance(v, bool) and v > cap:
                set_at(data, path, cap)


def _shrink_pairs(data: dict[str, Any]) -> None:
    """Bases with more pairs than the cap: keep their first pairs only and
    cut per-pair lists and pair references to match, so they stay valid."""
    topo = data.get("topology", {})
    n = topo.get("pairs")
    cap = SIZE_CAPS["pairs"]
    if not isinstance(n, int) or n <= cap:
        return
    topo["pairs"] = cap
    for link in topo.values():
        if isinstance(link, dict) and isinstance(link.get("delay"), list):
            link["delay"] = link["delay"][:cap]
    kept = []
    for t in data.get("traffic", []):
        p = t.get("pairs")
        if isinstance(p, int):
            if p < cap:
                kept.append(t)
        elif isinstance(p, dict) and "from" in p:
            if p["from"] < cap:
                t["pairs"] = {"from": p["from"], "to": min(p["to"], cap - 1)}
                kept.append(t)
        elif isinstance(p, list):
            t["pairs"] = [x for x in p if x < cap]
            if t["pairs"]:
                kept.append(t)
        else:
            kept.append(t)
    data["traffic"] = kept or [{"kind": "bulk", "pairs": "all"}]


def _scale_times(v: Any, factor: float) -> Any:
    """Every time in `v` (a quantity, or lists and tables of them) times
    `factor`, written in seconds."""
    if isinstance(v, dict):
        return {k: _scale_times(x, factor) for k, x in v.items()}
    if isinstance(v, list):
        return [_scale_times(x, factor) for x in v]
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return f"{v * factor:.9g} s"  # 0, the one time written without a unit
    if isinstance(v, str) and _QUANTITY.match(v):
        return f"{float(_core.parse_quantity(v, 'time')) * factor:.9g} s"
    return v


def _shorten(data: dict[str, Any]) -> None:
    """A base longer than the fuzz run, squeezed into it: its duration,
    warm-up and traffic start and stop times scaled alike."""
    sim = data["simulation"]
    length = float(_core.parse_quantity(sim["duration"], "time"))
    if length <= DURATION:
        return
    factor = DURATION / length
    sim["duration"] = f"{DURATION:g} s"
    if "warmup" in sim:
        sim["warmup"] = _scale_times(sim["warmup"], factor)
    for t in data.get("traffic", []):
        for key in ("start", "stop"):
            if key in t:
                t[key] = _scale_times(t[key], factor)


def _base(name: str) -> dict[str, Any]:
    return copy.deepcopy(schema().bases[name])


@st.composite
def valid_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """A shipped scenario, recombined along the schema: optional keys added
    with values seen for them, AQM, traffic and PEP tables swapped for
    others of the same topology, text keys set to other accepted words.
    Most are valid; those that are not must be refused cleanly all the same."""
    s = schema()
    d = _base(draw(st.sampled_from(sorted(s.bases))))
    topo = d["topology"]["kind"]
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        op = draw(st.sampled_from(["add", "word", "swap"]))
        if op == "add":
            path = draw(st.sampled_from(tables(d)))
            missing = [k for k in s.table_keys(d, path) if k not in get(d, path)]
            if not missing:
                continue
            key = draw(st.sampled_from(missing))
            pool = s.values_for(path + (key,))
            if pool:
                get(d, path)[key] = copy.deepcopy(draw(st.sampled_from(pool)))
        elif op == "word":
            texts = [p for p, v in leaves(d) if isinstance(v, str) and pattern(p) in s.words]
            if texts:
                path = draw(st.sampled_from(texts))
                set_at(d, path, draw(st.sampled_from(s.words[pattern(path)])))
        else:
            options = {k: v for k, v in s.lists.get(topo, {}).items() if v}
            if not options:
                continue
            name = draw(st.sampled_from(sorted(options)))
            d[name] = [copy.deepcopy(draw(st.sampled_from(options[name])))]
    _shrink_pairs(d)
    _cap(d)
    return d


# Values a hostile user might write where a number goes.
_NAN, _INF = math.nan, math.inf
_EXTREME = [0, -1, -(2**63), 2**63 - 1, 2**64, 0.0, -0.0, 1e-300, 1e300, -1e300, _NAN, _INF, -_INF]
_QUANTITY = re.compile(r"^\s*([-+]?[0-9][0-9_.eE+-]*)\s*([A-Za-zµ/]*)\s*$")

_numbers = st.one_of(
    st.sampled_from(_EXTREME),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
)
_scalars = st.one_of(_numbers, st.text(max_size=10), st.booleans())
_wrong_types = st.one_of(
    _scalars,
    st.lists(_scalars, max_size=3),
    st.dictionaries(st.text(min_size=1, max_size=6), _scalars, max_size=2),
)


def _number_mutant(draw: st.DrawFn, v: Any) -> Any:
    """`v` (a number, or a quantity such as "10 Mbps") made zero, negative,
    huge, tiny, NaN or infinite, keeping its unit."""
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float)):
        return draw(st.one_of(_numbers, st.just(-v), st.just(v * 1e6)))
    m = _QUANTITY.match(v) if isinstance(v, str) else None
    if m:
        n = draw(
            st.sampled_from(["0", "-1", "-0", "1e-300", "1e300", "1e400", "nan", "inf", "-inf"])
        )
        return f"{n} {m.group(2)}".strip()
    return draw(_numbers)


@st.composite
def mutated_scenarios(draw: st.DrawFn) -> str | bytes:
    """A valid scenario broken one to three times: numbers made zero,
    negative, huge, NaN or infinite; values of the wrong type; keys deleted,
    duplicated or invented; random bytes. Returns TOML text, or bytes that
    may not be UTF-8."""
    d = draw(valid_scenarios())
    ops = ["number", "number", "type", "delete", "invent", "move"]
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        op = draw(st.sampled_from(ops))
        paths = [p for p, _ in leaves(d)]
        if op == "invent":
            table = draw(st.sampled_from(tables(d)))
            key = draw(st.one_of(st.text(min_size=1, max_size=8), st.sampled_from(_all_keys())))
            value = draw(st.one_of(_wrong_types, st.sampled_from(_all_values())))
            get(d, table)[key] = copy.deepcopy(value)  # the pool is shared
            continue
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        v = get(d, path)
        if op == "number":
            set_at(d, path, _number_mutant(draw, v))
        elif op == "type":
            set_at(d, path, draw(_wrong_types))
        elif op == "move":  # a valid value of some other key
            set_at(d, path, copy.deepcopy(draw(st.sampled_from(_all_values()))))
        else:
            del get(d, path[:-1])[path[-1]]
    _cap(d)
    text = to_toml(d)
    return draw(st.one_of(st.just(text), _text_mutant(text)))


@st.composite
def _text_mutant(draw: st.DrawFn, text: str) -> str | bytes:
    """The file broken as text: a line duplicated (a duplicate key or
    table), a line cut, or random bytes spliced in."""
    lines = text.splitlines(keepends=True)
    i = draw(st.integers(min_value=0, max_value=max(len(lines) - 1, 0)))
    op = draw(st.sampled_from(["duplicate", "cut", "bytes"]))
    if op == "duplicate" and lines:
        return "".join(lines[: i + 1] + lines[i:])
    if op == "cut" and lines:
        j = draw(st.integers(min_value=0, max_value=len(lines[i])))
        return "".join(lines[:i]) + lines[i][:j] + "".join(lines[i + 1 :])
    raw = text.encode()
    at = draw(st.integers(min_value=0, max_value=len(raw)))
    return raw[:at] + draw(st.binary(min_size=1, max_size=16)) + raw[at:]


@functools.cache
def _all_keys() -> tuple[str, ...]:
    """Every key of every table, to put where it does not belong."""
    return tuple(sorted({k for ks in schema().keys.values() for k in ks}))


@functools.cache
def _all_values() -> tuple[Any, ...]:
    """Every valid value of any key (long lists left out), to put under
    another key."""
    return tuple(
        v
        for vs in schema().by_name.values()
        for v in vs
        if not isinstance(v, (dict, list)) or len(str(v)) < 200
    )


def as_case(x: dict[str, Any] | str | bytes) -> str | bytes:
    return to_toml(x) if isinstance(x, dict) else x
