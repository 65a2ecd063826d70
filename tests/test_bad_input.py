"""Bad scenarios raise satqm.ConfigError naming the key, and nothing crashes.

The table below is the contract for error paths; the scenario fuzzer
(tests/test_fuzz.py) checks that any scenario either runs or raises
ConfigError.
"""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import pytest
import satqm
from conftest import TINY, tiny_dict, to_toml
from fuzz_check import RUST_TYPES
from satqm import _core

Edit = Callable[[dict], Any]


def _set(*keys: Any, value: Any) -> Edit:
    def edit(d: dict) -> None:
        for k in keys[:-1]:
            d = d[k]
        d[keys[-1]] = value

    return edit


def _del(*keys: Any) -> Edit:
    def edit(d: dict) -> None:
        for k in keys[:-1]:
            d = d[k]
        del d[keys[-1]]

    return edit


def _update(*keys: Any, **values: Any) -> Edit:
    def edit(d: dict) -> None:
        for k in keys:
            d = d[k]
        d.update(values)

    return edit


BN = ("topology", "bottleneck")
AC = ("topology", "access")
T0 = ("traffic", 0)
NAN, INF = math.nan, math.inf

# (id, edit of TINY, expected ConfigError.path, a word the rule must contain)
CASES: list[tuple[str, Edit, str, str]] = [
    # rates
    ("negative rate", _set(*BN, "rate", value="-1 bps"), "topology.bottleneck.rate", "> 0"),
    ("negative rate text", _set(*BN, "rate", value="-10 Mbps"), "topology.bottleneck.rate", "> 0"),
    ("zero rate", _set(*BN, "rate", value=0), "topology.bottleneck.rate", "> 0"),
    ("NaN rate", _set(*BN, "rate", value=NAN), "topology.bottleneck.rate", "finite"),
    ("inf rate", _set(*BN, "rate", value=INF), "topology.bottleneck.rate", "finite"),
    (
        "rate below 1 bit/s",
        _set(*BN, "rate", value="0.5 bps"),
        "topology.bottleneck.rate",
        "1 bit/s",
    ),
    ("huge rate", _set(*BN, "rate", value="1e300 bps"), "topology.bottleneck.rate", "at most"),
    ("unknown unit", _set(*BN, "rate", value="10 Mfoo"), "topology.bottleneck.rate", "unit"),
    ("rate unit only", _set(*BN, "rate", value="Mbps"), "topology.bottleneck.rate", "number"),
    ("rate empty text", _set(*BN, "rate", value=""), "topology.bottleneck.rate", "number"),
    ("rate bool", _set(*BN, "rate", value=True), "topology.bottleneck.rate", "must be"),
    ("rate list", _set(*BN, "rate", value=[10]), "topology.bottleneck.rate", "must be"),
    ("access rate zero", _set(*AC, "rate", value=0), "topology.access.rate", "> 0"),
    # delays
    ("negative delay", _set(*BN, "delay", value="-5 ms"), "topology.bottleneck.delay", ">= 0"),
    ("inf delay", _set(*BN, "delay", value=INF), "topology.bottleneck.delay", "finite"),
    ("huge delay", _set(*BN, "delay", value="1e300 s"), "topology.bottleneck.delay", "at most"),
    (
        "per-packet delay low > high",
        _set(*BN, "delay", value={"uniform": ["5 ms", "1 ms"]}),
        "topology.bottleneck.delay",
        "low <= high",
    ),
    (
        "per-flow delay on bottleneck",
        _set(*BN, "delay", value={"min": "1 ms", "max": "5 ms"}),
        "topology.bottleneck.delay",
        "access",
    ),
    (
        "access delay min > max",
        _set(*AC, "delay", value={"min": "100 ms", "max": "5 ms"}),
        "topology.access.delay",
        "min must be <= max",
    ),
    (
        "access delay list too short",
        _set(*AC, "delay", value=["1 ms"]),
        "topology.access.delay",
        "pairs",
    ),
    ("access delay list empty", _set(*AC, "delay", value=[]), "topology.access.delay", "empty"),
    (
        "access delay list item",
        _set(*AC, "delay", value=["1 ms", "-1 ms"]),
        "topology.access.delay[1]",
        ">= 0",
    ),
    # loss and buffers
    ("loss 1", _set(*BN, "loss", value=1.0), "topology.bottleneck.loss", "< 1"),
    ("loss negative", _set(*BN, "loss", value=-0.1), "topology.bottleneck.loss", "probability"),
    ("loss NaN", _set(*BN, "loss", value=NAN), "topology.bottleneck.loss", "probability"),
    (
        "reverse loss 2",
        _set(*BN, "reverse_loss", value=2.0),
        "topology.bottleneck.reverse_loss",
        "probability",
    ),
    ("buffer 0", _set(*BN, "buffer", value=0), "topology.bottleneck.buffer", "between"),
    ("buffer huge", _set(*BN, "buffer", value=10**12), "topology.bottleneck.buffer", "between"),
    ("buffer float", _set(*BN, "buffer", value=2.5), "topology.bottleneck.buffer", "buffer size"),
    (
        "buffer packets and bytes",
        _set(*BN, "buffer", value={"packets": 3, "bytes": "3000 B"}),
        "topology.bottleneck.buffer",
        "exactly one",
    ),
    (
        "buffer bytes tiny",
        _set(*BN, "buffer", value={"bytes": "10 B"}),
        "topology.bottleneck.buffer.bytes",
        "64 bytes",
    ),
    (
        "reverse buffer 0",
        _set(*BN, "reverse_buffer", value=0),
        "topology.bottleneck.reverse_buffer",
        "between",
    ),
    # simulation
    (
        "duration 1e300",
        _set("simulation", "duration", value="1e300 s"),
        "simulation.duration",
        "at most",
    ),
    ("duration zero", _set("simulation", "duration", value=0), "simulation.duration", "> 0"),
    (
        "duration negative",
        _set("simulation", "duration", value="-3 s"),
        "simulation.duration",
        "> 0",
    ),
    ("duration NaN", _set("simulation", "duration", value=NAN), "simulation.duration", "finite"),
    ("duration -inf", _set("simulation", "duration", value=-INF), "simulation.duration", "finite"),
    (
        "duration words",
        _set("simulation", "duration", value="ten"),
        "simulation.duration",
        "number",
    ),
    ("seed negative", _set("simulation", "seed", value=-1), "simulation.seed", ">= 0"),
    ("seed float", _set("simulation", "seed", value=1.5), "simulation.seed", "must be"),
    ("seed text", _set("simulation", "seed", value="one"), "simulation.seed", "must be"),
    (
        "sample interval 0",
        _set("simulation", "sample_interval", value=0),
        "simulation.sample_interval",
        "> 0",
    ),
    (
        "sample interval 1 ns",
        _set("simulation", "sample_interval", value="1 ns"),
        "simulation.sample_interval",
        "1 us",
    ),
    (
        "warmup past end",
        _set("simulation", "warmup", value="10 s"),
        "simulation.warmup",
        "less than",
    ),
    (
        "trace unknown flow",
        _set("simulation", "trace_cwnd", value=[0, 5]),
        "simulation.trace_cwnd[1]",
        "between",
    ),
    # topology
    ("pairs 10**9", _set("topology", "pairs", value=10**9), "topology.pairs", "between"),
    ("pairs zero", _set("topology", "pairs", value=0), "topology.pairs", "between"),
    ("pairs negative", _set("topology", "pairs", value=-2), "topology.pairs", "between"),
    ("pairs float", _set("topology", "pairs", value=2.0), "topology.pairs", "must be"),
    ("pairs text", _set("topology", "pairs", value="2"), "topology.pairs", "must be"),
    ("unknown topology", _set("topology", "kind", value="ring"), "topology.kind", "unknown"),
    # unknown keys, at every level
    ("unknown top-level key", _set("bogus", value=1), "bogus", "unknown field"),
    (
        "unknown simulation key",
        _set("simulation", "bogus", value=1),
        "simulation.bogus",
        "unknown field",
    ),
    ("unknown topology key", _set("topology", "bogus", value=1), "topology.bogus", "unknown field"),
    ("unknown link key", _set(*BN, "bogus", value=1), "topology.bottleneck.bogus", "unknown field"),
    ("misspelt key", _set(*AC, "delays", value="5 ms"), "topology.access.delays", "unknown field"),
    ("unknown tcp key", _set("tcp", "bogus", value=1), "tcp.bogus", "unknown field"),
    ("unknown traffic key", _set(*T0, "bogus", value=1), "traffic[0].bogus", "unknown field"),
    (
        "unknown traffic tcp key",
        _set(*T0, "tcp", value={"bogus": 1}),
        "traffic[0].tcp.bogus",
        "unknown field",
    ),
    # missing sections and keys
    ("no simulation", _del("simulation"), "simulation", "required"),
    ("no topology", _del("topology"), "topology", "required"),
    ("no bottleneck", _del(*BN), "topology.bottleneck", "required"),
    ("no access", _del(*AC), "topology.access", "required"),
    ("no duration", _del("simulation", "duration"), "simulation.duration", "required"),
    ("no rate", _del(*BN, "rate"), "topology.bottleneck.rate", "required"),
    ("no delay", _del(*BN, "delay"), "topology.bottleneck.delay", "required"),
    ("no traffic", _del("traffic"), "traffic", "required"),
    ("no traffic kind", _del(*T0, "kind"), "traffic[0].kind", "required"),
    # wrong types of whole sections
    ("simulation not a table", _set("simulation", value=3), "simulation", "must be"),
    ("traffic not a list", _set("traffic", value={"kind": "bulk"}), "traffic", "must be"),
    ("name not text", _set("name", value=3), "name", "must be"),
    # traffic
    ("empty traffic", _set("traffic", value=[]), "traffic", "at least one"),
    ("unknown traffic kind", _set(*T0, "kind", value="video"), "traffic[0].kind", "unknown"),
    ("pair out of range", _set(*T0, "pairs", value=5), "traffic[0].pairs", "between"),
    ("pair list out of range", _set(*T0, "pairs", value=[0, 7]), "traffic[0].pairs[1]", "between"),
    ("pairs empty list", _set(*T0, "pairs", value=[]), "traffic[0].pairs", "empty"),
    ("pairs bad word", _set(*T0, "pairs", value="some"), "traffic[0].pairs", "all"),
    (
        "start range min > max",
        _set(*T0, "start", value={"uniform": ["2 s", "1 s"]}),
        "traffic[0].start",
        "low <= high",
    ),
    ("start after the end", _set(*T0, "start", value="10 s"), "traffic[0].start", "before"),
    (
        "start malformed",
        _set(*T0, "start", value={"uniform": ["1 s"]}),
        "traffic[0].start",
        "start time",
    ),
    ("stop before start", _update(*T0, start="1 s", stop="0.5 s"), "traffic[0].stop", "after"),
    ("bulk size zero", _set(*T0, "size", value=0), "traffic[0].size", "> 0"),
    ("bulk size fractional", _set(*T0, "size", value="1.5 B"), "traffic[0].size", "whole"),
    ("bulk with rate", _set(*T0, "rate", value="1 Mbps"), "traffic[0].rate", "not used"),
    ("cbr without rate", _set(*T0, "kind", value="cbr"), "traffic[0].rate", "required"),
    (
        "cbr with tcp",
        _update(*T0, kind="cbr", rate="1 Mbps", tcp={"mss": 1000}),
        "traffic[0].tcp",
        "not used",
    ),
    (
        "cbr packet size 0",
        _update(*T0, kind="cbr", rate="1 Mbps", packet_size=0),
        "traffic[0].packet_size",
        "between",
    ),
    # tcp
    ("unknown recovery", _set("tcp", "recovery", value="vegas"), "tcp.recovery", "unknown"),
    (
        "unknown recovery in override",
        _set(*T0, "tcp", value={"recovery": "x"}),
        "traffic[0].tcp.recovery",
        "unknown",
    ),
    ("unknown cc", _set("tcp", "cc", value="warp"), "tcp.cc", "unknown"),
    ("mss zero", _set("tcp", "mss", value=0), "tcp.mss", "between"),
    ("mss huge", _set("tcp", "mss", value=10**6), "tcp.mss", "between"),
    ("initial window 0", _set("tcp", "initial_window", value=0), "tcp.initial_window", "between"),
    ("min_rto > max_rto", _update("tcp", min_rto="10 s", max_rto="1 s"), "tcp.min_rto", "max_rto"),
    (
        "receive buffer < mss",
        _set("tcp", "receive_buffer", value="100 B"),
        "tcp.receive_buffer",
        "MSS",
    ),
    (
        "delayed ack 1 s",
        _set("tcp", "delayed_ack_timeout", value="1 s"),
        "tcp.delayed_ack_timeout",
        "500 ms",
    ),
    (
        "dupack threshold 0",
        _set("tcp", "dupack_threshold", value=0),
        "tcp.dupack_threshold",
        "between",
    ),
    ("boolean as text", _set("tcp", "delayed_ack", value="yes"), "tcp.delayed_ack", "must be"),
    ("rate cap zero", _set("tcp", "rate_cap", value=0), "tcp.rate_cap", "> 0"),
    ("unknown profile", _set("tcp", "profile", value="bsd"), "tcp.profile", "linux"),
    ("unknown RTO rule", _set("tcp", "rto_rule", value="bsd"), "tcp.rto_rule", "rfc6298"),
    ("unknown window rules", _set("tcp", "cc_rules", value="bsd"), "tcp.cc_rules", "linux"),
    ("quick ACKs negative", _set("tcp", "quickack", value=-1), "tcp.quickack", "between"),
    ("RACK without SACK", _set("tcp", "rack", value=True), "tcp.rack", "sack"),
    ("PRR without SACK", _set("tcp", "prr", value=True), "tcp.prr", "sack"),
    (
        "TLP without RACK",
        _update("tcp", recovery="sack", tlp=True),
        "tcp.tlp",
        "rack",
    ),
    ("BBR without SACK", _set("tcp", "cc", value="bbr"), "tcp.recovery", "sack"),
    (
        "BBR unpaced",
        _update("tcp", recovery="sack", cc="bbr", pacing=False),
        "tcp.pacing",
        "pacing rate",
    ),
    (
        "BBR gain below 1",
        _update("tcp", recovery="sack", cc={"kind": "bbr", "high_gain": 0.5}),
        "tcp.cc.high_gain",
        "above 1",
    ),
    (
        "BBRv3 with RFC 3168 ECN",
        _update("tcp", recovery="sack", cc="bbr3", ecn=True),
        "tcp.ecn",
        'needs "dctcp" or "accecn" feedback',
    ),
    (
        "BBRv3 ECN parameter without ECN",
        _update("tcp", recovery="sack", cc={"kind": "bbr3", "ecn_thresh": 0.4}),
        "tcp.cc.ecn_thresh",
        "needs ECN on",
    ),
    (
        "BBRv3 beta above 1",
        _update("tcp", recovery="sack", cc={"kind": "bbr3", "beta": 1.5}),
        "tcp.cc.beta",
        "at most 1",
    ),
    (
        "send buffer under a segment",
        _set("tcp", "send_buffer", value="1 KB"),
        "tcp.send_buffer",
        "at least one segment",
    ),
    # a number without a unit: only 0 is unambiguous
    (
        "delay without a unit",
        _set(*BN, "delay", value=270),
        "topology.bottleneck.delay",
        '270 has no unit; write "270 ms" or "270 s"',
    ),
    (
        "rate without a unit",
        _set(*BN, "rate", value=20),
        "topology.bottleneck.rate",
        '20 has no unit; write "20 Mbps" or "20 kbps"',
    ),
    (
        "rate in bit/s without a unit",
        _set(*BN, "rate", value=10e6),
        "topology.bottleneck.rate",
        '10000000 has no unit; write "10 Mbps" or "10000000 bps"',
    ),
    (
        "size without a unit",
        _set(*T0, "size", value=1500),
        "traffic[0].size",
        '1500 has no unit; write "1500 B" or "1.5 kB"',
    ),
    (
        "buffer bytes without a unit",
        _set(*BN, "buffer", value={"bytes": 64}),
        "topology.bottleneck.buffer.bytes",
        '64 has no unit; write "64 B" or "64 KiB"',
    ),
    (
        "duration without a unit",
        _set("simulation", "duration", value=60),
        "simulation.duration",
        '60 has no unit; write "60 ms" or "60 s"',
    ),
    (
        "fraction without a unit",
        _set("simulation", "sample_interval", value=0.1),
        "simulation.sample_interval",
        '0.1 has no unit; write "0.1 ms" or "0.1 s"',
    ),
    (
        "text without a unit",
        _set(*BN, "delay", value="270"),
        "topology.bottleneck.delay",
        '270 has no unit; write "270 ms" or "270 s"',
    ),
    (
        "negative without a unit",
        _set(*BN, "delay", value=-5),
        "topology.bottleneck.delay",
        "-5 has no unit",
    ),
    (
        "per-flow delay without a unit",
        _set(*AC, "delay", value=["1 ms", 5]),
        "topology.access.delay[1]",
        "5 has no unit",
    ),
    (
        "per-packet delay without a unit",
        _set(*BN, "delay", value={"uniform": ["300 ms", 400]}),
        "topology.bottleneck.delay.uniform[1]",
        '400 has no unit; write "400 ms"',
    ),
    (
        "start without a unit",
        _set(*T0, "start", value={"uniform": [0, 1]}),
        "traffic[0].start.uniform[1]",
        "1 has no unit",
    ),
    ("tcp time without a unit", _set("tcp", "min_rto", value=1), "tcp.min_rto", "1 has no unit"),
    (
        "override time without a unit",
        _set(*T0, "tcp", value={"rate_cap": 5}),
        "traffic[0].tcp.rate_cap",
        '5 has no unit; write "5 Mbps"',
    ),
    (
        "aqm time without a unit",
        _set("aqm", value=[{"kind": "codel", "at": "bottleneck", "target": 5}]),
        "aqm[0].target",
        '5 has no unit; write "5 ms" or "5 s"',
    ),
    (
        "aqm rate without a unit",
        _set("aqm", value=[{"kind": "gkvq", "at": "bottleneck", "capacity": 9e6}]),
        "aqm[0].capacity",
        '9000000 has no unit; write "9 Mbps" or "9000000 bps"',
    ),
]


