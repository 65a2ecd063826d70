"""Misra-Gong-Towsley fluid model: equilibria, backends, batching, inputs."""

from __future__ import annotations

import numpy as np
import pytest
from satqm.models.fluid import (
    avq_fluid_equilibrium,
    fixed_p_equilibrium,
    pi_equilibrium,
    red_drop_probability,
    red_equilibrium,
    simulate_fluid,
)
from satqm.models.pi import pi_design

RED = {"min_th": 50, "max_th": 550, "max_p": 0.1, "w_q": 1e-4, "gentle": True}


def _last(res, name, seconds=20.0):
    return res.time_average(name, res.t[-1] - seconds)


def test_red_profile():
    x = np.array([0, 49.9, 50, 300, 549.9, 550, 825, 1100, 2000])
    plain = red_drop_probability(x, 50, 550, 0.1)
    np.testing.assert_allclose(plain, [0, 0, 0, 0.05, 0.09998, 1, 1, 1, 1])
    gentle = red_drop_probability(x, 50, 550, 0.1, gentle=True)
    np.testing.assert_allclose(gentle, [0, 0, 0, 0.05, 0.09998, 0.1, 0.55, 1, 1])


def test_closed_form_equilibria():
    eq = fixed_p_equilibrium(60, 3750, 0.2, 0.01)
    assert eq["W"] == pytest.approx(np.sqrt(200))
    assert eq["q"] == pytest.approx(60 * np.sqrt(200) - 750)
    assert eq["rate"] == pytest.approx(3750)
    red = red_equilibrium(60, 3750, 0.2, 50, 550, 0.1, gentle=True)
    # W*^2 p* = 2 with W* = R* C / N and p* = RED(q*)
    assert red["W"] ** 2 * red["p"] == pytest.approx(2.0)
    assert red["W"] == pytest.approx((red["q"] / 3750 + 0.2) * 3750 / 60)
    assert red["p"] == pytest.approx(0.1 * (red["q"] - 50) / 500)
    assert red["q"] == pytest.approx(99.845, abs=1e-3)
    pi = pi_equilibrium(60, 3750, 0.2, 200)
    assert pi["W"] == pytest.approx((200 / 3750 + 0.2) * 3750 / 60)
    assert pi["p"] == pytest.approx(2 / pi["W"] ** 2)
    avq = avq_fluid_equilibrium(49, 1250, 0.1, 0.98)
    assert (avq["W"], avq["p"], avq["vcap"]) == pytest.approx((2.5, 0.32, 833.0))


def test_red_fluid_converges_to_equilibrium():
    res = simulate_fluid(60, 3750, 0.2, 300.0, aqm="red", **RED)
    eq = red_equilibrium(60, 3750, 0.2, 50, 550, 0.1, gentle=True)
    assert _last(res, "q")[0] == pytest.approx(eq["q"], rel=1e-3)
    assert _last(res, "W")[0] == pytest.approx(eq["W"], rel=1e-3)
    assert _last(res, "p")[0] == pytest.approx(eq["p"], rel=1e-3)
    assert _last(res, "aux")[0] == pytest.approx(eq["q"], rel=1e-3)  # average queue
    assert _last(res, "rate")[0] == pytest.approx(3750, rel=1e-3)


def test_pi_fluid_converges_to_q_ref():
    d = pi_design(3750, 60, 0.246)
    res = simulate_fluid(60, 3750, 0.2, 200.0, aqm="pi", q_ref=200, kp=d.Kp, ki=d.Ki)
    eq = pi_equilibrium(60, 3750, 0.2, 200)
    assert _last(res, "q")[0] == pytest.approx(200, rel=1e-4)
    assert _last(res, "p")[0] == pytest.approx(eq["p"], rel=1e-3)
    assert _last(res, "W")[0] == pytest.approx(eq["W"], rel=1e-3)
    # the same controller given as ns-2 coefficients (a, b) at 160 Hz
    res2 = simulate_fluid(60, 3750, 0.2, 200.0, aqm="pi", q_ref=200, a=1.822e-5, b=1.816e-5, fs=160)
    assert _last(res2, "q")[0] == pytest.approx(200, rel=1e-4)


def test_avq_fluid_converges_to_equilibrium():
    res = simulate_fluid(49, 1250, 0.1, 300.0, aqm="avq", gamma=0.98, alpha=0.15)
    eq = avq_fluid_equilibrium(49, 1250, 0.1, 0.98)
    assert _last(res, "rate")[0] == pytest.approx(0.98 * 1250, rel=1e-4)
    assert _last(res, "W")[0] == pytest.approx(eq["W"], rel=1e-4)
    assert _last(res, "p")[0] == pytest.approx(eq["p"], rel=1e-4)
    assert _last(res, "aux")[0] == pytest.approx(eq["vcap"], rel=1e-4)
    assert res.q[-1, 0] == 0.0  # utilisation gamma < 1 keeps the queue empty


def test_batch_members_reach_their_own_equilibria():
    N = np.array([20.0, 60.0, 120.0])
    p = np.array([0.02, 0.01, 0.005])
    res = simulate_fluid(N, 3750, 0.2, 120.0, aqm="fixed", p_fixed=p)
    assert res.W.shape == (res.t.size, 3)
    for i in range(3):
        eq = fixed_p_equilibrium(N[i], 3750, 0.2, p[i])
        assert _last(res, "W")[i] == pytest.approx(eq["W"], rel=1e-4)
        assert _last(res, "q")[i] == pytest.approx(eq["q"], rel=1e-3, abs=1e-6)
    frame = res.frame(1)
    assert list(frame.columns) == ["t", "W", "q", "p", "p_eff", "R", "rate", "aux"]
    assert frame["R"].iloc[-1] == pytest.approx(frame["q"].iloc[-1] / 3750 + 0.2)


