"""AVQ linearisation and the Theorem 1 design rule (paper 002)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from satqm.models.avq import (
    avq_alpha_max,
    avq_characteristic,
    avq_crossover_frequency,
    avq_is_stable,
    avq_linear_response,
    avq_linearize,
    avq_max_delay,
    avq_min_users,
    avq_stability_margin,
)

# Paper 002, Sec. 3.1: 10 Mb/s with 1000-byte packets, gamma = 0.98,
# d = Tp + q_max / C = 130 ms + 100 packets / 1250 packets/s = 210 ms.
C_PKTS = 10e6 / 8 / 1000
GAMMA = 0.98
D = 0.130 + 100 / C_PKTS


def test_design_delay_is_the_papers_210_ms():
    assert D == pytest.approx(0.210)


def test_paper_example_alpha_below_0_17_is_stable():
    # "Using the design rule in Theorem 1, any alpha < 0.17 will ensure stability."
    # N_min is not in the extracted text; 40 flows is the smallest head count for
    # which the reconstructed rule gives alpha* >= 0.17 (see docs/models.md).
    a_star = avq_alpha_max(C_PKTS, GAMMA, D, 40)
    assert 0.17 <= a_star < 0.18
    assert a_star == pytest.approx(0.1770, abs=5e-4)
    n_min = avq_min_users(0.17, C_PKTS, GAMMA, D)
    assert 39.0 < n_min <= 40.0
    assert math.ceil(n_min) == 40
    # the paper's experiments use alpha = 0.15
    assert avq_is_stable(0.15, C_PKTS, GAMMA, D, 40)
    assert not avq_is_stable(0.18, C_PKTS, GAMMA, D, 40)


def test_equilibrium_and_gains():
    lin = avq_linearize(C_PKTS, GAMMA, D, 40)
    lam = GAMMA * C_PKTS
    assert lin.rate == lam
    assert lin.p_star == pytest.approx(40**2 / ((2 / 3) * (D * lam) ** 2))
    assert lin.p_star == pytest.approx(0.036266, rel=1e-4)
    # bufferless marking: C~* = lambda* (1 - p*)
    assert lin.vcap_star == pytest.approx(lam * (1 - lin.p_star))
    assert lin.K11 == pytest.approx(40 / (lam * D**2))
    assert lin.K2 == pytest.approx((2 / 3) * lam / 40)
    # equilibrium of eq. (2): 1/d^2 = beta x*^2 p*
    assert (2 / 3) * lin.x_star**2 * lin.p_star == pytest.approx(1 / D**2)


def test_crossover_frequency_solves_the_magnitude_condition():
    lin = avq_linearize(C_PKTS, GAMMA, D, 40)
    for alpha in (1e-6, 0.05, 0.177, 3.0, 1e4):
        w = avq_crossover_frequency(alpha, lin.K11, lin.K2)
        assert abs(1j * w * (1j * w + lin.K11)) == pytest.approx(alpha * lin.K2, rel=1e-10)
    assert avq_crossover_frequency(0.0, lin.K11, lin.K2) == 0.0


def test_alpha_star_puts_a_root_on_the_imaginary_axis():
    lin = avq_linearize(C_PKTS, GAMMA, D, 40)
    a_star = avq_alpha_max(C_PKTS, GAMMA, D, 40)
    assert avq_stability_margin(a_star, D, lin.K11, lin.K2) == pytest.approx(0.0, abs=1e-10)
    w = avq_crossover_frequency(a_star, lin.K11, lin.K2)
    scale = w * w + lin.K11 * w + a_star * lin.K2
    assert abs(avq_characteristic(1j * w, a_star, D, lin)) < 1e-10 * scale


@pytest.mark.parametrize(("factor", "grows"), [(0.9, False), (1.1, True)])
def test_linear_response_decays_below_and_grows_above_alpha_star(factor, grows):
    lin = avq_linearize(C_PKTS, GAMMA, D, 40)
    a_star = avq_alpha_max(C_PKTS, GAMMA, D, 40)
    t, dlam, _ = avq_linear_response(factor * a_star, D, lin, t_end=150.0, dt=1e-3)
    early = np.abs(dlam[(t > 10) & (t < 40)]).max()
    late = np.abs(dlam[t > 120]).max()
    assert bool(late > early) is grows


def test_rule_is_monotone_in_users_and_delay():
    # Theorem 1: alpha* designed for (d, N_min) also holds for d' <= d, N' >= N_min
    a = [avq_alpha_max(C_PKTS, GAMMA, D, n) for n in (30, 40, 60, 100)]
    assert all(x < y for x, y in zip(a, a[1:]))
    b = [avq_alpha_max(C_PKTS, GAMMA, d, 40) for d in (0.15, 0.21, 0.3)]
    assert all(x > y for x, y in zip(b, b[1:]))


def test_inverse_rules_agree():
    a_star = avq_alpha_max(C_PKTS, GAMMA, D, 40)
    assert avq_max_delay(a_star, C_PKTS, GAMMA, 40) == pytest.approx(D, rel=1e-8)
    assert avq_min_users(a_star, C_PKTS, GAMMA, D) == pytest.approx(40.0, rel=1e-8)


def test_beta_and_marking_options():
    # the classic Reno fluid model (beta = 1/2) allows a larger alpha
    assert avq_alpha_max(C_PKTS, GAMMA, D, 40, beta=0.5) > avq_alpha_max(C_PKTS, GAMMA, D, 40)
    lin = avq_linearize(C_PKTS, GAMMA, D, 40, marking="mm1", vq_buffer=100)
    # M/M/1 overflow p = (lambda/C~)^B: C~* = lambda p*^(-1/B)
    assert (lin.rate / lin.vcap_star) ** 100 == pytest.approx(lin.p_star)
    assert avq_alpha_max(C_PKTS, GAMMA, D, 40, marking="mm1", vq_buffer=100) > 0


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: avq_alpha_max(C_PKTS, 0.0, D, 40), "gamma"),
        (lambda: avq_alpha_max(C_PKTS, 1.2, D, 40), "gamma"),
        (lambda: avq_alpha_max(-1, GAMMA, D, 40), "C"),
        (lambda: avq_alpha_max(C_PKTS, GAMMA, float("nan"), 40), "d"),
        (lambda: avq_alpha_max(C_PKTS, GAMMA, D, 0), "N"),
        (lambda: avq_alpha_max(C_PKTS, GAMMA, D, 400), "N"),
        (lambda: avq_alpha_max(C_PKTS, GAMMA, D, 40, marking="red"), "marking"),
        (lambda: avq_alpha_max(C_PKTS, GAMMA, D, 40, marking="mm1"), "vq_buffer"),
        (lambda: avq_is_stable(-0.1, C_PKTS, GAMMA, D, 40), "alpha"),
        (lambda: avq_max_delay(0.0, C_PKTS, GAMMA, 40), "alpha"),
    ],
)
def test_invalid_inputs_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
