"""`satqm reproduce l4s`, quick: DualPI2 against PIE and FQ-CoDel with one
scalable and one classic flow on a terrestrial and a GEO path."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from satqm.experiments import l4s


@pytest.mark.slow
def test_l4s_quick(tmp_path):
    report = l4s.reproduce(tmp_path, quick=True, workers=2)
    text = report.read_text()
    for f in ("l4s.md", "runs.csv", "claims.json"):
        assert (tmp_path / f).exists(), f
    df = pd.read_csv(tmp_path / "runs.csv")
    assert len(df) == len(l4s.LINKS) * len(l4s.MIXES) * len(l4s.AQMS)
    d = df.set_index(["link", "mix", "aqm"])
    # RFC 9332's setting: DualPI2 keeps the L queue's 99th percentile under
    # 1 ms plus a packet, the classic queue near its target, the rates
    # balanced and the link full, with either pair of controls.
    for mix in l4s.MIXES:
        row = d.loc[("terrestrial", mix, "dualpi2")]
        held = l4s.claims(row.to_dict(), l4s.LINKS["terrestrial"]["rate"])
        assert all(held.values()), (mix, held)
        # A single classic queue gives the L4S packets the classic delay.
        assert d.loc[("terrestrial", mix, "pie"), "l_p50_ms"] > 5 * row["l_p50_ms"]
    # The L queue's delay does not depend on the path's RTT.
    assert d.loc[("geo", "prague-cubic", "dualpi2"), "l_p99_ms"] < 1.0 + l4s.serialisation_ms(20)
    verdicts = json.loads((tmp_path / "claims.json").read_text())
    assert set(verdicts) == {f"{a}/{b}/{c}" for a, b, c in d.index}
    assert "## The claims, per cell" in text and "holds (1/1)" in text


def test_claims_criteria():
    row = {"l_p99_ms": 1.2, "ratio": 1.6, "c_p50_ms": 14.0, "utilization": 0.99}
    assert all(l4s.claims(row, 40.0).values())
    assert not l4s.claims(row | {"l_p99_ms": 1.4}, 40.0)["l_delay"]
    assert not l4s.claims(row | {"ratio": 2.5}, 40.0)["balance"]
    assert not l4s.claims(row | {"c_p50_ms": 2.0}, 40.0)["classic_delay"]
    assert l4s.serialisation_ms(40.0) == pytest.approx(0.3)
