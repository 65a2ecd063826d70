"""ATSP end to end through the Python API, on the shipped scenarios
(``scenarios/atsp/``): fairness after convergence, the queue at the PI's
setpoint, and erasures that cut Hybla's goodput but not ATSP's."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import satqm

SCEN = Path(__file__).resolve().parents[1] / "scenarios" / "atsp"


def _goodputs(res: satqm.Results, lo: float, hi: float) -> np.ndarray:
    """Each traced flow's goodput (bit/s) between two sample times."""
    cw = res.cwnd.pivot(index="time_s", columns="flow", values="delivered_bytes")
    return (cw.loc[hi] - cw.loc[lo]).to_numpy(float) * 8.0 / (hi - lo)


def _jain(x: np.ndarray) -> float:
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


def _with_loss(name: str, loss: float) -> satqm.Scenario:
    text = (SCEN / name).read_text(encoding="utf-8")
    return satqm.Scenario.from_toml(re.sub(r"(?m)^loss = 0\.0$", f"loss = {loss}", text))


def test_three_senders_started_in_turn_end_fair_with_the_queue_at_q_ref():
    res = satqm.run(satqm.load(SCEN / "solo.toml"))
    g = _goodputs(res, 90.0, 120.0)
    assert _jain(g) >= 0.99, g
    # The total excludes headers: at most 10 Mbit/s x 1,460 / 1,500.
    assert 0.95 * 9.733e6 < g.sum() <= 9.733e6 * 1.001
    q = res.link("bottleneck").queue_packets
    late = q[q.index > 90.0]
    assert abs(late.mean() - 300.0) < 50.0, late.mean()


def test_each_newcomer_gets_room():
    res = satqm.run(satqm.load(SCEN / "solo.toml", duration=60.0))
    # Before the third sender starts (40 s), the first two share fairly.
    g = _goodputs(res, 30.0, 40.0)
    assert g[2] == 0.0
    assert _jain(g[:2]) > 0.95, g
    assert g[1] > 0.3 * g.sum()


def test_a_cbr_flow_leaves_the_rest_to_atsp_shared_fairly():
    res = satqm.run(satqm.load(SCEN / "cbr.toml", duration=90.0))
    g = _goodputs(res, 60.0, 90.0)
    assert _jain(g) >= 0.99, g
    # At least what the CBR leaves (10 Mbit/s less its 4, less headers);
    # more, since the PI drops the CBR's packets (not ECN-capable) with
    # its marking probability.
    cbr = float(res.flows.goodput_bps[res.flows.kind == "cbr"].iloc[0])
    assert 0.95 * 6e6 * 1460 / 1500 < g.sum() < 9.733e6
    assert cbr < 4e6 * 1472 / 1500
    assert g.sum() + cbr * 1500 / 1472 * 1460 / 1500 > 0.95 * 9.733e6


def _total_goodput(sc: satqm.Scenario) -> float:
    f = satqm.run(sc.with_overrides(duration=100.0)).flows
    return float(f.goodput_bps.sum())


def test_erasures_cut_hyblas_goodput_but_not_atsps():
    atsp = [_total_goodput(_with_loss("compare-atsp.toml", p)) for p in (0.0, 1e-3)]
    hybla = [_total_goodput(_with_loss("compare-hybla.toml", p)) for p in (0.0, 1e-3)]
    atsp_fall = 1 - atsp[1] / atsp[0]
    hybla_fall = 1 - hybla[1] / hybla[0]
    assert atsp_fall < 0.05, atsp
    assert hybla_fall > atsp_fall, (atsp, hybla)
    assert hybla_fall > 0.05, hybla


@pytest.mark.slow
def test_reproduce_atsp_quick_writes_figures_claims_and_report(tmp_path):
    from satqm.experiments import atsp

    report = atsp.reproduce(tmp_path, quick=True, workers=2)
    for f in ("claims.md", "measures.json", "fig2_throughput.png", "figC_jain_queue.png"):
        assert (tmp_path / f).exists(), f
    claims = (tmp_path / "claims.md").read_text()
    rows = [r for r in claims.splitlines() if r.startswith("| A") or r.startswith("| C")]
    # Fairness after convergence and the queue at q_ref hold under the gains reading.
    assert "| A | the three senders share the bottleneck fairly" in claims
    assert all(r.endswith("| holds |") for r in rows if "fairly once" in r or "q_ref" in r)
    # Every claim states its criterion; the verdict follows from it.
    assert claims.startswith("| exp. | the paper | satqm | criterion | verdict |")
    table = [r.split(" | ") for r in claims.splitlines()[2:]]
    assert len(table) == 13 and all(r[3] and r[4] in ("holds |", "not reproduced |") for r in table)
    dip = next(r for r in table if "dip to about 0.9" in r[1])
    assert "within ±0.05 of the paper's value" in dip[3]
    text = report.read_text()
    assert "What differs from the paper" in text
    import json

    m = json.loads((tmp_path / "measures.json").read_text())["mean"]
    assert m["E_atsp_pi_per_fall"] < 0.05
    assert abs(m["C_queue_mean_late"] - 300) < 50
    # Read as a, b, the printed numbers swing the queue far more.
    assert m["C_ab_queue_std_late"] > 3 * m["C_queue_std_late"]


