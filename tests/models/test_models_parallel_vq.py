"""Paper 004 Section VI: drop-tail rate/delay, Lindley map, Markov chain."""

from __future__ import annotations

import numpy as np
import pytest
from satqm.models.parallel_vq import (
    advance_distribution,
    droptail_delay_lower_bound,
    droptail_service_rate,
    flow_rates,
    gaussian_queue_approximation,
    gaussian_queue_pmf,
    iterate_lindley,
    lindley_equilibrium,
    lindley_map,
    lindley_map_derivative,
    lindley_map_second_derivative,
    lindley_step,
    max_stable_update_interval,
    monotone_update_interval,
    noise_std,
    peak_rate_condition,
    red_tail_service_rates,
    round_trip_time,
    stationary_distribution,
    transition_matrix,
)

# Fig. 17 of paper 004: C = 6 Mb/s, d_k = 64 ms, W_bar = 6.02e4 bits,
# sigma = 77021 bits/s for N = 20; 1 KB packets.
C, D, WBAR, N, SIGMA, L = 6e6, 0.064, 6.02e4, 20, 77021.0, 8000.0
RTT = N * WBAR / C


def test_droptail_delay_bound_80_ms():
    # Sec. IV: maxth_1 = 30 KB at 3 Mb/s, "the estimate of mean delay ... is about 80 ms"
    assert droptail_delay_lower_bound(30e3 * 8, 3e6) == pytest.approx(0.080)


def test_droptail_service_rate_eq1():
    q = np.array([0.0, 15e3, 30e3, 60e3]) * 8
    rates = droptail_service_rate(q, 3e6, 30e3 * 8)
    np.testing.assert_allclose(rates, [0.0, 1.5e6, 3e6, 3e6])
    bounded = droptail_service_rate(q, 3e6, 30e3 * 8, C1min=0.5e6, C1max=2e6)
    np.testing.assert_allclose(bounded, [0.5e6, 1.5e6, 2e6, 2e6])
    # the delay bound: q1 / C1 >= maxth1 / C whenever C1 > 0
    q1 = np.linspace(1, 60e3 * 8, 50)
    assert (q1 / droptail_service_rate(q1, 3e6, 30e3 * 8) >= 30e3 * 8 / 3e6 - 1e-12).all()


def test_red_tail_bandwidth_split():
    c1, c2 = red_tail_service_rates(
        np.array([0.0, 1e3, 2e3, 15e3, 40e3]), 3e6, 2e3, 30e3, 0.3e6, 2.4e6
    )
    np.testing.assert_allclose(c1, [0.0, 0.3e6, 0.2e6, 1.5e6, 2.4e6])
    np.testing.assert_allclose(c1 + c2, 3e6)


def test_rtt_rates_and_lindley_step():
    assert round_trip_time(0.064, 8e4, 8e6, q_b=8e3) == pytest.approx(0.064 + 0.01 + 0.001)
    T = flow_rates(0.0, WBAR, D, C, N)
    np.testing.assert_allclose(T, WBAR / D)
    assert lindley_step(1e5, T, C, 0.01, 5e5) == pytest.approx(1e5 + (T.sum() - C) * 0.01)
    assert lindley_step(1e5, T, C, 1.0, 5e5) == 5e5  # buffer bound
    assert lindley_step(1e5, [0.0], C, 1.0, 5e5) == 0.0  # empty queue


def test_equilibrium_homogeneous_and_heterogeneous():
    assert peak_rate_condition(WBAR, D, C, N)
    qe = lindley_equilibrium(WBAR, D, C, N)
    assert qe == pytest.approx(N * WBAR - D * C)  # 820,000 bits = 102.5 KB
    assert qe == pytest.approx(820_000.0)
    # f(q_e) = q_e for any S (eq. (9) does not depend on S)
    for S in (0.01, RTT, 3 * RTT):
        assert lindley_map(qe, WBAR, D, C, S, N) == pytest.approx(qe)
    d = np.linspace(0.02, 0.2, N)
    qh = lindley_equilibrium(WBAR, d, C)
    assert np.sum(WBAR / (d + qh / C)) == pytest.approx(C, rel=1e-12)
    assert not peak_rate_condition(WBAR, D, 100 * C, N)


def test_proposition_6_1_bound():
    S_max = max_stable_update_interval(WBAR, D, C, N)
    assert S_max == pytest.approx(2 * C * D**2 / (N * WBAR))
    assert S_max == pytest.approx(0.04082, abs=1e-5)
    # at the bound f'(0) = -1, and f' > -1 everywhere on [0, inf) below it
    assert lindley_map_derivative(0.0, WBAR, D, C, S_max, N) == pytest.approx(-1.0)
    q = np.linspace(0, 5e6, 101)
    assert (lindley_map_derivative(q, WBAR, D, C, 0.99 * S_max, N) > -1).all()
    assert (lindley_map_second_derivative(q, WBAR, D, C, S_max, N) > 0).all()  # convex
    # globally attracting from far away
    for q0 in (0.0, 5e6):
        path = iterate_lindley(q0, 400, WBAR, D, C, 0.9 * S_max, N=N)
        assert path[-1] == pytest.approx(lindley_equilibrium(WBAR, D, C, N), rel=1e-9)


