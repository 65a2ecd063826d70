"""The parallel-VQ reproduction (Jou, Tan, Baras, Sections II, IV, V): every
policy's scenario is valid, and a tiny end-to-end run writes every file."""

from __future__ import annotations

import re

import pandas as pd
import pytest
import satqm
from satqm.experiments import pvq2003 as P


@pytest.mark.parametrize("policy", P.POLICIES)
def test_every_policy_is_a_valid_scenario(policy: str) -> None:
    text = P.variant_text(policy, duration=120, warmup=110)
    sc = satqm.Scenario.from_toml(text)
    assert sc.duration == 120
    assert sc.name == f"pvq2003-{policy}"
    n_aqm = len(re.findall(r"^\[\[aqm\]\]", text, flags=re.M))
    assert n_aqm == (0 if policy == "droptail" else 1)
    if policy == "ared":
        assert re.search(r'^kind = "ared"$', text, flags=re.M)
        assert re.search(r"^min_th = 20$", text, flags=re.M)
    if policy.startswith("redtail"):
        assert re.search(r'^kind = "red_tail"$', text, flags=re.M)
        dynamic = re.search(r'^thresholds = "dynamic"$', text, flags=re.M)
        assert bool(dynamic) == (policy == "redtail_dyn")


def test_paper_tables_are_complete() -> None:
    assert set(P.PAPER) == set(P.POLICIES)
    for table in P.PAPER.values():
        assert set(table) == set(P.CLASSES)


def test_tiny_reproduction_writes_everything(tmp_path) -> None:
    report = P.reproduce(tmp_path, quick=True, workers=2, warmup=105.0, measured=10.0)
    assert report == tmp_path / "REPORT.md"
    for f in ("REPORT.md", "tables_3_4.md", "queues.md", "queues.png", "runs.csv",
              "settings.json"):
        assert (tmp_path / f).exists(), f
    df = pd.read_csv(tmp_path / "runs.csv")
    assert sorted(df.policy) == sorted(P.POLICIES)
    for c in P.CLASSES:
        assert (df[f"{c}_rate_kBps"] > 0).all(), c
        assert (df[f"{c}_delay_s"] > 0).all(), c
    text = report.read_text()
    assert "holds" in text
    assert "2.747" in text and "0.899" in text  # Tables III and IV beside ours
    assert text.count("\n- **") >= 10


@pytest.mark.parametrize("kw", [{"warmup": -1.0}, {"measured": 0.0}, {"seeds": 0}])
def test_bad_override_is_named(tmp_path, kw) -> None:
    with pytest.raises(ValueError, match=next(iter(kw))):
        P.reproduce(tmp_path, quick=True, **kw)
