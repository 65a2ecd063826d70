"""PI AQM design rule (Hollot et al. 2001), discretisation, ITSE, tuning."""

from __future__ import annotations

import math

import numpy as np
import pytest
from satqm.models.pi import (
    fluid_pi_simulator,
    itse,
    pi_ab_to_gains,
    pi_design,
    pi_discretize,
    pi_gains_to_ab,
    pi_loop_response,
    pi_phase_margin,
    tcp_plant_gain,
    tcp_plant_poles,
    tcp_plant_response,
    tune_pi_itse,
)

# Hollot et al. (INFOCOM 2001) example: 15 Mb/s of 500-byte packets,
# N- = 60 TCP sessions, R+ = 246 ms, sampled at 160 Hz.
C, N, R, FS = 3750.0, 60.0, 0.246, 160.0


def test_plant():
    p_tcp, p_q = tcp_plant_poles(C, N, R)
    assert p_tcp == pytest.approx(2 * N / (R**2 * C))
    assert p_q == pytest.approx(1 / R)
    assert tcp_plant_gain(C, N, R) == pytest.approx((R * C) ** 3 / (2 * N) ** 2)
    # DC gain, and the two forms of P(s) agree
    assert tcp_plant_response(0.0, C, N, R) == pytest.approx(tcp_plant_gain(C, N, R))
    w = 0.7
    direct = (C**2 / (2 * N)) * np.exp(-1j * w * R) / ((1j * w + p_tcp) * (1j * w + p_q))
    assert tcp_plant_response(w, C, N, R) == pytest.approx(direct)


def test_hollot_example_a_b():
    d = pi_design(C, N, R)
    assert d.z == pytest.approx(0.53, abs=0.005)  # paper: z = 0.53 rad/s
    assert d.K_pi == pytest.approx(9.64e-6, rel=5e-3)  # paper: K_PI = 9.64e-6
    a, b = pi_discretize(d, FS)
    # paper: a = 1.822e-5, b = 1.816e-5
    assert a == pytest.approx(1.822e-5, abs=5e-9)
    assert b == pytest.approx(1.816e-5, abs=5e-9)
    # the paper's own rounded z and K_PI give the same coefficients
    a2, b2 = pi_gains_to_ab(9.64e-6 / 0.53, 9.64e-6, 1 / FS)
    assert (round(a2, 8), round(b2, 8)) == (1.822e-5, 1.816e-5)


def test_gain_rules():
    paper = pi_design(C, N, R)
    unity = pi_design(C, N, R, gain_rule="unity")
    # "unity" puts |L(j omega_g)| = 1 exactly; "paper" is 1/|j omega_g R + 1|^2 of it
    assert abs(pi_loop_response(unity.omega_g, unity.Kp, unity.Ki, C, N, R)) == pytest.approx(1.0)
    mag = abs(pi_loop_response(paper.omega_g, paper.Kp, paper.Ki, C, N, R))
    assert mag == pytest.approx(1 / (1 + (paper.omega_g * R) ** 2))
    assert pi_discretize(unity, FS)[0] == pytest.approx(1.853e-5, abs=5e-9)
    # omega_g can be set; K scales with it
    assert pi_design(C, N, R, omega_g=0.1).K_pi < paper.K_pi


def test_phase_margin():
    d = pi_design(C, N, R)
    wc, pm = pi_phase_margin(d.Kp, d.Ki, C, N, R)
    assert abs(pi_loop_response(wc, d.Kp, d.Ki, C, N, R)) == pytest.approx(1.0, rel=1e-9)
    assert math.degrees(pm) == pytest.approx(75.4, abs=0.2)
    # the loop at the phase-margin frequency has the phase the margin says
    assert np.angle(pi_loop_response(wc, d.Kp, d.Ki, C, N, R)) == pytest.approx(pm - math.pi)
    # more flows or shorter RTT only help (robust design); 30x gain destabilises
    assert pi_phase_margin(d.Kp, d.Ki, C, 2 * N, 0.2)[1] > 0
    assert pi_phase_margin(30 * d.Kp, 30 * d.Ki, C, N, R)[1] < 0


@pytest.mark.parametrize("method", ["bilinear", "backward", "forward"])
def test_gain_conversions_round_trip(method):
    kp, ki, T = 1.8e-5, 9.6e-6, 1 / 160
    a, b = pi_gains_to_ab(kp, ki, T, method)
    assert a > b
    assert a - b == pytest.approx(ki * T)
    kp2, ki2 = pi_ab_to_gains(a, b, T, method)
    assert kp2 == pytest.approx(kp, rel=1e-12)
    assert ki2 == pytest.approx(ki, rel=1e-9)


