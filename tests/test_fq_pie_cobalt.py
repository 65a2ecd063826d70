"""FQ-PIE, FQ-COBALT and COBALT in the simulator: flow isolation against an
unresponsive flow, their default ECN modes, PIE's marks at enqueue, and the
scenario keys' errors. The disciplines themselves are checked step by step
against independent references in ``test_fq_pie_cobalt_oracle.py``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import satqm

ISOLATION = Path(__file__).resolve().parents[1] / "scenarios" / "fq" / "isolation.toml"
FAIR = 10e6 / 11


def _with(kind: str, extra: str = "", text: str | None = None) -> str:
    text = ISOLATION.read_text() if text is None else text
    return text.replace('kind = "fq_codel"', f'kind = "{kind}"\n{extra}'.rstrip())


def _shares(res: satqm.Results) -> tuple[list[float], float]:
    """Each TCP flow's wire rate (payload and its 40 header bytes) over the
    fair share, and the CBR flow's."""
    f = res.flows
    tcp = (f[f["kind"] == "bulk"]["goodput_bps"] * 1500 / 1460 / FAIR).tolist()
    cbr = float(f[f["kind"] == "cbr"]["goodput_bps"].iloc[0]) / FAIR
    return tcp, cbr


@pytest.mark.parametrize("kind", ["fq_pie", "fq_cobalt"])
def test_an_unresponsive_flow_leaves_the_tcp_flows_their_share(kind: str) -> None:
    res = satqm.run(satqm.Scenario.from_toml(_with(kind)), seed=1)
    tcp, cbr = _shares(res)
    assert len(tcp) == 10
    assert sum(tcp) / 10 >= 0.95, tcp
    assert min(tcp) >= 0.88, tcp
    assert cbr <= 1.25, cbr
    # FQ-PIE drops the CBR flow's packets as they arrive (its queue's PIE),
    # FQ-COBALT as they leave and, when the buffer fills, from its queue.
    d = res.drops
    assert set(d[d["reason"] == "overflow"]["flow"]) <= {10}
    assert (d[d["flow"] == 10]["reason"].astype(str) == "early_drop").sum() > 1000


def test_one_cobalt_queue_does_not_isolate() -> None:
    # Without flow queues, the unresponsive flow takes the link: BLUE rises
    # only on overflow and on waits over 400 ms, which CoDel prevents.
    tcp, cbr = _shares(satqm.run(satqm.Scenario.from_toml(_with("cobalt")), seed=1))
    assert sum(tcp) / 10 < 0.05 and cbr > 10


def _ecn_text(kind: str, extra: str = "") -> str:
    text = ISOLATION.read_text().replace("[[traffic]]", '[tcp]\necn = "classic"\n\n[[traffic]]', 1)
    return _with(kind, extra, text.replace('rate = "20 Mbps"', 'rate = "1 Mbps"'))


def _tcp_reasons(text: str) -> pd.Series:
    res = satqm.run(satqm.Scenario.from_toml(text), duration=20.0)
    return res.drops[res.drops["flow"] < 10]["reason"].astype(str)


@pytest.mark.parametrize(
    ("kind", "marks_by_default"),
    [("fq_pie", False), ("fq_cobalt", True), ("cobalt", True)],
)
def test_default_modes_follow_linux(kind: str, marks_by_default: bool) -> None:
    # Linux's FQ-PIE drops unless `ecn` is set; CAKE's COBALT marks. (Marking,
    # PIE still drops above a 10 % probability, and BLUE drops by design.)
    def marks(extra: str = "") -> int:
        return int((_tcp_reasons(_ecn_text(kind, extra)) == "early_mark").sum())

    assert (marks() > 0) == marks_by_default
    assert marks('mode = "drop"') == 0
    assert marks('mode = "mark"') > 0


def test_fq_pie_marks_at_enqueue_below_its_ecn_threshold() -> None:
    # PIE marks (ECN-capable packets, probability at most 10 %) as packets
    # arrive; the log has the mark, and the packet is delivered marked.
    res = satqm.run(satqm.Scenario.from_toml(_ecn_text("fq_pie", 'mode = "mark"')), duration=20.0)
    d = res.drops
    marks = d[(d["reason"] == "early_mark") & (d["flow"] < 10)]
    assert len(marks) > 0
    assert res.flows[res.flows["kind"] == "bulk"]["goodput_bps"].sum() > 8.5e6


@pytest.mark.parametrize(
    ("kind", "extra", "key", "message"),
    [
        ("fq_pie", 'overflow = "middle"', "aqm[0].overflow", "fattest"),
        ("fq_pie", "drop_batch = 8", "aqm[0].drop_batch", "not a parameter of fq_pie"),
        ("fq_pie", "mtu = 1500", "aqm[0].mtu", "not a parameter"),
        ("fq_pie", "alpha = -1", "aqm[0].alpha", ""),
        ("fq_cobalt", "p_inc = 2", "aqm[0].p_inc", ""),
        ("fq_cobalt", 'interval = "5 s"', "aqm[0].interval", "4.29 s"),
        ("cobalt", "flows = 8", "aqm[0].flows", "not a parameter of cobalt"),
        ("cobalt", 'overflow = "fattest"', "aqm[0].overflow", "not a parameter"),
        ("fq_cobalt", 'monitor = "bottleneck.reverse"', "aqm[0].monitor", "must monitor it"),
    ],
)
def test_bad_keys_are_named(kind: str, extra: str, key: str, message: str) -> None:
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(_with(kind, extra)).check()
    assert key in str(e.value) and message in str(e.value)


def test_fq_pie_with_ns3s_overflow_and_the_same_seed_repeats() -> None:
    text = _with("fq_pie", 'overflow = "fattest"\ndrop_batch = 16')
    sc = satqm.Scenario.from_toml(text)
    a, b = satqm.run(sc, seed=5, duration=15.0), satqm.run(sc, seed=5, duration=15.0)
    assert a.flows["goodput_bps"].tolist() == b.flows["goodput_bps"].tolist()
    assert a.drops["reason"].astype(str).tolist() == b.drops["reason"].astype(str).tolist()
