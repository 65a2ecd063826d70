"""FQ-CoDel in the simulator: flow isolation, ECN marking by default, the
hash's perturbation from the seed, and the scenario keys' errors. The
discipline itself is checked step by step against an independent
reference in ``test_fq_codel_oracle.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
import satqm

ISOLATION = Path(__file__).resolve().parents[1] / "scenarios" / "fq" / "isolation.toml"
FAIR = 10e6 / 11


def _shares(res: satqm.Results) -> tuple[list[float], float]:
    """Each TCP flow's wire rate (payload and its 40 header bytes) over the
    fair share, and the CBR flow's."""
    f = res.flows
    tcp = (f[f["kind"] == "bulk"]["goodput_bps"] * 1500 / 1460 / FAIR).tolist()
    cbr = float(f[f["kind"] == "cbr"]["goodput_bps"].iloc[0]) / FAIR
    return tcp, cbr


@pytest.mark.parametrize("seed", [1, 2])
def test_an_unresponsive_flow_leaves_the_tcp_flows_their_share(seed: int) -> None:
    res = satqm.run(satqm.Scenario.load(ISOLATION), seed=seed)
    tcp, cbr = _shares(res)
    assert len(tcp) == 10
    # Together the ten TCP flows keep their ten shares within 5 %; each
    # keeps 90 %. (A Reno flow under CoDel's 5 ms target does not keep its
    # queue busy all the time, and the always-backlogged CBR flow takes
    # the turns it leaves.)
    assert sum(tcp) / 10 >= 0.95, tcp
    assert min(tcp) >= 0.90, tcp
    assert cbr <= 1.25, cbr
    # Only the CBR flow's queue overflows.
    d = res.drops
    overflow = d[d["reason"] == "overflow"]
    assert len(overflow) > 0 and set(overflow["flow"]) == {10}
    # Behind a drop-tail buffer, the CBR flow takes the link.
    text = ISOLATION.read_text().replace('kind = "fq_codel"', 'kind = "droptail"')
    tail_tcp, tail_cbr = _shares(satqm.run(satqm.Scenario.from_toml(text), seed=seed))
    assert sum(tail_tcp) / 10 < 0.05 and tail_cbr > 10


def test_ecn_flows_are_marked_by_default_and_dropped_in_drop_mode() -> None:
    text = ISOLATION.read_text().replace("[[traffic]]", '[tcp]\necn = "classic"\n\n[[traffic]]', 1)
    text = text.replace('rate = "20 Mbps"', 'rate = "1 Mbps"')
    res = satqm.run(satqm.Scenario.from_toml(text), duration=20.0)
    reasons = res.drops[res.drops["flow"] < 10]["reason"].astype(str)
    assert (reasons == "early_mark").sum() > 0
    assert (reasons == "early_drop").sum() == 0
    dropping = text.replace('kind = "fq_codel"', 'kind = "fq_codel"\nmode = "drop"')
    res = satqm.run(satqm.Scenario.from_toml(dropping), duration=20.0)
    reasons = res.drops[res.drops["flow"] < 10]["reason"].astype(str)
    assert (reasons == "early_mark").sum() == 0 and (reasons == "early_drop").sum() > 0


def test_the_hash_follows_the_seed_and_repeats_with_it() -> None:
    # Eight flows in eight queues collide at some seeds and not at others;
    # the same seed gives the same run, bit for bit.
    text = ISOLATION.read_text().replace('kind = "fq_codel"', 'kind = "fq_codel"\nflows = 8')
    sc = satqm.Scenario.from_toml(text)
    a, b = satqm.run(sc, seed=5, duration=15.0), satqm.run(sc, seed=5, duration=15.0)
    assert a.flows["goodput_bps"].tolist() == b.flows["goodput_bps"].tolist()
    runs = {tuple(satqm.run(sc, seed=s, duration=15.0).flows["goodput_bps"]) for s in range(4)}
    assert len(runs) > 1


@pytest.mark.parametrize(
    ("extra", "key", "message"),
    [
        ('monitor = "bottleneck.reverse"', "aqm[0].monitor", "must monitor it"),
        ("flows = 0", "aqm[0].flows", "must be in"),
        ("quantum = 1.5", "aqm[0].quantum", "whole number"),
        ('ce_threshold = "fast"', "aqm[0].ce_threshold", ""),
        ("depth = 3", "aqm[0]", "depth"),
    ],
)
def test_bad_keys_are_named(extra: str, key: str, message: str) -> None:
    text = ISOLATION.read_text().replace('kind = "fq_codel"', f'kind = "fq_codel"\n{extra}')
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(text).check()
    assert key in str(e.value) and message in str(e.value)


@pytest.mark.parametrize("kind", ["fq_codel", "fq_pie", "dualpi2"])
def test_at_a_port_with_backpressure_the_peps_packets_wait_in_their_host(kind: str) -> None:
    # The IPoS gateway's transmit queue pushes back on its PEP: behind a
    # queue discipline the PEP's packets never overflow it (they wait in
    # the host when it is full); its AQM drops some (FQ-PIE as they enter,
    # the others as they leave).
    conference = ISOLATION.parents[1] / "avqred" / "conference.toml"
    text = conference.read_text()
    text = text[: text.index("\n[[aqm]]")] + "\n" + f'[[aqm]]\nkind = "{kind}"\nat = "transmit"\n'
    res = satqm.run(satqm.Scenario.from_toml(text), duration=80.0, warmup=20.0)
    tx = res.drops[res.drops["link"] == "transmit"]
    reasons = tx["reason"].astype(str)
    # The queue fills (200 packets) and nothing overflows: the rest wait.
    assert res.link("transmit").queue_packets.max() == 200
    assert (reasons == "overflow").sum() == 0
    assert (reasons == "early_drop").sum() > 0
    # A paced backbone needs a FIFO there; RED+Tail refuses backpressure.
    paced = text.replace('buffer = "500 kB"', 'buffer = "500 kB"\npace_rate = "20 Mbps"', 1)
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(paced).check()
    assert "pep[0].pace_rate" in str(e.value)
    if kind != "fq_codel":
        return
    red_tail = text.replace(
        'kind = "fq_codel"',
        'kind = "red_tail"\nmin_th1 = "2 kB"\nmax_th1 = "30 kB"\nc1_max = "5 Mbps"\n'
        'update_interval = "200 ms"\nmin_th2 = "20 kB"\nmax_th2 = "80 kB"',
    )
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(red_tail).check()
    assert "aqm[0].at" in str(e.value) and "backpressure, which red_tail" in str(e.value)
