"""Cross-validation against ns-3 (`satqm validate ns3`).

The first tests need no ns-3: the scenario generator writes valid satqm
scenarios and ns-3 argument lists that carry the same parameters, and the
command fails cleanly without ns-3. The last ones run the quick set's
checked scenarios (DropTail, RED, the congestion-control and FQ-CoDel
ones) in both simulators and check the bounds of docs/validation.md;
they are skipped when ns-3 (the `ns3` wheel and a C++ compiler) is not
installed, or with SATQM_SKIP_NS3=1.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import satqm
from satqm.validation import compare
from satqm.validation import scenarios as S
from satqm.validation.ns3.run import PARAMS, command_line
from satqm.validation.ns3.run import summary as ns3_summary

ALL = S.scenarios(quick=True) + S.scenarios(quick=False)


def _args(desc):
    return command_line(S.ns3_params(desc), "out.json")[:-1]


@pytest.mark.parametrize("desc", ALL, ids=lambda d: d["name"])
def test_generated_scenarios_match(desc):
    text = S.satqm_toml(desc)
    sc = satqm.Scenario.from_toml(text)  # valid for satqm
    assert sc.flows == desc["flows"]
    assert sc.duration == desc["duration_s"]
    # ns-3 arguments: every name is a program parameter
    params = S.ns3_params(desc)
    assert set(params) <= set(PARAMS)
    # both sides read back to the same parameters
    assert S.params_from_toml(text) == S.params_from_ns3(_args(desc))


def test_ns3_semantics_compensated():
    d = S.make("x", flows=2, aqm="red", recovery="sack")
    p = S.ns3_params(d)
    assert p["bufferPackets"] + p["deviceQueuePackets"] == d["bottleneck"]["buffer_packets"]
    assert p["wait"] is False  # satqm spreads drops with p/(1 - count p)
    assert p["limitedTransmit"] is False and p["timestamps"] is False
    assert p["recovery"] == "classic" and p["tcp"] == "NewReno" and p["sack"] is True
    assert p["meanPktSize"] == 1500 and d["aqm"]["mean_packet_size"] == 1500
    pie = S.ns3_params(S.make("p", flows=1, aqm="pie"))
    assert pie["pieDqRate"] is False
    assert "ns3::PieQueueDisc::A=0.125" in pie["attrs"]


def test_cc_scenarios_set_ns3_as_satqm():
    """CUBIC, BBR and DCTCP run as ns-3's TcpCubic, TcpBbr (SACK, pacing)
    and TcpDctcp (ECN) behind a step marker that marks at the same queue."""
    names: dict = {}
    for d in S.scenarios(quick=False):
        names.setdefault(d["group"], d)
    cubic = S.ns3_params(names["geo-droptail-n5-cubic"])
    assert cubic["tcp"] == "Cubic" and cubic["sack"] and not cubic["pacing"]
    bbr = names["terr-red-n1-bbr"]
    p = S.ns3_params(bbr)
    assert p["tcp"] == "Bbr" and p["sack"] and p["pacing"] and not p["ecn"]
    assert "pacing = true" in S.satqm_toml(bbr)
    assert "redUseEcn" not in p  # RED drops
    dctcp = names["terr-step-n5-dctcp"]
    p = S.ns3_params(dctcp)
    k = S.LINKS["terr"]["step_k"]
    assert p["tcp"] == "Dctcp" and p["ecn"]
    # satqm marks at K waiting packets; ns-3's queue disc then holds K - 1
    assert p["minTh"] == p["maxTh"] == k - 1 and p["qW"] == 1.0 and p["maxP"] == 1.0
    assert p["redUseEcn"] and not p["redHardDrop"] and not p["gentle"]
    assert dctcp["aqm"]["min_th"] == k - 1 and dctcp["aqm"]["max_th"] == k
    text = S.satqm_toml(dctcp)
    assert 'ecn = "dctcp"' in text and 'mode = "mark"' in text and 'cc_rules = "linux"' in text
    # ns-3 acknowledges the first data segment at once; satqm's quick ACK does
    assert "quickack = 1" in text and "quickack" not in S.satqm_toml(S.make("r", flows=1))
    assert names["geo-step-n1-dctcp"]["bottleneck"]["buffer_packets"] == 500
    with pytest.raises(ValueError, match="BBR needs SACK"):
        S.make("x", flows=1, cc="bbr")
    # the multi-flow CUBIC and BBR scenarios run replicates, the others once
    groups = [d["group"] for d in S.scenarios(quick=False)]
    assert groups.count("geo-red-n5-bbr") == S.CC_REPLICATES
    assert groups.count("geo-red-n1-bbr") == groups.count("terr-step-n5-dctcp") == 1


def test_new_ns3_parameters_leave_the_other_scenarios_unchanged():
    """The program's new parameters default to ns-3's own behaviour, and the
    NewReno scenarios pass them off."""
    assert PARAMS["pacing"][1] is False and PARAMS["ecn"][1] is False
    assert PARAMS["redUseEcn"][1] is False and PARAMS["redHardDrop"][1] is True
    src = (Path(compare.__file__).parent / "ns3" / "dumbbell.cc").read_text()
    for line in ("bool pacing = false;", "bool ecn = false;", "bool redUseEcn = false;"):
        assert line in src
    assert "bool redHardDrop = true;" in src
    for d in S.scenarios(quick=False):
        if d["tcp"]["cc"] == "reno" and not d["aqm"]["kind"].startswith("fq_"):
            p = S.ns3_params(d)
            assert p["tcp"] == "NewReno" and not p["pacing"] and not p["ecn"]
            assert "redUseEcn" not in p


def test_fq_codel_scenarios_set_ns3_as_satqm():
    """FQ-CoDel runs as ns-3's FqCoDelQueueDisc with the same flows,
    quantum, CoDel, drop batch, ECN setting and (one packet fewer, for the
    device queue) limit; the other scenarios leave its parameters alone."""
    names: dict = {}
    for d in S.scenarios(quick=False):
        names.setdefault(d["group"], d)
    d = names["fq-terr-n5"]
    p = S.ns3_params(d)
    assert p["queueDisc"] == "fq_codel" and p["tcp"] == "NewReno" and p["sack"]
    fq = (p["fqFlows"], p["fqQuantum"], p["fqDropBatch"], p["fqMinBytes"])
    assert fq == (1024, 1514, 64, 1500)
    assert p["fqUseEcn"] and not p["ecn"]
    assert (p["codelTarget"], p["codelInterval"]) == (0.005, 0.100)
    assert p["bufferPackets"] == S.LINKS["terr"]["buffer_packets"] - 1
    text = S.satqm_toml(d)
    assert 'kind = "fq_codel"' in text and 'mode = "mark"' in text and "quantum = 1514" in text
    ecn = names["fq-geo-n5-ecn"]
    assert S.ns3_params(ecn)["ecn"] and "ecn = true" in S.satqm_toml(ecn)
    assert names["fq-terr-n5-rtt"]["access"]["delays_s"] == S.hetero_delays(5)
    groups = [d["group"] for d in S.scenarios(quick=False)]
    assert groups.count("fq-geo-n5") == S.FQ_REPLICATES["geo"] == 10
    assert groups.count("fq-terr-n5") == 3 and groups.count("fq-geo-n1") == 1
    assert compare.bounds_for("fq-terr-n5-rtt") == compare.FQ_BOUNDS
    with pytest.raises(ValueError, match="variant"):
        S.fq_scenario("geo", 1, "x")
    # the program's defaults are ns-3's own; other scenarios pass none of them
    assert PARAMS["fqQuantum"][1] == 0 and PARAMS["fqUseEcn"][1] is True
    src = (Path(compare.__file__).parent / "ns3" / "dumbbell.cc").read_text()
    assert "uint32_t fqQuantum = 0;" in src and "bool fqUseEcn = true;" in src
    for d in S.scenarios(quick=False):
        if not d["aqm"]["kind"].startswith("fq_"):
            assert not any(k.startswith("fq") for k in S.ns3_params(d))


def test_fq_pie_and_fq_cobalt_scenarios_set_ns3_as_satqm():
    """FQ-PIE runs as ns-3's FqPieQueueDisc (satqm's PIE parameters, drops
    from the fattest queue), FQ-COBALT as FqCobaltQueueDisc; ten runs of
    each GEO group and three of each terrestrial one, under the FQ-CoDel
    bounds."""
    names: dict = {}
    for d in S.scenarios(quick=False):
        names.setdefault(d["group"], d)
    pie = S.ns3_params(names["fqpie-geo-n5"])
    assert pie["queueDisc"] == "fq_pie" and pie["fqDropBatch"] == 64 and pie["fqUseEcn"]
    assert (pie["pieTarget"], pie["pieTupdate"], pie["pieMaxBurst"]) == (0.015, 0.015, 0.15)
    assert "ns3::FqPieQueueDisc::A=0.125" in pie["attrs"] and "codelTarget" not in pie
    text = S.satqm_toml(names["fqpie-geo-n5"])
    assert 'kind = "fq_pie"' in text and 'overflow = "fattest"' in text
    cobalt = S.ns3_params(names["fqcobalt-terr-n5-ecn"])
    assert cobalt["queueDisc"] == "fq_cobalt" and cobalt["ecn"] and "pieTarget" not in cobalt
    assert (cobalt["codelTarget"], cobalt["codelInterval"]) == (0.005, 0.100)
    groups = [d["group"] for d in S.scenarios(quick=False)]
    for aqm, link, n, variant in S.FQ_OTHER_SCENARIOS:
        g = S.fq_name(link, n, variant, aqm)
        assert groups.count(g) == S.FQ_REPLICATES[link]
        assert compare.bounds_for(g) == compare.FQ_BOUNDS
    bad = dict(names["fqpie-geo-n5"], aqm=dict(S.AQMS["fq_pie"], overflow="tail"))
    with pytest.raises(ValueError, match="fattest"):
        S.ns3_params(bad)
    src = (Path(compare.__file__).parent / "ns3" / "dumbbell.cc").read_text()
    assert '"ns3::FqPieQueueDisc"' in src and '"ns3::FqCobaltQueueDisc"' in src


def test_a_changed_parameter_shows_on_one_side_only():
    d = S.make("x", flows=3, aqm="codel")
    text = S.satqm_toml(d)
    d2 = S.make("x", flows=3, aqm="codel")
    d2["aqm"]["target_s"] = 0.010
    assert S.params_from_toml(text) != S.params_from_ns3(_args(d2))


def test_names_unique_and_select():
    for quick in (True, False):
        names = [d["name"] for d in S.scenarios(quick)]
        assert len(names) == len(set(names))
    q = S.scenarios(True)
    assert [d["group"] for d in S.select(q, ["droptail-n3-sack"])] == ["droptail-n3-sack"] * 3
    assert all(d["name"].startswith("red") for d in S.select(q, ["red*"]))
    with pytest.raises(ValueError, match="no scenario"):
        S.select(q, ["nope"])


def test_replicates_share_starts_across_simulators():
    for d in S.select(S.scenarios(True), ["droptail-n3"]):
        p = S.ns3_params(d)
        assert p["startTimes"] == d["starts_s"]
        assert S.params_from_toml(S.satqm_toml(d))["starts_s"] == d["starts_s"]
    starts = {tuple(d["starts_s"]) for d in S.select(S.scenarios(True), ["droptail-n3"])}
    assert len(starts) == 3


def test_rel_diff_and_check():
    assert compare.rel_diff(1.05, 1.0) == pytest.approx(0.05)
    assert compare.rel_diff(1.0, 0.0) != compare.rel_diff(1.0, 0.0)  # NaN
    assert compare.checked("droptail-n10-sack") and compare.checked("red-n3")
    assert not compare.checked("pie-n10-sack") and not compare.checked("hetero-red-n10")
    assert compare.bounds_for("geo-droptail-n5-cubic") == compare.CC_BOUNDS
    assert compare.bounds_for("red-n3-sack") == compare.BOUNDS


def test_jain_is_undefined_when_nothing_was_delivered():
    # Both sides: the comparison's own figure, and the ns-3 program's JSON
    # (which writes NaN as null) as its summary prints it.
    assert math.isnan(compare._flow_figures([0.0, 0.0, 0.0])["jain"])
    res = {
        "flows": [],
        "aggregate": {"goodput_bps": 0.0, "jain_index": None},
        "bottleneck": dict.fromkeys(
            ("utilization", "utilization_ip", "queue_mean_pkts", "queue_std_pkts"), 0.0
        )
        | dict.fromkeys(("tx_packets", "drops", "marks", "error_model_drops", "access_drops"), 0),
        "params": {},
        "wall_clock_s": 0.0,
    }
    assert "Jain n/a" in ns3_summary(res)
    src = (Path(compare.__file__).parent / "ns3" / "dumbbell.cc").read_text()
    assert 'sumG2 > 0 ? sumG * sumG / (nFlows * sumG2) : std::nan("")' in src


def _cli(*args, env=None, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "satqm.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def test_cli_without_ns3_says_how_to_install(tmp_path):
    env = dict(os.environ, SATQM_NS3_PREFIX=str(tmp_path / "no-ns3"))
    r = _cli("validate", "ns3", "--quick", "--out", str(tmp_path / "o"), env=env)
    assert r.returncode == 2, r.stderr
    assert "pip install 'satqm[ns3]'" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists()


def test_cli_list_and_bad_name(tmp_path):
    r = _cli("validate", "ns3", "--quick", "--list")
    assert r.returncode == 0, r.stderr
    assert "droptail-n10-sack" in r.stdout
    r = _cli("validate", "ns3", "--scenarios", "nope", "--list")
    assert r.returncode == 2
    assert "--scenarios" in r.stderr


def test_cli_device_queue_is_modelled_on_request(tmp_path):
    """Set 6 models ns-3's device queue by default, the others do not;
    ``--device-queue`` sets it for every scenario chosen, and is refused
    where there is no ns-3 device to model."""
    by_default = _cli("validate", "ns3", "--scenarios", "fq-geo-n1,red-n1", "--list")
    assert by_default.returncode == 0, by_default.stderr
    lines = dict(line.split(None, 1) for line in by_default.stdout.splitlines())
    assert "device queue" in lines["fq-geo-n1"] and "device queue" not in lines["red-n1/r0"]
    on = _cli("validate", "ns3", "--scenarios", "red-n1", "--device-queue", "1", "--list")
    assert on.returncode == 0 and "1-packet device queue" in on.stdout
    off = _cli("validate", "ns3", "--scenarios", "fq-geo-n1", "--device-queue", "0", "--list")
    assert off.returncode == 0 and "device queue" not in off.stdout
    toml = S.satqm_toml(S.fq_scenario("geo", 1))
    assert "buffer = 499\n" in toml and "device_queue = 1\n" in toml
    bad = _cli("validate", "linux", "--device-queue", "1", "--list")
    assert bad.returncode == 2 and "--device-queue" in bad.stderr
    assert _cli("validate", "ns3", "--device-queue", "2", "--list").returncode == 2


# ----- with ns-3 -------------------------------------------------------------------


def _ns3_missing() -> str | None:
    if os.environ.get("SATQM_SKIP_NS3"):
        return "SATQM_SKIP_NS3 is set"
    from satqm.validation.ns3 import build

    try:
        build.find_ns3()
    except build.Ns3NotFound:
        return "ns-3 is not installed (pip install 'satqm[ns3]'; see docs/validation.md)"
    try:
        build._cxx_version(build._cxx())
    except RuntimeError as e:
        return f"no C++ compiler for the ns-3 program: {e}"
    return None


NS3_MISSING = _ns3_missing()
CHECKED = sorted({d["group"] for d in S.scenarios(True) if compare.checked(d["group"])})


@pytest.fixture(scope="module")
def quick_rows():
    if NS3_MISSING:
        pytest.skip(NS3_MISSING)
    descs = [d for d in S.scenarios(True) if compare.checked(d["group"])]
    results = compare.run_pairs(descs, workers=2)
    return {r["group"]: r for r in compare.aggregate(results)}


@pytest.mark.skipif(NS3_MISSING is not None, reason=NS3_MISSING or "")
@pytest.mark.parametrize("group", CHECKED)
def test_quick_set_within_bounds(quick_rows, group):
    row = quick_rows[group]
    outside = [
        f"{k} {row[f'{k}.rel']:+.1%} (bound ±{lim:.0%})"
        for k, lim in compare.BOUNDS.items()
        if not abs(row[f"{k}.rel"]) <= lim
    ]
    verdict = compare.check_row(row)
    if verdict == "explained":
        pytest.skip(f"{group}: {', '.join(outside)}; explained: {compare.EXPLAINED[group]}")
    # "spread": outside a bound, but the replicates of each simulator overlap
    assert verdict in ("ok", "spread"), f"{group}: {', '.join(outside)}"