def test_beyond_the_paper_runs_are_valid_scenarios():
    from satqm.experiments import atsp

    texts = atsp.beyond_scenarios()
    flows = {k: satqm.Scenario.from_toml(t).flows for k, t in texts.items()}
    want = {f"X-{n}": k for n, k, _, _ in atsp.BEYOND}
    # Three ATSP senders and three split TCP transfers at the gateway.
    want["X-gateway"] = 6
    assert flows == want


def test_atsp_takes_the_gateway_from_split_tcp_at_the_rate_mathis_predicts():
    """At the gateway's transmit queue, ATSP (end to end) and split TCP
    answer the PI's marks; TCP's backbone gets what its loss-rate formula
    allows at ATSP's equilibrium marking probability."""
    from satqm.experiments import _atsp_gateway, atsp

    res = satqm.run(satqm.Scenario.from_toml(_atsp_gateway.scenario(40.0)))
    kinds = res.flows.kind.value_counts()
    assert (kinds["atsp"], kinds["bulk"], kinds["relay"]) == (3, 3, 6)
    m = _atsp_gateway.measure(res, atsp.jain)
    assert m["atsp_bps"] > 0.95 * 20e6 * 1460 / 1500
    assert m["jain_atsp"] > 0.99
    assert m["atsp_marks"] > 1000 and m["backbone_marks"] > 0
    assert 0 < m["tcp_bps"] < 0.05 * m["atsp_bps"]
    assert 0.5 < m["tcp_bps"] / m["tcp_mathis_bps"] < 2


def test_bad_atsp_parameters_name_their_key():
    text = (SCEN / "solo.toml").read_text(encoding="utf-8")
    for bad, key in (
        ("atsp = { w_max = 500, alpha = 0 }", "traffic[0].atsp.alpha"),
        ("atsp = { w_max = 500, beta = -1 }", "traffic[0].atsp.beta"),
        ("atsp = { w_max = 500, h = -2 }", "traffic[0].atsp.h"),
        ("atsp = { alpha = 20 }", "traffic[0].atsp.w_max"),
    ):
        with pytest.raises(satqm.ConfigError) as e:
            satqm.Scenario.from_toml(text.replace("atsp = { w_max = 500 }", bad, 1))
        assert str(e.value).startswith(key), str(e.value)


def test_the_steady_state_balances_eqs_2_to_7_and_matches_a_packet_run():
    from satqm.models.atsp import _next_window, atsp_steady_state

    c = 10e6 / (8 * 1500)
    ss = atsp_steady_state(3, c, 0.6, 300, 500, buffer=800)
    assert ss.holds_setpoint and ss.q == 300
    assert ss.w == pytest.approx(c * 0.96 / 3)
    # At p the window is a fixed point of one cycle (cut, then eq. 6).
    kw = dict(alpha=20.0, beta=1e-3, i0=1.5, h=100.0, w_max=500.0, cut="cycle_base")
    assert _next_window(ss.w, ss.p, **kw) == pytest.approx(ss.w, rel=1e-9)
    # Eq. 4 summed: Lambda = beta alpha p n (n + 1) / 2, n = w / alpha.
    n = ss.w / 20
    assert ss.lam == pytest.approx(1e-3 * 20 * ss.p * n * (n + 1) / 2)
    # Too many senders: the setpoint cannot be held and the queue grows.
    many = atsp_steady_state(30, c, 0.6, 300, 500, buffer=800)
    assert not many.holds_setpoint and many.q == 800
    # The packet run's marking probability and window (solo.toml, all three
    # senders on from 40 s).
    res = satqm.run(satqm.load(SCEN / "solo.toml"))
    late = res.link("bottleneck")
    late = late[late.index > 90]
    assert late.aqm_prob.mean() == pytest.approx(ss.p, rel=0.15)
    cw = res.cwnd[res.cwnd.time_s > 90]
    assert (cw.cwnd_bytes / 1500).mean() == pytest.approx(ss.w, rel=0.05)
    with pytest.raises(ValueError, match="cut"):
        atsp_steady_state(3, c, 0.6, 300, 500, cut="half")
