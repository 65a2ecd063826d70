"""The `linux` TCP profile end to end, on a GEO bottleneck (docs/linux.md).

The rules are checked with the kernel's `reno`, as docs/linux.md compares
them; CUBIC has its own tests.
"""

from __future__ import annotations

import numpy as np
import pytest
import satqm

GEO = """
name = "geo"
[simulation]
duration = "{duration} s"
seed = 1
trace_cwnd = [0]
trace_seq = [0]
[topology]
kind = "dumbbell"
pairs = 1
[topology.access]
rate = "1 Gbps"
delay = "0.05 ms"
buffer = 10000
[topology.bottleneck]
rate = "10 Mbps"
delay = "290 ms"
buffer = 800
loss = {loss}
[tcp]
profile = "{profile}"
cc = "reno"
mss = 1448
[[traffic]]
kind = "bulk"
pairs = "all"
start = "0 s"
"""


def _run(tmp_path, profile, duration=20, loss=0.0):
    path = tmp_path / f"{profile}.toml"
    path.write_text(GEO.format(profile=profile, duration=duration, loss=loss))
    return satqm.run(str(path))


def _cwnd_at(r, t):
    c = r.cwnd
    return float(c[c.time_s <= t].cwnd_bytes.iloc[-1]) / 1448


@pytest.mark.parametrize(
    ("profile", "growth"),
    # Linux counts acknowledged segments: slow start doubles per round trip
    # with delayed ACKs; RFC 5681's byte counting gives 1.5.
    [("linux", 2.0), ("rfc", 1.5)],
)
def test_slow_start_growth_per_round_trip(tmp_path, profile, growth):
    r = _run(tmp_path, profile)
    # Round trips of 0.58 s before the queue builds: windows of 40 to 160.
    ratio = _cwnd_at(r, 3.0) / _cwnd_at(r, 3.0 - 0.5803)
    assert ratio == pytest.approx(growth, rel=0.06)


def test_send_buffer_holds_the_flight_at_the_end_of_slow_start(tmp_path):
    # 4 MiB of socket memory: the flight stops growing near 2,300 segments
    # while cwnd goes on (the kernel's own TCP_INFO shows 2,206).
    r = _run(tmp_path, "linux")
    s = r.seq.sort_values("time_s", kind="stable")
    sent = s[s.event == "sent"]
    acked = s[s.event == "acked"]
    snd_max = sent.end.cummax().to_numpy()
    una = acked.seq.cummax().to_numpy()

    i = np.searchsorted(sent.time_s.to_numpy(), acked.time_s.to_numpy()) - 1
    flight = (snd_max[np.maximum(i, 0)] - una) / 1448
    assert 2000 < flight.max() < 2700
    assert r.summary()["timeouts_total"] == 0


def test_no_timeout_on_a_steady_geo_path(tmp_path):
    # RFC 6298's RTO falls to the RTT on a steady path and fires before a
    # fast retransmission's ACK comes back; Linux's keeps 200 ms above it.
    linux = _run(tmp_path, "linux", duration=60).summary()
    rfc = _run(tmp_path, "rfc", duration=60).summary()
    assert linux["timeouts_total"] == 0
    assert rfc["timeouts_total"] >= 1
    assert linux["goodput_total_bps"] > 1.3 * rfc["goodput_total_bps"]


def test_adaptive_ack_follows_the_spacing_of_the_segments(tmp_path):
    # A sender capped at 0.2 Mbit/s: a segment every 60 ms. With a fixed
    # 40 ms timeout each one is acknowledged alone when the timer fires;
    # with Linux's ato (the profile's, docs/linux.md) the first firing
    # doubles ato to 80 ms, above the spacing, and from then on every
    # second segment is acknowledged at once: half the ACKs (the first 16
    # quick ACKs aside).
    text = GEO.format(profile="linux", duration=20, loss=0.0).replace(
        'cc = "reno"', 'cc = "reno"\nrate_cap = "0.2 Mbps"'
    )

    def acks(extra: str) -> tuple[int, int]:
        r = satqm.run(
            satqm.Scenario.from_toml(text.replace("[[traffic]]", extra + "\n[[traffic]]"))
        )
        f = r.flows.iloc[0]
        return int(f.segments_sent), int(f.rtt_samples)

    sent, fixed = acks("adaptive_ack = false")
    sent_a, adaptive = acks("")
    assert sent == sent_a and fixed > 0.95 * sent
    assert adaptive == pytest.approx(16 + (sent - 16) / 2, rel=0.05)
    bad = text.replace('cc = "reno"', 'cc = "reno"\nadaptive_ack = true\ndelayed_ack = false')
    with pytest.raises(satqm.ConfigError, match="tcp.adaptive_ack: needs delayed_ack = true"):
        satqm.Scenario.from_toml(bad)
    bad = text.replace(
        'cc = "reno"', 'cc = "reno"\nadaptive_ack = true\ndelayed_ack_timeout = "40 ms"'
    )
    with pytest.raises(satqm.ConfigError, match="tcp.delayed_ack_timeout: cannot be set"):
        satqm.Scenario.from_toml(bad)


TERRESTRIAL = """
name = "timestamps"
[simulation]
duration = "10 s"
warmup = "2 s"
seed = 1
[topology]
kind = "dumbbell"
pairs = 1
[topology.access]
rate = "1 Gbps"
delay = "1 ms"
buffer = 10000
[topology.bottleneck]
rate = "10 Mbps"
delay = "10 ms"
buffer = 1000
[tcp]
profile = "{profile}"
mss = 1448
receive_buffer = "200 KB"
{extra}
[[traffic]]
kind = "bulk"
pairs = "all"
start = "0 s"
"""