def test_proposition_6_2_and_s_equal_rtt():
    S = monotone_update_interval(WBAR, D, C, N)
    assert S == pytest.approx(RTT)  # = q_e / C + d
    qe = lindley_equilibrium(WBAR, D, C, N)
    assert S == pytest.approx(qe / C + D)
    assert lindley_map_derivative(qe, WBAR, D, C, S, N) == pytest.approx(0.0, abs=1e-12)
    # S = RTT and 0.5 RTT converge; S = 2.5 RTT (f'(q_e) = -1.5) does not
    for factor in (0.5, 1.0):
        assert iterate_lindley(0.0, 100, WBAR, D, C, factor * RTT, N=N)[-1] == pytest.approx(qe)
    wild = iterate_lindley(0.0, 200, WBAR, D, C, 2.5 * RTT, N=N)
    assert np.abs(wild[-20:] - qe).max() > 0.1 * qe


def test_markov_chain_and_gaussian_approximation():
    S, B = RTT, 160
    T = transition_matrix(WBAR, D, C, S, B, L, SIGMA, N)
    assert T.shape == (B + 1, B + 1)
    np.testing.assert_allclose(T.sum(axis=1), 1.0, atol=1e-12)
    pi = stationary_distribution(T)
    assert pi.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(pi @ T, pi, atol=1e-12)
    # eq. (17) iterated from an empty queue reaches eq. (18)'s distribution
    np.testing.assert_allclose(advance_distribution(np.eye(B + 1)[0], T, 50), pi, atol=1e-9)
    j = np.arange(B + 1)
    mean_j = (pi * j).sum()
    std_j = np.sqrt((pi * (j - mean_j) ** 2).sum())
    qe, sd = gaussian_queue_approximation(WBAR, D, C, S, SIGMA, N)
    # eq. (21) with f'(q_e) = 0: std = S sqrt(N) sigma = 69,119 bits = 8.64 packets
    assert sd == pytest.approx(S * np.sqrt(N) * SIGMA)
    assert sd == pytest.approx(69_119, abs=1)
    # state j covers [jL, (j+1)L): compare bin centres; f's convexity lifts the
    # chain's mean by ~Var/(N W_bar) = 0.5 packet
    assert abs(L * (mean_j + 0.5) - qe) < L
    assert std_j * L == pytest.approx(sd, rel=0.03)
    g = gaussian_queue_pmf(WBAR, D, C, S, B, L, SIGMA, N)
    assert g.sum() == pytest.approx(1.0)
    assert 0.5 * np.abs(g - pi).sum() < 0.05  # total-variation distance


def test_gaussian_variance_grows_with_f_prime():
    qe, sd_rtt = gaussian_queue_approximation(WBAR, D, C, RTT, SIGMA, N)
    _, sd_half = gaussian_queue_approximation(WBAR, D, C, 0.5 * RTT, SIGMA, N)
    # S = RTT/2: f'(q_e) = 1/2, Var[Q/S] = N sigma^2 / (1 - 1/4)
    assert sd_half == pytest.approx(0.5 * RTT * np.sqrt(N * SIGMA**2 / 0.75))
    with pytest.raises(ValueError, match="not stable"):
        gaussian_queue_approximation(WBAR, D, C, 2.5 * RTT, SIGMA, N)


def test_noisy_sample_path_matches_eq_21():
    sd = noise_std(SIGMA, RTT, N)
    assert sd == pytest.approx(RTT * np.sqrt(N) * SIGMA)
    path = iterate_lindley(8e5, 4000, WBAR, D, C, RTT, B=1.28e6, sigma=SIGMA, N=N, seed=7)
    qe, sd21 = gaussian_queue_approximation(WBAR, D, C, RTT, SIGMA, N)
    assert path[100:].std() == pytest.approx(sd21, rel=0.06)
    assert path[100:].mean() == pytest.approx(qe, rel=0.01)
    assert path.max() <= 1.28e6 and path.min() >= 0.0


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: droptail_delay_lower_bound(0, 1e6), "maxth1"),
        (lambda: droptail_service_rate(-1, 1e6, 1e4), "q1"),
        (lambda: droptail_service_rate(1, 1e6, 1e4, C1min=2e6), "C1min"),
        (lambda: lindley_equilibrium(WBAR, D, C), "N"),
        (lambda: lindley_equilibrium(WBAR, np.ones(3) * D, C, N=4), "N"),
        (lambda: lindley_equilibrium(WBAR, -D, C, N), "d"),
        (lambda: lindley_equilibrium(WBAR, D, 100 * C, N), "eq. \\(8\\)"),
        (lambda: lindley_map(1.0, float("nan"), D, C, 0.1, N), "W_bar"),
        (lambda: lindley_map(1.0, WBAR, D, C, 0.0, N), "S"),
        (lambda: transition_matrix(WBAR, D, C, RTT, 0, L, SIGMA, N), "B_packets"),
        (lambda: transition_matrix(WBAR, D, C, RTT, 10, L, -1.0, N), "sigma"),
        (lambda: stationary_distribution([[0.5, 0.4], [0.5, 0.5]]), "row-stochastic"),
        (lambda: advance_distribution([0.5, 0.6], np.eye(2)), "sum to 1"),
        (lambda: iterate_lindley(0.0, -1, WBAR, D, C, RTT, N=N), "n"),
    ],
)
def test_invalid_inputs_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