@pytest.mark.parametrize(
    ("edit", "path", "word"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_scenario(edit: Edit, path: str, word: str) -> None:
    d = tiny_dict()
    edit(d)
    text = to_toml(d)
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(text)
    err = e.value
    assert err.path == path, str(err)
    assert word in err.rule, str(err)
    assert str(err) == f"{path}: {err.rule}"
    _check_no_rust_types(err)
    # Building a run straight from the text reports the same error.
    with pytest.raises(satqm.ConfigError) as e2:
        _core.Simulation(text)
    assert e2.value.path == path


@pytest.mark.parametrize(
    "text",
    [
        "[simulation\nduration = 1",
        "name = 'a'\nname = 'b'\n",
        "x = ",
        "[simulation]\nduration = 1 s\n",
        '[simulation]\nduration = "1 s\n',
        "\x00",
    ],
    ids=["unclosed table", "duplicate key", "no value", "bare unit", "unclosed string", "NUL"],
)
def test_invalid_toml(text: str) -> None:
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(text)
    assert e.value.path == ""
    assert str(e.value).startswith("invalid TOML")


def test_empty_text_names_first_missing_section() -> None:
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml("")
    assert e.value.path == "simulation"


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"seed": -1}, "simulation.seed"),
        ({"seed": 2**63}, "simulation.seed"),
        ({"seed": True}, "simulation.seed"),
        ({"seed": "3"}, "simulation.seed"),
        ({"duration": 0}, "simulation.duration"),
        ({"duration": -1.0}, "simulation.duration"),
        ({"duration": math.nan}, "simulation.duration"),
        ({"duration": math.inf}, "simulation.duration"),
        ({"duration": 1e300}, "simulation.duration"),
        ({"duration": "20"}, "simulation.duration"),
    ],
)
def test_bad_overrides(kwargs: dict, path: str) -> None:
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(TINY, **kwargs)
    assert e.value.path == path
    with pytest.raises(satqm.ConfigError):
        satqm.run(satqm.Scenario.from_toml(TINY), **kwargs)


