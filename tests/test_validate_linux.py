"""``satqm validate linux``: the scenarios, the checks and, where root and
/dev/net/tun are present, the quick set end to end against the machine's
kernel (real time: about three minutes)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import satqm
from satqm.emulation import missing_requirement
from satqm.validation import linux as L

QUICK = L.scenarios(True)
FULL = L.scenarios(False)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "satqm", *args], capture_output=True, text=True, timeout=900
    )


RUN = QUICK + [d for d in FULL if not d["skip"]]


@pytest.mark.parametrize("desc", RUN, ids=lambda d: d["name"])
def test_both_sides_of_a_scenario_are_one_network(desc):
    sim = satqm.Scenario.from_toml(L.scenario_toml(desc, emulate=False))
    emu = satqm.Scenario.from_toml(L.scenario_toml(desc, emulate=True))
    assert sim.name == emu.name == desc["name"]
    a = L.scenario_toml(desc, emulate=False).split("[tcp]")[0].split("\n")
    b = L.scenario_toml(desc, emulate=True).split("[emulation]")[0].split("\n")
    # The same topology and AQM lines; the simulated side traces flow 0's window.
    same = [x for x in a if not x.startswith(("#", "trace_cwnd"))]
    assert same == [x for x in b if not x.startswith("#")]
    assert f'cc = "{desc["cc"]}"' in L.scenario_toml(desc, emulate=False)
    assert 'profile = "linux"' in L.scenario_toml(desc, emulate=False)


def test_the_quick_set_fits_in_five_minutes_and_the_full_set_has_bbr():
    assert sum(d["duration_s"] * d["linux_runs"] for d in QUICK) <= 200
    assert any(L.checked(d) for d in QUICK)
    names = [d["name"] for d in FULL]
    assert len(names) == len(set(names))
    bbr = [d for d in FULL if d["cc"] == "bbr"]
    assert bbr and not any(d["skip"] for d in bbr)
    assert not any(L.checked(d) for d in bbr), "the issue's bounds are for reno and cubic"
    assert max(d["flows"] for d in FULL) == 50
    assert {d["link"] for d in FULL} == {"geo", "terr"}
    # Erasures are replicated on the kernel's side too.
    assert all(d["linux_runs"] > 1 for d in QUICK + FULL if d["bottleneck"]["loss"])


def test_the_docs_give_the_runs_the_code_makes():
    import re

    doc = (Path(__file__).resolve().parents[1] / "docs" / "validation.md").read_text("utf-8")
    real = sum(d["duration_s"] * d["linux_runs"] for d in QUICK)
    line = re.search(r"^sudo satqm validate linux --quick +# .*$", doc, re.M)
    assert line is not None
    assert f"{len(QUICK)} scenarios, {real:g} s of real time" in line.group(0)
    run = [d for d in FULL if not d["skip"]]
    line = re.search(r"^sudo satqm validate linux +# .*$", doc, re.M)
    assert line is not None
    assert f"the full set: {len(run)} scenarios," in line.group(0)
    minutes = sum(d["duration_s"] * d["linux_runs"] for d in run) / 60
    assert f"{minutes:g}\nminutes of real time" in doc or f"{minutes:g} minutes" in doc


def test_seeds_move_the_simulated_starts_by_at_most_20_ms():
    d = QUICK[1]
    starts = [
        [
            float(line.split('"')[1].split()[0])
            for line in L.scenario_toml(d, emulate=False, seed=s).splitlines()
            if line.startswith("start = ")
        ]
        for s in (1, 2, 3)
    ]
    assert starts[0] == d["starts_s"]
    for other in starts[1:]:
        assert other != starts[0]
        assert max(abs(x - y) for x, y in zip(other, starts[0])) <= 0.020 + 1e-9


def _row(satqm_vals: list[float], linux: float, aqm: str = "droptail") -> dict:
    name = f"terr-{aqm}-n1-reno"
    d = L.make(name, link="terr", flows=1, aqm=aqm)
    row = {"group": name, "desc": d, "runs": len(satqm_vals)}
    for k in L.BOUNDS:
        row[f"{k}.satqm"] = sum(satqm_vals) / len(satqm_vals)
        row[f"{k}.satqm.min"] = min(satqm_vals)
        row[f"{k}.satqm.max"] = max(satqm_vals)
        row[f"{k}.linux"] = row[f"{k}.linux.min"] = row[f"{k}.linux.max"] = linux
        row[f"{k}.rel"] = satqm.validation.compare.rel_diff(row[f"{k}.satqm"], linux)
    return row


def test_the_check_of_a_row():
    assert L.check_row(_row([1.0, 1.01, 0.99], 1.0)) == "ok"
    assert L.check_row(_row([1.2, 0.9, 1.3], 1.0)) == "spread"
    assert L.check_row(_row([1.2, 1.25, 1.3], 1.0)) == "FAIL"
    assert L.check_row(_row([1.2], 1.0, "codel")) == "-"
    assert L.failures([_row([1.2, 1.25, 1.3], 1.0)])
    # Several real runs: the two ranges overlap.
    row = _row([1.2, 1.25, 1.3], 1.0)
    for k in L.BOUNDS:
        row[f"{k}.linux.max"] = 1.21
    assert L.check_row(row) == "spread"


def test_the_kernel_counters_and_satqm_s_events():
    text = (
        "TcpExt: SyncookiesSent TCPSackRecovery TCPLossProbes TCPFullUndo TCPDSACKUndo\n"
        "TcpExt: 0 339 2 1 3\n"
        "IpExt: InNoRoutes InOctets\n"
        "IpExt: 0 123456\n"
    )
    c = L.parse_netstat(text)
    assert c == {
        "SyncookiesSent": 0,
        "TCPSackRecovery": 339,
        "TCPLossProbes": 2,
        "TCPFullUndo": 1,
        "TCPDSACKUndo": 3,
    }
    k = L._kernel_events(c)
    assert k["recoveries"] == 339 and k["loss probes"] == 2
    assert k["undone reductions"] == 4 and k["timeouts"] == 0
    # satqm's side: its flows table's counts; what it does not model, None.
    import pandas as pd

    fl = pd.DataFrame(
        {"fast_retransmits": [60, 70], "loss_probes": [1, 0], "timeouts": [0, 2], "undos": [3, 0]}
    )
    e = L._satqm_events(fl)
    assert (e["recoveries"], e["loss probes"], e["timeouts"]) == (130, 1, 2)
    assert e["undone reductions"] == 3
    assert e["spurious timeouts (F-RTO)"] is None
    row = {"events": {label: (e[label], k[label]) for label in L.EVENTS}}
    table = L.events_table(row)
    assert "| recoveries | 130.0 | 339.0 |" in table
    assert "| undone reductions | 3.0 | 4.0 |" in table
    assert "| spurious timeouts (F-RTO) | not modelled | 0.0 |" in table


def test_the_counters_are_those_each_sender_read_at_the_end_of_the_window(tmp_path):
    # The kernel goes on counting after the window (its timers fire once
    # the emulation stops carrying packets); the sender's own reading at
    # its last sample is what the run counted.
    def log(path: Path, recoveries: int, timeouts: int) -> dict:
        text = (
            "TcpExt: TCPSackRecovery TCPTimeouts\n"
            f"TcpExt: {recoveries} {timeouts}\n"
            "IpExt: InOctets\nIpExt: 1\n"
        )
        lines = [{"connecting": 2.0}, {"t": 2.1, "snd_cwnd": 10}, {"done": 4.0, "netstat": text}]
        path.write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"t": 4.1, "snd')
        return L.read_samples(path)

    a, b = log(tmp_path / "a.jsonl", 5, 0), log(tmp_path / "b.jsonl", 7, 1)
    assert len(a["samples"]) == 1
    assert a["netstat"] == {"TCPSackRecovery": 5, "TCPTimeouts": 0}
    c = L.sum_counters([a, b], "x")
    assert c == {"TCPSackRecovery": 12, "TCPTimeouts": 1}
    assert L._kernel_events(c)["timeouts"] == 1
    (tmp_path / "c.jsonl").write_text(json.dumps({"t": 2.1}) + "\n")
    with pytest.raises(RuntimeError, match="pair 1 did not record its counters"):
        L.sum_counters([a, L.read_samples(tmp_path / "c.jsonl")], "x")


def test_the_programs_compile_and_bbr_rows_plot_the_bandwidth_estimate(tmp_path):
    compile(L.SENDER, "sender", "exec")
    compile(L.RECEIVER, "receiver", "exec")
    d = next(x for x in FULL if x["cc"] == "bbr")
    d = dict(d, flows=2, duration_s=4.0, warmup_s=1.0)
    t = [0.5 * k for k in range(9)]

    def side(bw: bool):
        s = {"t": t, "queue": [1.0] * 9, "cwnd_t": t, "cwnd_pkts": [10.0] * 9}
        if bw:
            s.update(bw_t=t, bw_mbps=[5.0] * 9)
        return {"series": s, "figures": {"goodput_flows_mbps": [1.0, 2.0]}}

    sizes = {}
    for bw in (True, False):
        r = {"desc": d, "linux": [side(bw)], "satqm": [side(bw)]}
        L.plot(r, tmp_path / f"{bw}.png")
        sizes[bw] = (tmp_path / f"{bw}.png").stat().st_size
    # The bandwidth panel makes the figure taller.
    assert sizes[True] > sizes[False] > 10_000


def test_the_kernels_tick_rate_comes_from_its_build_configuration(tmp_path):
    import gzip

    plain = tmp_path / "config-6.18"
    plain.write_text("CONFIG_NO_HZ=y\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n")
    packed = tmp_path / "config.gz"
    packed.write_bytes(gzip.compress(b"# CONFIG_HZ_250 is not set\nCONFIG_HZ=1000\n"))
    assert L.config_hz((packed, plain)) == "1000"
    assert L.config_hz((tmp_path / "absent.gz", plain)) == "250"
    assert L.config_hz((tmp_path / "absent",)) == "unknown"
    broken = tmp_path / "broken.gz"
    broken.write_bytes(b"not gzip")
    assert L.config_hz((broken,)) == "unknown"


def test_cli_list_and_bad_input(tmp_path):
    r = _cli("validate", "linux", "--quick", "--list")
    assert r.returncode == 0, r.stderr
    assert "geo-droptail-n1-cubic" in r.stdout
    r = _cli("validate", "linux", "--list", "--scenarios", "geo-red-n10-bbr")
    assert "geo-red-n10-bbr" in r.stdout and "skipped" not in r.stdout
    r = _cli("validate", "linux", "--scenarios", "nope", "--list")
    assert r.returncode == 2
    assert "--scenarios" in r.stderr and "Traceback" not in r.stderr
    (tmp_path / "f").write_text("")
    if missing_requirement() is None:
        r = _cli("validate", "linux", "--quick", "--out", str(tmp_path / "f"))
        assert r.returncode == 2
        assert "--out" in r.stderr and "Traceback" not in r.stderr


# ----- against the kernel -------------------------------------------------------

MISSING = missing_requirement()


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    if MISSING:
        pytest.skip(MISSING)
    out = tmp_path_factory.mktemp("validate-linux")
    r = _cli("validate", "linux", "--quick", "--quiet", "--out", str(out))
    assert r.returncode == 0, r.stderr
    with open(out / "table.csv") as f:
        checks = {row["scenario"]: row["check"] for row in csv.DictReader(f)}
    return out, checks


# Differences whose cause is not found yet (docs/validation.md lists them):
# the row may pass or fail from run to run, and a failure is reported, not
# hidden.
OPEN = {
    "terr-erasure-0.01-n5-reno": "the mean queue of a 20-s window, about 2.5 packets at 80 % "
    "load, varies by a quarter from run to run on both sides, so two kernel runs and five "
    "seeds can fall apart; over 120-s windows satqm's is 9 % below the kernel's "
    "(docs/validation.md, L4)",
}


@pytest.mark.slow
@pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
def test_quick_report_is_written(quick_report):
    out, checks = quick_report
    text = (out / "table.md").read_text()
    assert set(checks) == {d["name"] for d in QUICK}
    for d in QUICK:
        assert (out / "plots" / f"{d['name']}.png").stat().st_size > 10_000
        assert f"## {d['name']}" in text
    assert "net.ipv4.tcp_ecn" in text and "net.ipv4.tcp_wmem" in text
    assert "| `CONFIG_HZ` |" in text
    # The loss events beside the kernel's counters, one table per scenario;
    # the Reno rows' flows recover from losses on both sides.
    assert text.count("| loss events (whole run) |") == len(QUICK)
    runs = json.loads((out / "runs" / "terr-red-n10-reno" / "runs.json").read_text())
    assert runs["linux"][0]["counters"]["TCPSackRecovery"] > 0
    assert runs["satqm"][0]["figures"]["events"]["recoveries"] > 0


@pytest.mark.slow
@pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
@pytest.mark.parametrize("name", [d["name"] for d in QUICK if L.checked(d)])
def test_quick_set_within_bounds(quick_report, name):
    _out, checks = quick_report
    verdict = checks[name]
    if verdict == "explained":
        pytest.skip(f"{name}: explained: {L.EXPLAINED[name]}")
    if verdict == "FAIL" and name in OPEN:
        pytest.xfail(f"{name}: {OPEN[name]}")
    assert verdict in ("ok", "spread"), f"{name}: {verdict}; see the report's table.md"
