"""The AVQRED chapter's ODE model (paper 000, §8, eqs. (1)-(5)): Fourier fits,
closed forms, structural properties, the Figs. 14-16 claim, inputs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from satqm.models.avqred_ode import (
    CHAPTER_PARAMETERS,
    FourierSeries,
    GatewaySeries,
    avqred_ode_equilibrium,
    fit_fourier,
    fit_gateway_series,
    gateway_samples_from_results,
    offered_load_equilibrium,
    simulate_avqred_ode,
)

MU = CHAPTER_PARAMETERS["mu"]


def _samples(n=500, dt=0.1, period=50.0):
    t = 200.0 + dt * np.arange(n)
    d = 0.7 + 0.1 * np.sin(2 * np.pi * t / period) + 0.05 * np.cos(6 * np.pi * t / period)
    om = 1.0 + 0.2 * np.cos(4 * np.pi * t / period)
    return pd.DataFrame({"time_s": t, "d_s": d, "omega": om})


# ----- Fourier series --------------------------------------------------------


def test_fourier_series_values_period_and_derivative():
    s = FourierSeries(1.0, (0.5, 0.0), (0.0, 0.25), period=10.0, t0=2.0)
    assert s(2.0) == pytest.approx(1.5)
    assert s(2.0 + 2.5) == pytest.approx(1.0 + 0.25 * math.sin(math.pi))  # k=1 at quarter
    t = np.linspace(0, 30, 301)
    np.testing.assert_allclose(s(t), s(t + 10.0), atol=1e-12)  # periodic
    h = 1e-6
    np.testing.assert_allclose(
        s.derivative(t), (s(t + h) - s(t - h)) / (2 * h), rtol=1e-6, atol=1e-6
    )
    assert FourierSeries.from_dict(s.to_dict()) == s
    c = FourierSeries.constant(0.3)
    assert c.n_harmonics == 0 and c(123.4) == 0.3 and c.derivative(5.0) == 0.0


def test_fit_recovers_known_coefficients():
    t = 0.1 * np.arange(500)
    true = FourierSeries(2.0, (0.3, -0.1, 0.05), (0.2, 0.0, -0.07), period=50.0)
    fit = fit_fourier(t, true(t), n_harmonics=3)
    assert fit.period == pytest.approx(50.0)
    np.testing.assert_allclose([fit.a0, *fit.a, *fit.b], [true.a0, *true.a, *true.b], atol=1e-10)
    # Eight harmonics (the default) fit the same data with zeros above 3.
    fit8 = fit_fourier(t, true(t))
    assert fit8.n_harmonics == 8
    np.testing.assert_allclose(fit8.a[3:] + fit8.b[3:], 0.0, atol=1e-10)


@pytest.mark.parametrize("n", [11, 12])
def test_fit_with_every_harmonic_interpolates(n):
    rng = np.random.default_rng(1)
    t = 0.1 * np.arange(n)
    y = rng.normal(size=n)
    fit = fit_fourier(t, y, n_harmonics=None)
    assert fit.n_harmonics == (n - 1) // 2
    if n % 2:  # 2K + 1 = n unknowns: exact
        np.testing.assert_allclose(fit(t), y, atol=1e-9)
    else:  # one short of the Nyquist term: least squares
        assert np.sum((fit(t) - y) ** 2) < np.sum((y - y.mean()) ** 2)


def test_constant_samples_give_a_constant_series():
    t = 0.1 * np.arange(50)
    fit = fit_fourier(t, np.full(50, 0.42))
    assert fit.a0 == pytest.approx(0.42)
    np.testing.assert_allclose(fit.a + fit.b, 0.0, atol=1e-12)


def test_fit_rejects_bad_samples():
    with pytest.raises(ValueError, match="t must be strictly increasing"):
        fit_fourier([0, 1, 1, 2], [1, 2, 3, 4])
    with pytest.raises(ValueError, match="n_harmonics must be <= 2"):
        fit_fourier(np.arange(5.0), np.ones(5), n_harmonics=3)
    with pytest.raises(ValueError, match="t and y must have the same length"):
        fit_fourier(np.arange(5.0), np.ones(4))
    with pytest.raises(ValueError, match="y must not be NaN"):
        fit_fourier(np.arange(5.0), [1, 2, np.nan, 4, 5])
    with pytest.raises(ValueError, match="period must be > 0"):
        fit_fourier(np.arange(5.0), np.ones(5), period=-1)


# ----- measured series: sources ---------------------------------------------


def test_gateway_series_from_frame_csv_mapping_arrays(tmp_path):
    df = _samples(600)
    a = fit_gateway_series(df, t_from=210.0)
    assert len(a.samples) == 500 and a.samples.time_s.iloc[0] == pytest.approx(210.0)
    # omega is taken relative to its mean over the fitted samples.
    assert a.samples.omega.mean() == pytest.approx(1.0) and a.omega.a0 == pytest.approx(1.0)
    raw = fit_gateway_series(df.assign(omega=2 * df.omega), t_from=210.0, normalize_omega=False)
    assert raw.omega.a0 == pytest.approx(2 * df.omega[df.time_s >= 210.0].iloc[:500].mean())
    path = tmp_path / "samples.csv"
    df.to_csv(path, index=False)
    b = fit_gateway_series(path, t_from=210.0)
    c = fit_gateway_series({k: df[k].to_numpy() for k in df}, t_from=210.0)
    e = fit_gateway_series(t=df.time_s, d=df.d_s, omega=df.omega, t_from=210.0)
    for other in (b, c, e):
        assert other.d == a.d and other.omega == a.omega
    # The fitted pair passes through unchanged, and survives JSON.
    assert fit_gateway_series(a) is a
    assert GatewaySeries.from_dict(a.to_dict()) == a
    # A smooth series with 3 harmonics is fitted closely by 8.
    np.testing.assert_allclose(a.d(a.samples.time_s), a.samples.d_s, atol=1e-3)


def test_gateway_series_bad_sources(tmp_path):
    df = _samples(100)
    with pytest.raises(ValueError, match="missing omega"):
        fit_gateway_series(df.drop(columns="omega"), n_points=None)
    with pytest.raises(ValueError, match="source must be an existing CSV file"):
        fit_gateway_series(tmp_path / "nope.csv")
    with pytest.raises(ValueError, match="n_points must be <= the 100 samples"):
        fit_gateway_series(df)
    with pytest.raises(ValueError, match="either source or t, d and omega"):
        fit_gateway_series(df, t=df.time_s, d=df.d_s, omega=df.omega)
    with pytest.raises(ValueError, match="d_s must be >= 0"):
        fit_gateway_series(df.assign(d_s=-1.0), n_points=None)
    with pytest.raises(ValueError, match="source must be a CSV path"):
        fit_gateway_series(42)


class _FakeResults:
    """receive passes a constant rate; transmit takes the same bytes D later."""

    def __init__(self, D=2.0, dt=0.1, n=200, rate_bps=12e6, retrans=0):
        t = dt * np.arange(1, n + 1)
        rx = np.full(n, rate_bps)
        tx = np.where(t > D + 1e-9, rate_bps, 0.0)
        self._links = {
            "receive": pd.DataFrame(
                {
                    "throughput_bps": rx,
                    "arrivals": rx * dt / 8 / 1500,
                    "drops": 0.0,
                    "queue_packets": 0,
                    "queue_bytes": 0,
                },
                index=pd.Index(t, name="time_s"),
            ),
            "transmit": pd.DataFrame(
                {
                    "throughput_bps": tx,
                    "arrivals": tx * dt / 8 / 1500,
                    "drops": 0.0,
                    "queue_packets": 0,
                    "queue_bytes": 0,
                },
                index=pd.Index(t, name="time_s"),
            ),
        }
        self.flows = pd.DataFrame(
            {
                "kind": ["relay", "relay"],
                "rtt_min_s": [0.7, 0.004],
                "segments_sent": [1000, 1000],
                "retransmits": [retrans, 500],
            }
        )

    def link(self, name):
        return self._links[name]


def test_delay_is_the_distance_between_cumulative_curves():
    s = gateway_samples_from_results(_FakeResults(D=2.0))
    late = s[s.time_s > 3.0]
    np.testing.assert_allclose(late.d_s, 2.0, atol=1e-9)
    np.testing.assert_allclose(s.omega, 1.0)
    np.testing.assert_allclose(late.pep_packets, 12e6 / 8 * 2.0 / 1500)
    # Retransmissions on the satellite backbone (min RTT >= 0.1 s) are
    # removed in proportion; the terrestrial relay's are not counted.
    r = gateway_samples_from_results(_FakeResults(D=2.0, retrans=100))
    assert (r[r.time_s > 3.0].d_s > 2.0).all()


# ----- closed forms ---------------------------------------------------------


def test_offered_load_equilibrium_hand_value():
    # lambda* = (m/R) sqrt(2 (1-p)/p): 400/0.06 * sqrt(2) at p = 1/2
    assert offered_load_equilibrium(0.5, 400, 0.06) == pytest.approx(400 / 0.06 * math.sqrt(2))
    with pytest.raises(ValueError, match=r"p must be in \(0.0, 1.0\]"):
        offered_load_equilibrium(0.0, 400, 0.06)


def test_fixed_p_reaches_eq1_equilibrium_and_queues_integrate():
    p = 0.2
    res = simulate_avqred_ode("fixed", 20.0, p0=p, d=0.5, record_interval=None)
    lam = offered_load_equilibrium(p, 400, 0.06)
    assert res.lam[-1] == pytest.approx(lam, rel=1e-9)
    # Both queues grow at (1 - p) lambda* - mu once lambda has settled.
    i, j = np.searchsorted(res.t, [10.0, 20.0])
    slope = (res.q[j] - res.q[i]) / (res.t[j] - res.t[i])
    assert slope == pytest.approx((1 - p) * lam - MU, rel=1e-6)


def test_avqred_equilibrium_and_the_delayed_virtual_queue():
    eq = avqred_ode_equilibrium(m=400, R=0.06, mu=MU)
    # (1 - p*)^(3/2) / sqrt(p*) = mu R / (m sqrt 2): the admitted load is mu.
    assert eq["admitted"] == pytest.approx(MU, rel=1e-10)
    assert eq["p"] == pytest.approx(0.70629, abs=1e-5)
    res = simulate_avqred_ode("avqred", 60.0, d=0.5)
    assert res.p[-1] == pytest.approx(eq["p"], rel=1e-9)
    assert res.lam[-1] == pytest.approx(eq["lam"], rel=1e-9)
    assert 60 <= res.v[-1] <= 120
    # With constant d, omega = 1 and tau = 1, eq. (2) is eq. (3) delayed by d:
    # the transmit queue is the virtual queue d seconds earlier.
    k = 5  # 0.5 s / 0.1 s recording interval
    np.testing.assert_allclose(res.q[k:], res.v[:-k], atol=1e-9)
    # Below full target utilization the transmit queue drains.
    low = simulate_avqred_ode("avqred", 60.0, d=0.5, tau=0.9)
    assert low.q[-1] == 0.0
    assert low.lam[-1] == pytest.approx(
        avqred_ode_equilibrium(m=400, R=0.06, mu=MU, tau=0.9)["lam"], rel=1e-9
    )


def test_red_without_delay_settles_on_the_same_equilibrium():
    # m = 100: p* = 0.392 < max_p = 0.7, inside RED's region; d = 0 is stable.
    eq = avqred_ode_equilibrium(m=100, R=0.06, mu=MU, max_p=0.7)
    res = simulate_avqred_ode("red", 120.0, m=100)
    assert res.p[-1] == pytest.approx(eq["p"], rel=1e-9)
    assert res.lam[-1] == pytest.approx(eq["lam"], rel=1e-9)
    assert 60 <= res.q[-1] <= 120 and res.stats("q", 60)["std"] < 1e-9


def test_avq_marks_on_its_threshold():
    res = simulate_avqred_ode("avq", 60.0, d=0.5)
    st = res.stats("v", 20.0)
    assert abs(st["mean"] - 30.0) < 15.0  # hovers around (max_th - min_th)/2
    assert res.stats("p", 20.0)["mean"] == pytest.approx(
        avqred_ode_equilibrium(m=400, R=0.06, mu=MU)["p"], abs=0.02
    )


def test_constant_series_limit():
    a = simulate_avqred_ode("red", 30.0, d=0.3, omega=1.1)
    b = simulate_avqred_ode(
        "red", 30.0, d=FourierSeries.constant(0.3), omega=FourierSeries.constant(1.1)
    )
    t = 0.1 * np.arange(500)
    fitted = GatewaySeries(fit_fourier(t, np.full(500, 0.3)), fit_fourier(t, np.full(500, 1.1)))
    c = simulate_avqred_ode("red", 30.0, series=fitted)
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_allclose(c.q, a.q, rtol=1e-9, atol=1e-6)


def test_flow_conserving_delivers_what_was_admitted():
    # Open loop: constant admitted rate g, d(t) = 1 + 0.5 sin(2 pi t / 10).
    p = 0.2
    lam = offered_load_equilibrium(p, 400, 0.06)
    g = (1 - p) * lam
    d = FourierSeries(1.0, (0.0,), (0.5,), period=10.0)
    T = 12.5  # d(0) = 1, d(T) = 1.5
    kw = dict(p0=p, lam0=lam, d=d, mu=1e-9, dt=1e-4, record_interval=None)
    printed = simulate_avqred_ode("fixed", T, **kw)
    fc = simulate_avqred_ode("fixed", T, flow_conserving=True, **kw)
    # Printed (2): g arrives at every instant. Flow-conserving: what was
    # admitted in [-d(0), T - d(T)] has arrived.
    assert printed.q[-1] == pytest.approx(g * T, rel=1e-6)
    assert fc.q[-1] == pytest.approx(g * (T - d(T) + d(0)), rel=1e-3)


def test_figs14_16_avqred_queue_is_lower_and_steadier_than_red():
    """The chapter's claim (Figs. 14-16): with RED 4's parameters and the
    PEP delay, RED's transmit queue oscillates; AVQRED's has a lower mean and
    standard deviation. Synthetic series: d about one satellite round trip."""
    period = 50.0
    d = FourierSeries(0.7, (0.07, 0.03), (0.04, -0.02), period)
    omega = FourierSeries(1.0, (0.1, 0.05, 0.03), (0.05, -0.04, 0.02), period)
    series = GatewaySeries(d, omega)
    red = simulate_avqred_ode("red", 300.0, series=series).stats("q", 100.0)
    avqred = simulate_avqred_ode("avqred", 300.0, series=series).stats("q", 100.0)
    assert avqred["mean"] < red["mean"]
    assert avqred["std"] < 0.1 * red["std"]


def test_recording_and_frame():
    res = simulate_avqred_ode("avqred", 2.0, d=0.2, record_interval=0.5)
    np.testing.assert_allclose(res.t, [0, 0.5, 1.0, 1.5, 2.0])
    f = res.frame()
    assert list(f.columns) == ["t", "lam", "q", "v", "w", "p", "d", "omega"]
    assert res.params["max_p"] == 1.0  # AVQRED has no max_p
    assert simulate_avqred_ode("red", 1.0).params["max_p"] == 0.7  # RED 4
    with pytest.raises(ValueError, match="name must be one of"):
        res.stats("x")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(variant="blue"), "variant must be one of"),
        (dict(m=-1), "m must be > 0"),
        (dict(R=0), "R must be > 0"),
        (dict(mu=float("nan")), "mu must not be NaN"),
        (dict(min_th=120, max_th=60), "min_th must be < max_th"),
        (dict(w_q=1.0), r"w_q must be in \(0.0, 1.0\)"),
        (dict(tau=1.5), r"tau must be in \(0.0, 1.0\]"),
        (dict(max_p=0), r"max_p must be in \(0.0, 1.0\]"),
        (dict(kappa=0), "kappa must be > 0"),
        (dict(d=-0.1), "d must be >= 0"),
        (dict(omega="x"), "omega must be a FourierSeries or a number"),
        (dict(red_input="v"), "red_input must be 'q' or 'w'"),
        (dict(duration=0), "duration must be > 0"),
        (dict(dt=2.0), "dt must be <= duration"),
        (dict(buffer=0), "buffer must be > 0"),
        (dict(q0=10, buffer=5), "q0 must be <= buffer"),
        (dict(p0=2), r"p0 must be in \[0.0, 1.0\]"),
        (
            dict(series=GatewaySeries(FourierSeries.constant(1), FourierSeries.constant(1)), d=1),
            "either series or d and omega",
        ),
    ],
)
def test_bad_inputs_name_the_parameter(kwargs, message):
    args = {"variant": "red", "duration": 1.0, **kwargs}
    with pytest.raises(ValueError, match=message):
        simulate_avqred_ode(args.pop("variant"), args.pop("duration"), **args)