def test_gain_conversion_formulas():
    assert pi_gains_to_ab(2.0, 8.0, 0.5, "bilinear") == (4.0, 0.0)
    assert pi_gains_to_ab(2.0, 8.0, 0.5, "backward") == (6.0, 2.0)
    assert pi_gains_to_ab(2.0, 8.0, 0.5, "forward") == (2.0, -2.0)
    kp, ki = pi_ab_to_gains(np.array([3.0, 5.0]), np.array([1.0, 5.0]), 0.5)
    np.testing.assert_allclose(kp, [2.0, 5.0])
    np.testing.assert_allclose(ki, [4.0, 0.0])


def test_itse_known_integrals():
    t = np.linspace(0.0, 10.0, 11)
    assert itse(t, np.ones_like(t)) == pytest.approx(50.0)  # int_0^10 t dt
    t = np.linspace(0.0, 40.0, 400_001)
    assert itse(t, np.exp(-t)) == pytest.approx(0.25, rel=1e-6)  # int t e^-2t dt
    assert itse(t, 2 * np.exp(-t)) == pytest.approx(1.0, rel=1e-6)
    assert itse([0.0, 1.0], [np.inf, 0.0]) == math.inf


def test_nelder_mead_finds_a_known_optimum():
    # e(t) = u e^-t + v t e^-t with u, v the log-distances to (1e-5, 10^-5.5):
    # J is a positive-definite quadratic form in (u, v), zero at the optimum.
    t = np.linspace(0.0, 30.0, 3001)

    def simulate(kp, ki):
        u, v = math.log10(kp) + 5.0, math.log10(ki) + 5.5
        return t, (u + v * t) * np.exp(-t)

    res = tune_pi_itse(simulate, (1e-4, 1e-4), xatol=1e-6, fatol=1e-14)
    assert res.success
    assert res.Kp == pytest.approx(1e-5, rel=1e-3)
    assert res.Ki == pytest.approx(10**-5.5, rel=1e-3)
    assert res.J < 1e-10 < res.J0
    lin = tune_pi_itse(simulate, (2e-5, 2e-5), log_space=False, maxiter=5)
    assert lin.nfev > 1


def test_fluid_driven_tuning_improves_itse():
    # Hollot's operating point in the fluid model, q_ref = 200 packets; start the
    # simplex from the design rule. The tuned loop removes the design's
    # overshoot (~150 packets), cutting ITSE by more than half.
    sim = fluid_pi_simulator(N=N, C=C, Tp=0.2, q_ref=200, duration=40.0, dt=2e-3)
    d = pi_design(C, N, R)
    t, e = sim(d.Kp, d.Ki)
    assert e.max() > 100  # the design overshoots q_ref
    res = tune_pi_itse(sim, (d.Kp, d.Ki), maxiter=15)
    assert res.J < 0.5 * res.J0
    t, e = sim(res.Kp, res.Ki)
    assert t[0] == 0.0 and t[-1] == pytest.approx(40.0)
    assert itse(t, e) == pytest.approx(res.J)
    assert abs(e[-1]) < 1.0  # still regulates to q_ref


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: pi_design(0, N, R), "C"),
        (lambda: pi_design(C, -1, R), "N_min"),
        (lambda: pi_design(C, N, float("nan")), "R_max"),
        (lambda: pi_design(C, N, R, omega_g=0), "omega_g"),
        (lambda: pi_design(C, N, R, gain_rule="x"), "gain_rule"),
        (lambda: pi_gains_to_ab(-1, 1, 0.1), "Kp"),
        (lambda: pi_gains_to_ab(1, 1, 0), "T"),
        (lambda: pi_gains_to_ab(1, 1, 0.1, method="zoh"), "method"),
        (lambda: pi_ab_to_gains(1.0, 2.0, 0.1), "a must be >= b"),
        (lambda: pi_discretize(pi_design(C, N, R), -160), "fs"),
        (lambda: itse([0, 1, 1], [1, 1, 1]), "increasing"),
        (lambda: itse([0, 1], [1, 1, 1]), "same length"),
        (lambda: tune_pi_itse(lambda kp, ki: ([0, 1], [0, 0]), (0.0, 1.0)), "x0"),
        (lambda: tune_pi_itse(None, (1.0, 1.0)), "simulate"),
    ],
)
def test_invalid_inputs_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