RED_TAIL = {
    "kind": "red_tail",
    "at": "bottleneck",
    "min_th1": "2 kB",
    "max_th1": "30 kB",
    "min_th2": "20 kB",
    "max_th2": "80 kB",
}


@pytest.mark.parametrize(
    "edit",
    [
        _set(*BN, "delay", value=0),
        _set(*AC, "delay", value=[0, "1 ms"]),
        _set("simulation", "warmup", value=0),
        _set("simulation", "warmup", value=0.0),
        _set("simulation", "warmup", value="0"),
        _set(*T0, "start", value={"uniform": [0, "0.5 s"]}),
        _set("aqm", value=[{**RED_TAIL, "c1_min": 0}]),
    ],
    ids=["delay", "delay list", "warmup", "warmup float", "warmup text", "start", "aqm rate"],
)
def test_zero_needs_no_unit(edit: Edit) -> None:
    d = tiny_dict()
    edit(d)
    satqm.Scenario.from_toml(to_toml(d))


def _check(path: Any, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "satqm.cli", "check", str(path), *flags],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_check_refuses_a_number_without_a_unit_and_gives_the_fix(tmp_path) -> None:
    d = tiny_dict()
    d["topology"]["bottleneck"]["delay"] = 270
    f = tmp_path / "bare.toml"
    f.write_text(to_toml(d))
    r = _check(f)
    assert r.returncode == 2, r.stdout
    assert f'{f}: topology.bottleneck.delay: 270 has no unit; write "270 ms" or "270 s"' in r.stderr
    assert "Traceback" not in r.stderr
    d["topology"]["bottleneck"]["delay"] = "270 ms"
    f.write_text(to_toml(d))
    assert _check(f).returncode == 0