@pytest.mark.parametrize(
    ("aqm", "kw"),
    [
        ("red", {**RED, "max_p": np.array([0.05, 0.1, 0.2])}),
        ("pi", {"q_ref": 200, "kp": 1.8e-5, "ki": np.array([9.6e-6, 2e-5, 5e-5])}),
        (
            "avq",
            {
                "gamma": 0.98,
                "alpha": np.array([0.15, 1.0, 5.0]),
                "vq_buffer": np.array([0.0, 20.0, 0.0]),
            },
        ),
        ("droptail", {"buffer": np.array([100.0, 300.0, 800.0])}),
        ("fixed", {"p_fixed": 0.01, "buffer": 150.0}),
    ],
)
def test_numpy_and_python_backends_agree_bit_for_bit(aqm, kw):
    N = np.array([60.0, 30.0, 90.0])
    a = simulate_fluid(N, 3750, 0.2, 8.0, aqm=aqm, backend="python", **kw)
    b = simulate_fluid(N, 3750, 0.2, 8.0, aqm=aqm, backend="numpy", **kw)
    for name in ("W", "q", "p", "p_eff", "aux"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_droptail_buffer_and_overflow_loss():
    res = simulate_fluid(30, 3750, 0.2, 60.0, aqm="droptail", buffer=100.0, record_interval=1e-3)
    assert res.q.max() <= 100.0
    assert res.q.max() == 100.0
    assert res.p_eff.max() > 0.0  # overflow is fed back as loss
    assert (res.p == 0).all()
    # without the loss feedback the windows (and the arrival rate) would grow
    # without bound; with it the mean arrival rate stays just under C (a small
    # drop-tail buffer, 100 packets against a 750-packet BDP, under-utilises)
    assert 0.8 < res.time_average("rate", 20.0)[0] / 3750 < 1.0


def test_recording_and_time_axis():
    res = simulate_fluid(
        60, 3750, 0.2, 2.0, dt=1e-3, aqm="fixed", p_fixed=0.01, record_interval=0.05
    )
    assert res.t.size == 41
    np.testing.assert_allclose(np.diff(res.t), 0.05)
    default = simulate_fluid(60, 3750, 0.2, 2.0, dt=1e-3, aqm="fixed", p_fixed=0.01)
    np.testing.assert_allclose(np.diff(default.t), 0.01)
    np.testing.assert_array_equal(default.W[::5], res.W)
    assert res.W[0, 0] == 1.0 and res.q[0, 0] == 0.0


def test_twenty_minutes_of_model_time():
    # Speed is measured by benchmarks, not asserted here.
    d = pi_design(3750, 60, 0.246)
    res = simulate_fluid(60, 3750, 0.2, 1200.0, dt=1e-3, aqm="pi", q_ref=200, kp=d.Kp, ki=d.Ki)
    assert res.t[-1] == pytest.approx(1200.0)
    assert abs(res.q[-1, 0] - 200) < 20  # the PI design settles at q_ref


@pytest.mark.parametrize(
    ("kw", "name"),
    [
        ({"N": -1}, "N"),
        ({"C": float("nan")}, "C"),
        ({"Tp": 0.0005}, "Tp"),
        ({"duration": 0}, "duration"),
        ({"dt": -1e-3}, "dt"),
        ({"aqm": "codel"}, "aqm"),
        ({"aqm": "red"}, "min_th"),
        ({"aqm": "red", "min_th": 600, "max_th": 550, "max_p": 0.1, "w_q": 1e-4}, "min_th"),
        ({"aqm": "red", "min_th": 50, "max_th": 550, "max_p": 1.5, "w_q": 1e-4}, "max_p"),
        ({"aqm": "red", "min_th": 50, "max_th": 550, "max_p": 0.1, "w_q": 1.0}, "w_q"),
        ({"aqm": "pi", "kp": 1e-5, "ki": 1e-5}, "q_ref"),
        ({"aqm": "pi", "q_ref": 100}, "kp"),
        ({"aqm": "avq", "gamma": 0.98}, "alpha"),
        ({"aqm": "avq", "gamma": 0.0, "alpha": 0.1}, "gamma"),
        ({"p_fixed": None}, "p_fixed"),
        ({"aqm": "droptail"}, "buffer"),
        ({"record_interval": 0.0015}, "record_interval"),
        ({"N": np.ones(2), "C": np.ones(3) * 100}, "broadcast"),
        ({"backend": "gpu"}, "backend"),
        ({"w_min": 10.0, "w_max": 5.0}, "w_min"),
        ({"buffer": 0.0}, "buffer"),
    ],
)
def test_invalid_inputs_name_the_parameter(kw, name):
    args = {
        "N": 10,
        "C": 1000.0,
        "Tp": 0.1,
        "duration": 1.0,
        "dt": 1e-3,
        "aqm": "fixed",
        "p_fixed": 0.1,
    }
    args.update(kw)
    with pytest.raises(ValueError, match=name):
        simulate_fluid(**args)


def test_equilibrium_errors():
    with pytest.raises(ValueError, match="no PI equilibrium"):
        pi_equilibrium(1000, 100, 0.01, 0)
    with pytest.raises(ValueError, match="no AVQ equilibrium"):
        avq_fluid_equilibrium(100, 100, 0.1, 0.98)
    with pytest.raises(ValueError, match="max_th"):
        # the TCP curve crosses RED's jump to 1 at max_th (non-gentle)
        red_equilibrium(60, 3750, 0.2, 50, 70, 0.001)