@pytest.mark.parametrize(
    ("profile", "extra", "packet"),
    # Linux sends the timestamps option (tcp_timestamps = 1): 1,448 bytes
    # of payload in a 1,500-byte packet; without it, 40 header bytes.
    [
        ("linux", "", 1500),
        ("linux-2009", "", 1500),
        ("linux", "timestamps = false", 1488),
        ("rfc", "", 1488),
        ("rfc", "timestamps = true", 1500),
    ],
)
def test_segments_carry_the_timestamps_option(profile, extra, packet):
    r = satqm.run(satqm.Scenario.from_toml(TERRESTRIAL.format(profile=profile, extra=extra)))
    s = r.summary()
    # The window (200 KB) keeps the link busy and the buffer from overflowing.
    assert s["retransmits_total"] == 0
    assert s["utilization_mean"] > 0.999
    payload = s["goodput_total_bps"] / s["throughput_mean_bps"]
    assert payload == pytest.approx(1448 / packet, rel=1e-3)


#: Ten ECN CUBIC flows starting within 0.7 s into RED in marking mode: the
#: late flows' SYNs (not ECN-capable) meet the queue the first flows' slow
#: starts built, and RED drops some of them.
ECN_SYN = """
[simulation]
duration = "20 s"
warmup = "5 s"
seed = 1
[topology]
kind = "dumbbell"
pairs = 10
[topology.access]
rate = "1 Gbps"
delay = "0 s"
buffer = 10000
[topology.bottleneck]
rate = "20 Mbps"
delay = "20 ms"
buffer = 150
[[aqm]]
kind = "red"
at = "bottleneck"
max_p = 0.1
w_q = 0.002
gentle = true
min_th = 15
max_th = 45
mean_packet_size = 1500
mode = "mark"
[tcp]
profile = "linux"
mss = 1448
ecn = true
{extra}
"""


def _ecn_syn_flows(extra: str):
    starts = [2.5, 3.126, 2.532, 2.589, 3.21, 2.703, 3.221, 2.893, 2.777, 3.1]
    text = ECN_SYN.format(extra=extra) + "".join(
        f'\n[[traffic]]\nkind = "bulk"\npairs = {i}\nstart = "{t} s"\n'
        for i, t in enumerate(starts)
    )
    return satqm.run(satqm.Scenario.from_toml(text)).flows


def test_a_connection_whose_syn_was_lost_runs_without_ecn():
    # Linux resends a lost SYN without asking for ECN (tcp_ecn_clear_syn):
    # that connection's data is not ECN-capable, so RED drops it instead
    # of marking it, and it alone retransmits.
    f = _ecn_syn_flows("")
    fell_back = f[f["ecn_reductions"] == 0]
    assert 0 < len(fell_back) < len(f)
    assert (fell_back["timeouts"] >= 1).all(), "each lost its SYN"
    assert (fell_back["retransmits"] > 0).all()
    assert (f.loc[f["ecn_reductions"] > 0, "retransmits"] == 0).all()
    # Without the fallback the same SYN losses leave every connection ECN.
    f = _ecn_syn_flows("ecn_fallback = false")
    assert (f["ecn_reductions"] > 0).all()
    assert (f["retransmits"] == 0).all()
    assert f["timeouts"].sum() >= len(fell_back)


@pytest.mark.parametrize("cc", ["dctcp", "prague"])
def test_a_scalable_connection_whose_syn_was_lost_runs_reno_without_ecn(cc):
    # Linux's dctcp_init() and tcp_prague's prague_init(): a connection
    # that did not negotiate ECN runs Reno (dctcp_reno, prague_reno) and
    # sends Not-ECT, so RED drops its data where it marks the others'.
    text = ECN_SYN.replace("ecn = true\n", "")
    starts = [2.5, 3.126, 2.532, 2.589, 3.21, 2.703, 3.221, 2.893, 2.777, 3.1]
    traffic = "".join(
        f'\n[[traffic]]\nkind = "bulk"\npairs = {i}\nstart = "{t} s"\n'
        for i, t in enumerate(starts)
    )

    def flows(extra):
        scenario = text.format(extra=f'{extra}[tcp.cc]\nkind = "{cc}"') + traffic
        return satqm.run(satqm.Scenario.from_toml(scenario)).flows

    f = flows("")
    fell_back = f[f["ecn_reductions"] == 0]
    assert 0 < len(fell_back) < len(f)
    assert (fell_back["timeouts"] >= 1).all(), "each lost its SYN"
    assert (fell_back["retransmits"] > 0).all()
    kept = f[f["ecn_reductions"] > 0]
    assert fell_back["goodput_bps"].max() < kept["goodput_bps"].min()
    # Without the fallback every connection keeps ECN and its control.
    f = flows("ecn_fallback = false\n")
    assert (f["ecn_reductions"] > 0).all()


def test_ecn_fallback_needs_ecn():
    bad = TERRESTRIAL.format(profile="linux", extra="ecn_fallback = true")
    with pytest.raises(satqm.ConfigError, match=r"tcp\.ecn_fallback: needs ECN"):
        satqm.Scenario.from_toml(bad)