def test_duration_overrides_are_seconds_by_name(tmp_path) -> None:
    f = tmp_path / "tiny.toml"
    f.write_text(TINY)
    r = _check(f, "--duration", "30")
    assert r.returncode == 0, r.stderr
    assert "OK tiny: 30 s" in r.stdout
    assert satqm.Scenario.from_toml(TINY, duration=2).duration == 2.0
    assert satqm.Scenario.from_toml(TINY).with_overrides(duration=1.5).duration == 1.5
    # --max-memory is a size: it takes a unit, as the file's key does.
    r = _check(f, "--max-memory", "2000000000")
    assert r.returncode == 2
    assert '--max-memory 2000000000: 2000000000 has no unit; write "2000000000 B"' in r.stderr


def test_every_case_leaves_the_base_valid() -> None:
    # guards the table above: TINY itself and its TOML round trip are valid
    satqm.Scenario.from_toml(TINY)
    satqm.Scenario.from_toml(to_toml(tiny_dict()))


def test_huge_pair_count_does_not_abort() -> None:
    """`topology.pairs` up to 100,000 passes validation; building such a
    network must either work or raise, not abort the interpreter.

    Routing tables once were dense (nodes x nodes: 160 GB at 100,000 pairs,
    and Rust aborted the process); now only routers keep a row. Run in a
    child process with a 2 GB address-space limit so that a regression
    cannot take the test session down.
    """
    pytest.importorskip("resource")
    code = textwrap.dedent(
        """
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        import satqm
        text = sys.stdin.read()
        try:
            sim = satqm.Simulation(satqm.Scenario.from_toml(text), duration=0.001)
            sim.run()
        except (satqm.ConfigError, MemoryError) as e:
            print("raised", type(e).__name__, e)
        print("ok")
        """
    )
    d = tiny_dict()
    d["topology"]["pairs"] = 100_000
    r = subprocess.run(
        [sys.executable, "-c", code],
        input=to_toml(d),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("ok")


def _check_no_rust_types(e: satqm.ConfigError) -> None:
    assert not RUST_TYPES.search(str(e)), f"the message names a Rust type: {e}"


def test_a_file_that_is_not_utf8_is_a_config_error(tmp_path):
    p = tmp_path / "latin1.toml"
    p.write_bytes('name = "caf\xe9"\n'.encode("latin-1"))
    with pytest.raises(satqm.ConfigError) as e:
        satqm.load(p)
    assert "not UTF-8" in str(e.value)
