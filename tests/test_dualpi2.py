"""DualPI2 in the simulator: L4S and classic flows coupled (RFC 9332), and
the scenario keys' errors. The discipline itself is checked step by step
against an independent reference in ``test_dualpi2_oracle.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
import satqm

COEXISTENCE = Path(__file__).resolve().parents[1] / "scenarios" / "l4s" / "coexistence.toml"


# Seed 2 starts the two flows 0.14 s apart, so that p' saturates early
# and both time out: it checks the recovery that follows (docs/aqm.md).
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_prague_and_cubic_share_and_the_l4s_flow_sees_almost_no_queue(seed: int) -> None:
    res = satqm.run(satqm.Scenario.load(COEXISTENCE), seed=seed)
    f = res.flows.set_index("flow")
    prague, cubic = f.loc[0], f.loc[1]
    # The coupling balances the rates within a factor of two (RFC 9332
    # section 2.1: k = 2 for rough balance with Reno-friendly flows).
    ratio = prague["goodput_bps"] / cubic["goodput_bps"]
    assert 0.5 < ratio < 2.0, ratio
    assert res.summary()["utilization_mean"] > 0.95
    # The L4S flow's mean queueing delay stays under 1 ms plus a packet's
    # serialisation at 40 Mbit/s (0.3 ms); the classic flow's sits near the
    # PI2 target (15 ms).
    l_delay = prague["rtt_mean_s"] - prague["rtt_min_s"]
    c_delay = cubic["rtt_mean_s"] - cubic["rtt_min_s"]
    assert l_delay < 0.0013, l_delay
    assert 0.005 < c_delay < 0.025, c_delay
    # RFC 9332's aim for the L queue itself: its 99th percentile below 1 ms
    # plus one packet's serialisation; the classic queue's median near the
    # target.
    assert res.delay_quantile(0.99, packets="l4s") < 1.3
    assert 5.0 < res.delay_quantile(0.5, packets="classic") < 25.0
    # The L4S flow is marked, never dropped; the classic flow (not
    # ECN-capable) is dropped, never marked.
    d = res.drops
    assert set(d[d["flow"] == 0]["reason"].astype(str)) == {"early_mark"}
    assert set(d[d["flow"] == 1]["reason"].astype(str)) <= {"early_drop", "overflow"}


def test_behind_a_shallow_step_the_classic_flow_starves() -> None:
    # One queue with the DCTCP setting (a step at five packets, marking
    # ECN-capable packets and dropping the others): the classic flow is
    # dropped at the same shallow threshold as the L4S flow is marked, and
    # the scalable flow takes the link. DualPI2's two queues and coupling
    # are what share it (above).
    text = COEXISTENCE.read_text().replace(
        'kind = "dualpi2"',
        'kind = "red"\nmode = "mark"\nmin_th = 5\nmax_th = 6\nmax_p = 1.0\nw_q = 1.0',
    )
    res = satqm.run(satqm.Scenario.from_toml(text), seed=1)
    f = res.flows.set_index("flow")
    assert f.loc[0, "goodput_bps"] > 4 * f.loc[1, "goodput_bps"]


@pytest.mark.parametrize(
    ("extra", "key", "message"),
    [
        ('mode = "drop"', "aqm[0].mode", "does not apply"),
        ('scheduler = "drr"', "aqm[0].scheduler", "tsfifo"),
        ("k = 0", "aqm[0].k", "must be in"),
        ("th_len = 1.5", "aqm[0].th_len", "whole number"),
        ('monitor = "bottleneck.reverse"', "aqm[0].monitor", "must monitor it"),
        ('rtt_max = "0 s"', "aqm[0].rtt_max", "> 0"),
    ],
)
def test_bad_keys_are_named(extra: str, key: str, message: str) -> None:
    text = COEXISTENCE.read_text().replace('kind = "dualpi2"', f'kind = "dualpi2"\n{extra}')
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(text).check()
    assert key in str(e.value) and message in str(e.value), str(e.value)


def test_a_zero_range_is_a_step() -> None:
    # `range = 0`: the L queue's ramp becomes a step at `min_th` (Linux's
    # default native AQM); a negative range is refused by name.
    text = COEXISTENCE.read_text().replace(
        'kind = "dualpi2"', 'kind = "dualpi2"\nmin_th = "1 ms"\nrange = 0\nth_len = 2'
    )
    res = satqm.run(satqm.Scenario.from_toml(text, duration=10, warmup=2), seed=1)
    assert res.delay_quantile(0.99, packets="l4s") < 1.5
    bad = COEXISTENCE.read_text().replace('kind = "dualpi2"', 'kind = "dualpi2"\nrange = "-1 ms"')
    with pytest.raises(satqm.ConfigError, match=r"aqm\[0\]\.range"):
        satqm.Scenario.from_toml(bad).check()


def test_single_queue_pi2_balances_the_rates_but_the_l4s_flow_waits_as_long() -> None:
    # The same coupling in one FIFO (kind = "pi2"): the rates still balance,
    # but the L4S packets wait behind the classic ones at the PI2 target.
    text = COEXISTENCE.read_text().replace('kind = "dualpi2"', 'kind = "pi2"')
    res = satqm.run(satqm.Scenario.from_toml(text), seed=1)
    f = res.flows.set_index("flow")
    ratio = f.loc[0]["goodput_bps"] / f.loc[1]["goodput_bps"]
    assert 0.8 < ratio < 1.4, ratio
    l_p50 = res.delay_quantile(0.5, packets="l4s")
    c_p50 = res.delay_quantile(0.5, packets="classic")
    assert 10.0 < l_p50 < 20.0 and abs(l_p50 - c_p50) < 2.0, (l_p50, c_p50)


@pytest.mark.parametrize(
    ("extra", "key", "message"),
    [
        ('mode = "mark"', "aqm[0].mode", "pi2 marks L4S packets"),
        ('tshift = "10 ms"', "aqm[0].tshift", "not a parameter of pi2"),
        ("k = 0", "aqm[0].k", ""),
    ],
)
def test_pi2_keys_are_named(extra: str, key: str, message: str) -> None:
    text = COEXISTENCE.read_text().replace('kind = "dualpi2"', f'kind = "pi2"\n{extra}')
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(text).check()
    assert key in str(e.value) and message in str(e.value)
