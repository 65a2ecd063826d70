"""TCP Prague's detection of a classic ECN AQM (`[tcp.cc] classic_ecn_fallback`)."""

from __future__ import annotations

import pytest
import satqm
from satqm.experiments import l4s


def _run(aqm: str, fallback: bool) -> satqm.Results:
    l4s.MIXES["prague-fallback-cubic"] = (
        f'cc = {{ kind = "prague", classic_ecn_fallback = {str(fallback).lower()} }}',
        'cc = "cubic"',
    )
    try:
        text = l4s._scenario(
            "fallback", l4s.LINKS["terrestrial"], "prague-fallback-cubic", l4s.AQMS[aqm], True
        )
    finally:
        del l4s.MIXES["prague-fallback-cubic"]
    return satqm.run(satqm.Scenario.from_toml(text))


def _ratio(r: satqm.Results) -> float:
    f = r.flows.set_index("flow")["goodput_bps"]
    return float(f.loc[0] / f.loc[1])


def test_prague_falls_back_behind_a_classic_ecn_aqm():
    # One queue marking as RFC 3168 says (PIE): Prague takes nearly all of
    # the link from CUBIC; with the detection its cuts become classic-like
    # and the two share it.
    off, on = _run("pie", False), _run("pie", True)
    assert _ratio(off) > 8
    assert 0.5 < _ratio(on) < 2
    assert on.summary()["utilization_mean"] > 0.95


@pytest.mark.parametrize("aqm", ["dualpi2", "fq_codel-ce1ms"])
def test_no_fallback_behind_an_l4s_aqm(aqm):
    # The L queue's delay barely varies and stays under a millisecond:
    # the score stays at 0 and nothing changes.
    off, on = _run(aqm, False), _run(aqm, True)
    assert on.flows["goodput_bps"].tolist() == off.flows["goodput_bps"].tolist()
