"""HyStart++ (RFC 9406) in CUBIC's and Reno's initial slow start: `[tcp.cc] hystart = "rfc9406"`."""

from __future__ import annotations

import numpy as np
import pytest
import satqm


def _scenario(
    hystart: str, buffer: int, duration: int = 30, extra: str = "", kind: str = "cubic"
) -> str:
    """One flow over a GEO bottleneck: 10 Mbit/s, 580 ms base RTT."""
    return f"""
name = "hystartpp"
[simulation]
duration = "{duration} s"
seed = 1
trace_cwnd = [0]
sample_interval = "10 ms"
[topology]
kind = "dumbbell"
pairs = 1
[topology.access]
rate = "1000 Mbps"
delay = "0.05 ms"
[topology.bottleneck]
rate = "10 Mbps"
delay = "290 ms"
buffer = {buffer}
[tcp]
profile = "linux"
mss = 1448
{extra}
[tcp.cc]
kind = "{kind}"
hystart = "{hystart}"
[[traffic]]
kind = "bulk"
pairs = 0
"""


def _run(hystart: str, buffer: int, **kw) -> satqm.Results:
    return satqm.run(satqm.Scenario.from_toml(_scenario(hystart, buffer, **kw)))


@pytest.mark.parametrize("kind", ["cubic", "reno"])
def test_leaves_slow_start_without_a_loss_and_grows_a_quarter_in_css(kind):
    # A buffer far deeper than the path: slow start alone would run until
    # the send buffer holds it. HyStart++ sees the queue's delay, enters
    # CSS and, five rounds later, congestion avoidance, with no drop.
    r = _run("rfc9406", 5000, kind=kind)
    assert r.summary()["drops_total"] == 0
    c = r.cwnd
    t, cwnd = c.time_s.to_numpy(), c.cwnd_bytes.to_numpy() / 1448
    ssthresh = c.ssthresh_bytes.to_numpy() / 1448
    left = np.flatnonzero(ssthresh < 1e9)
    assert len(left) > 0, "slow start never ended"
    exit_at = t[left[0]]
    # ssthresh is cwnd at the end of CSS.
    assert ssthresh[left[0]] == pytest.approx(cwnd[left[0] - 1], abs=2)
    # In CSS the queue holds the link busy and ACKs arrive at its rate
    # (863 segments of 1,448 bytes per second at 10 Mbit/s, 1,488-byte
    # packets): a quarter segment per segment acknowledged is about 210
    # segments a second, against 863 in slow start.
    a, b = np.searchsorted(t, [exit_at - 4.0, exit_at - 1.0])
    rate = (cwnd[b] - cwnd[a]) / (t[b] - t[a])
    per_s = 10e6 / (1488 * 8)
    assert rate == pytest.approx(per_s / 4, rel=0.1)
    # Without it the window keeps doubling until the send buffer holds
    # the flight (5,276 segments here, with the receiver's window out of
    # the way), far past where CSS ended.
    off = _run("off", 5000, extra="receive_autotuning = false", kind=kind).cwnd
    assert (off.ssthresh_bytes.to_numpy() > 1e9).all()
    assert off.cwnd_bytes.max() / 1448 > 1.5 * ssthresh[left[0]]


@pytest.mark.parametrize("kind", ["cubic", "reno"])
def test_fewer_drops_than_plain_slow_start_into_a_shallow_buffer(kind):
    # 800 packets, 1.6 bandwidth-delay products: CSS still overflows it,
    # but later and by less than slow start's doubling.
    hspp = _run("rfc9406", 800, duration=20, kind=kind)
    off = _run("off", 800, duration=20, kind=kind)
    d_hspp, d_off = hspp.summary()["drops_total"], off.summary()["drops_total"]
    assert 0 < d_hspp < d_off / 2
    assert hspp.drops.time_s.min() > off.drops.time_s.min()


def test_a_paced_sender_leaves_slow_start_the_same_way():
    # With pacing an ACK's growth is not limited (L unbounded); the ACKs
    # here cover two segments (delayed ACKs, the receiver's window not
    # growing), well under the unpaced limit of 8, so the exit is where the
    # unpaced sender's is, within a few segments. Segment by segment: the
    # linux profile's TSO bursts (up to 1 ms of data at once, 6 segments
    # late in this slow start) queue at the bottleneck and move the exit.
    def first_ssthresh(r: satqm.Results) -> float:
        ss = r.cwnd.ssthresh_bytes.to_numpy()
        return ss[np.flatnonzero(ss < 1e12)[0]] / 1448

    fixed = "receive_autotuning = false"
    paced = _run("rfc9406", 5000, duration=20, extra="pacing = true\ntso_bursts = false\n" + fixed)
    unpaced = _run("rfc9406", 5000, duration=20, extra=fixed)
    assert paced.summary()["drops_total"] == 0
    assert first_ssthresh(paced) == pytest.approx(first_ssthresh(unpaced), rel=0.05)


@pytest.mark.parametrize(
    ("hystart", "extra", "kind", "key", "words"),
    [
        ("rfc9406", 'cc_rules = "linux-2009"', "cubic", "tcp.cc.hystart", "linux-2009"),
        ("rfc9406", 'cc_rules = "linux-2009"', "reno", "tcp.cc.hystart", "linux-2009"),
        ("linux", "", "reno", "tcp.cc.hystart", "tcp_cubic.c"),
    ],
)
def test_refusals_name_the_key(hystart, extra, kind, key, words):
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(_scenario(hystart, 800, extra=extra, kind=kind))
    assert key in str(e.value) and words in str(e.value)


def test_unknown_value_names_the_choices():
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(_scenario("hystart++", 800))
    assert "tcp.cc.hystart" in str(e.value) and "rfc9406" in str(e.value)
