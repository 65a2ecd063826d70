"""TCP throughput formulas and paper 004's slow-start loss arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pytest
from satqm.models.tcp import (
    mathis_constant,
    mathis_throughput,
    padhye_expected_window,
    padhye_f,
    padhye_throughput,
    padhye_throughput_approx,
    padhye_timeout_probability,
    prob_loss_in_first_packets,
    prob_loss_in_round,
    prob_loss_within_rounds,
    prob_multiple_losses,
    slow_start_loss_reaction,
    slow_start_packets_sent,
    slow_start_round,
)


def test_mathis_constants():
    # Mathis et al. 1997: C = sqrt(3/2) ~ 1.22 without, sqrt(3/4) ~ 0.87 with delayed ACKs.
    assert mathis_constant(1) == pytest.approx(1.2247449, rel=1e-7)
    assert mathis_constant(2) == pytest.approx(0.8660254, rel=1e-7)
    assert round(mathis_constant(1), 2) == 1.22
    assert round(mathis_constant(2), 2) == 0.87


def test_mathis_known_point():
    # 1460-byte segments, RTT 100 ms, p = 1 %: 14600 B/s * 1.2247449 / 0.1
    assert mathis_throughput(1460, 0.1, 0.01) == pytest.approx(178_812.75, rel=1e-5)
    # delayed ACKs scale by 1/sqrt(2)
    assert mathis_throughput(1460, 0.1, 0.01, b=2) == pytest.approx(
        178_812.75 / math.sqrt(2), rel=1e-5
    )
    # explicit C override, vectorised over p
    out = mathis_throughput(1.0, 0.5, np.array([0.01, 0.04]), c=1.0)
    np.testing.assert_allclose(out, [20.0, 10.0])


def test_padhye_components():
    assert padhye_f(0.0) == 1.0
    assert padhye_f(0.5) == pytest.approx(4.0)  # 1 + 6 * 0.5
    # Q-hat is 1 for windows of three packets or fewer, ~3/w for small p
    assert padhye_timeout_probability(3, 0.01) == pytest.approx(1.0)
    assert padhye_timeout_probability(2, 0.01) == 1.0
    assert padhye_timeout_probability(30, 1e-5) == pytest.approx(0.1, rel=1e-3)
    # E[W_u] ~ sqrt(8/(3bp)) for small p
    assert padhye_expected_window(1e-6, 2) == pytest.approx(math.sqrt(8 / 6e-6), rel=1e-3)


def test_padhye_limits():
    # No timeouts, no window limit, small p: the full model tends to sqrt(3/(2bp))/RTT.
    for b in (1, 2):
        ratio = padhye_throughput(0.1, 1e-6, 0.0, b=b) / mathis_throughput(1, 0.1, 1e-6, b=b)
        assert ratio == pytest.approx(1.0, abs=1e-3)
    # Window-limited: W_max / RTT.
    assert padhye_throughput(0.1, 1e-6, 1.0, w_max=20) == pytest.approx(200.0, rel=1e-3)
    assert padhye_throughput_approx(0.1, 1e-6, 1.0, w_max=20) == pytest.approx(200.0)


def test_padhye_known_point_and_approximation():
    # Full model at RTT = 200 ms, p = 1 %, T0 = 1 s, b = 2, evaluated by hand:
    p, rtt, t0, b = 0.01, 0.2, 1.0, 2.0
    k = (2 + b) / (3 * b)
    ew = k + math.sqrt(8 * (1 - p) / (3 * b * p) + k * k)
    s = 1 - p
    qh = min(1.0, (1 - s**3) * (1 + s**3 * (1 - s ** (ew - 3))) / (1 - s**ew))
    f = 1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6
    expected = (s / p + ew + qh / s) / (rtt * (b / 2 * ew + 1) + qh * t0 * f / s)
    assert padhye_throughput(rtt, p, t0, b) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(38.16, abs=0.01)
    # closed-form approximation: 1/(0.2 sqrt(0.04/3) + min(1, 3 sqrt(0.06/8)) 0.01 (1.0032))
    assert padhye_throughput_approx(rtt, p, t0, b) == pytest.approx(38.91, abs=0.01)
    # timeouts only lower the throughput
    assert padhye_throughput(rtt, p, 2.0, b) < padhye_throughput(rtt, p, t0, b)


def test_slow_start_loss_paper_004():
    # Section II: 1 - (1 - 0.04)^64 = 0.9267
    assert prob_loss_in_first_packets(0.04, 64) == pytest.approx(0.9267, abs=5e-5)
    assert prob_loss_in_first_packets(0.0, 64) == 0.0
    # the 15th packet leaves with cwnd = 8 packets (8 KB), in round 4
    assert slow_start_round(15) == (4.0, 8.0)
    assert slow_start_round(8) == (4.0, 8.0)
    assert slow_start_round(7) == (3.0, 4.0)
    assert slow_start_round(1) == (1.0, 1.0)
    rounds, cwnd = slow_start_round(np.arange(1, 16))
    np.testing.assert_array_equal(rounds, [1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4])
    np.testing.assert_array_equal(cwnd, 2.0 ** (rounds - 1))
    # ... so ssthresh goes 64 KB -> 4 KB and cwnd 8 KB -> 1 KB (Tahoe)
    assert slow_start_loss_reaction(15, variant="tahoe") == (4.0, 1.0)
    assert slow_start_loss_reaction(15, variant="reno") == (4.0, 4.0)
    # "dropped earlier (in the first 3 round-trip times)": 7 packets
    assert slow_start_packets_sent(3) == 7.0
    assert prob_loss_within_rounds(0.04, 3) == pytest.approx(1 - 0.96**7)


def test_slow_start_round_with_larger_initial_window():
    # IW = 4: rounds carry 4, 8, 16 packets
    assert slow_start_round(4, 4) == (1.0, 4.0)
    assert slow_start_round(5, 4) == (2.0, 8.0)
    assert slow_start_round(12, 4) == (2.0, 8.0)
    assert slow_start_round(13, 4) == (3.0, 16.0)


def test_first_loss_round_distribution_is_consistent():
    p = 0.04
    per_round = [prob_loss_in_round(p, r) for r in range(1, 7)]
    # rounds 1..6 carry the first 63 packets
    assert sum(per_round) == pytest.approx(prob_loss_in_first_packets(p, 63))


def test_multiple_losses_binomial():
    p, w = 0.04, 8
    expected = 1 - (1 - p) ** w - w * p * (1 - p) ** (w - 1)
    assert prob_multiple_losses(p, w) == pytest.approx(expected)
    assert prob_multiple_losses(p, w, m=1) == pytest.approx(1 - (1 - p) ** w)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: mathis_throughput(1460, 0.1, 0.0), "p"),
        (lambda: mathis_throughput(1460, -0.1, 0.01), "rtt"),
        (lambda: mathis_throughput(float("nan"), 0.1, 0.01), "mss"),
        (lambda: mathis_constant(0.5), "b"),
        (lambda: padhye_throughput(0.1, 1.5, 1.0), "p"),
        (lambda: padhye_throughput(0.1, 0.01, -1.0), "t0"),
        (lambda: padhye_throughput(0.1, 0.01, 1.0, w_max=0), "w_max"),
        (lambda: prob_loss_in_first_packets(0.04, -1), "k"),
        (lambda: slow_start_round(0), "packet_index"),
        (lambda: slow_start_round(2.5), "packet_index"),
        (lambda: slow_start_loss_reaction(3, variant="vegas"), "variant"),
        (lambda: prob_multiple_losses(0.1, 5, m=0), "m"),
    ],
)
def test_invalid_inputs_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
