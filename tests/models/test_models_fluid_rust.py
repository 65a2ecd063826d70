"""The Rust fluid kernel (``backend="rust"``) against the Python/numpy reference.

The three backends do the same floating-point operations in the same order,
so on one machine they agree to the last bit; the tolerance below only
leaves room for a different libm (``exp``/``log`` in RED's averaging
constant).
"""

from __future__ import annotations

import numpy as np
import pytest
from satqm.models import fluid
from satqm.models.fluid import simulate_fluid

_core = pytest.importorskip("satqm._core")

SERIES = ("W", "q", "p", "p_eff", "R", "rate", "aux")
RED = {"min_th": 50, "max_th": 550, "max_p": 0.1, "w_q": 1e-4, "gentle": True}
N3 = np.array([60.0, 30.0, 90.0])

CASES = {
    "red": ("red", RED),
    "red-batch": ("red", {**RED, "max_p": np.array([0.05, 0.1, 0.2])}),
    "red-plain-delta": (
        "red",
        {**RED, "gentle": False, "w_q": 0.002, "red_delta": 0.01, "q0": 700.0},
    ),
    "pi": ("pi", {"q_ref": 200, "kp": 1.8e-5, "ki": 9.6e-6}),
    "pi-ab-batch": (
        "pi",
        {"q_ref": np.array([50.0, 200, 400]), "a": 1.822e-5, "b": 1.816e-5, "fs": 160},
    ),
    "avq": ("avq", {"gamma": 0.98, "alpha": 0.15}),
    "avq-batch": (
        "avq",
        {
            "gamma": 0.98,
            "alpha": np.array([0.15, 1.0, 5.0]),
            "vq_buffer": np.array([0.0, 20.0, 0.0]),
            "vcap0": np.array([1000.0, 5000.0, 3000.0]),
        },
    ),
    "droptail": ("droptail", {"buffer": 100.0}),
    "droptail-batch": ("droptail", {"buffer": np.array([100.0, 300.0, 800.0]), "W0": 20.0}),
    "fixed-buffer": ("fixed", {"p_fixed": 0.01, "buffer": 150.0, "w_max": 30.0}),
    # no marking, infinite buffer: the queue outgrows the 50 ms history and
    # the delayed term is read at the oldest sample
    "fixed-history-clamp": ("fixed", {"p_fixed": 0.0, "max_queue_delay": 0.05}),
}


def _run(aqm, kw, backend, N=60.0, **extra):
    return simulate_fluid(N, 3750, 0.2, 6.0, aqm=aqm, backend=backend, **kw, **extra)


def _assert_same(a, b):
    np.testing.assert_array_equal(a.t, b.t)
    assert a.aqm == b.aqm
    assert a.params.keys() == b.params.keys()
    for name in SERIES:
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape, name
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("delay_interp", ["nearest", "linear"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_rust_matches_numpy_reference(case, delay_interp):
    aqm, kw = CASES[case]
    N = N3 if case.endswith("batch") else 60.0
    rust = _run(aqm, kw, "rust", N, delay_interp=delay_interp)
    ref = _run(aqm, kw, "numpy", N, delay_interp=delay_interp)
    assert rust.batch_size == (3 if case.endswith("batch") else 1)
    _assert_same(rust, ref)


@pytest.mark.parametrize("case", ["red-batch", "avq-batch", "droptail-batch"])
def test_rust_matches_python_scalar_reference(case):
    aqm, kw = CASES[case]
    _assert_same(_run(aqm, kw, "rust", N3), _run(aqm, kw, "python", N3))


def test_linear_interpolation_changes_the_transient_not_the_equilibrium():
    near = simulate_fluid(60, 3750, 0.2, 300.0, aqm="red", **RED)
    lin = simulate_fluid(60, 3750, 0.2, 300.0, aqm="red", delay_interp="linear", **RED)
    assert not np.array_equal(near.W, lin.W)
    eq = fluid.red_equilibrium(60, 3750, 0.2, 50, 550, 0.1, gentle=True)
    for res in (near, lin):
        assert res.time_average("q", 280.0)[0] == pytest.approx(eq["q"], rel=1e-3)


def test_record_interval_and_every_step():
    kw = {"aqm": "fixed", "p_fixed": 0.01}
    a = simulate_fluid(60, 3750, 0.2, 2.0, record_interval=1e-3, **kw)
    b = simulate_fluid(60, 3750, 0.2, 2.0, record_interval=1e-3, backend="numpy", **kw)
    assert a.t.size == 2001
    _assert_same(a, b)
    c = simulate_fluid(60, 3750, 0.2, 2.0, record_interval=0.05, **kw)
    np.testing.assert_array_equal(a.W[::50], c.W)


def test_member_does_not_depend_on_its_batch():
    # The delay history is sized per member, in every backend.
    kw = {"aqm": "fixed", "p_fixed": 0.0, "max_queue_delay": 0.05}
    alone = simulate_fluid(60.0, 3750, 0.2, 5.0, backend="numpy", **kw)
    for backend in ("rust", "numpy", "python"):
        batch = simulate_fluid([60.0, 5.0], [3750.0, 100.0], [0.2, 2.0], 5.0, backend=backend, **kw)
        np.testing.assert_array_equal(batch.W[:, 0], alone.W[:, 0])


def test_default_is_rust_and_falls_back_only_without_it(monkeypatch):
    kw = {"aqm": "red", **RED}
    default = simulate_fluid(60, 3750, 0.2, 3.0, **kw)
    rust = simulate_fluid(60, 3750, 0.2, 3.0, backend="rust", **kw)
    _assert_same(default, rust)
    calls = []
    kernel = fluid._rust_kernel()
    monkeypatch.setattr(fluid, "_rust_kernel", lambda: lambda *a: calls.append(a) or kernel(*a))
    simulate_fluid(60, 3750, 0.2, 3.0, **kw)
    assert len(calls) == 1, "the default backend runs the Rust kernel"
    # without the compiled module: the reference by default, an error if asked
    monkeypatch.setattr(fluid, "_rust_kernel", lambda: None)
    _assert_same(simulate_fluid(60, 3750, 0.2, 3.0, **kw), rust)
    with pytest.raises(ImportError, match="backend='rust'"):
        simulate_fluid(60, 3750, 0.2, 3.0, backend="rust", **kw)


@pytest.mark.parametrize(
    ("kw", "name"),
    [
        ({"backend": "julia"}, "backend"),
        ({"delay_interp": "cubic"}, "delay_interp"),
        ({"Tp": 0.0005}, "Tp"),
        ({"aqm": "red", "min_th": 50, "max_th": 550, "max_p": 0.1, "w_q": 0.0}, "w_q"),
        ({"aqm": "avq", "gamma": 0.98, "alpha": -1.0}, "alpha"),
        ({"aqm": "pi", "q_ref": 10, "a": 1e-5, "b": 2e-5, "fs": 160}, "a must be >= b"),
    ],
)
def test_wrapper_errors_name_the_parameter(kw, name):
    args = {"N": 10, "C": 1000.0, "Tp": 0.1, "duration": 1.0, "aqm": "fixed", "p_fixed": 0.1}
    args.update(kw)
    with pytest.raises(ValueError, match=name):
        simulate_fluid(**args)


# ---------------------------------------------------------------------------
# The compiled function on its own validates everything again
# ---------------------------------------------------------------------------

BASE = {"N": 10.0, "C": 1000.0, "Tp": 0.1, "p_fixed": 0.1}


def _core_error(params=None, aqm="fixed", **kw):
    with pytest.raises(_core.ConfigError) as info:
        _core.fluid_simulate(aqm, BASE if params is None else params, kw.pop("duration", 1.0), **kw)
    assert isinstance(info.value, ValueError)
    return info.value


@pytest.mark.parametrize(
    ("params", "aqm", "kw", "path"),
    [
        ({**BASE, "N": -1.0}, "fixed", {}, "N"),
        ({**BASE, "C": float("nan")}, "fixed", {}, "C"),
        ({**BASE, "Tp": 1e-4}, "fixed", {}, "Tp"),
        ({**BASE, "p_fixed": np.array([0.1, 1.5])}, "fixed", {}, "p_fixed[1]"),
        ({**BASE, "buffer": 0.0}, "fixed", {}, "buffer"),
        ({**BASE, "w_min": 5.0, "w_max": 2.0}, "fixed", {}, "w_min"),
        ({**BASE, "w_q": 0.1}, "fixed", {}, "w_q"),
        ({k: v for k, v in BASE.items() if k != "Tp"}, "fixed", {}, "Tp"),
        ({**BASE, "W0": "ten"}, "fixed", {}, "W0"),
        ({**BASE, "q0": np.ones(2), "W0": np.ones(3)}, "fixed", {}, "W0"),
        (BASE, "codel", {}, "aqm"),
        (BASE, "droptail", {}, "p_fixed"),
        ({**BASE, "p_fixed": 0.1}, "red", {}, "p_fixed"),
        ({"N": 1.0, "C": 1.0, "Tp": 1.0}, "red", {}, "min_th"),
        ({"N": 1.0, "C": 1.0, "Tp": 1.0}, "droptail", {}, "buffer"),
        ({"N": 1.0, "C": 1.0, "Tp": 1.0, "q_ref": 1.0}, "pi", {}, "kp"),
        ({"N": 1.0, "C": 1.0, "Tp": 1.0, "gamma": 1.5, "alpha": 1.0}, "avq", {}, "gamma"),
        ({**BASE, "buffer": 1e300}, "fixed", {}, "buffer"),
        (BASE, "fixed", {"dt": 0.0}, "dt"),
        (BASE, "fixed", {"duration": -1.0}, "duration"),
        (BASE, "fixed", {"duration": 1e-5}, "duration"),
        (BASE, "fixed", {"record_every": 0}, "record_every"),
        (BASE, "fixed", {"record_every": -3}, "record_every"),
        (BASE, "fixed", {"max_queue_delay": 0.0}, "max_queue_delay"),
        (BASE, "fixed", {"delay_interp": "cubic"}, "delay_interp"),
    ],
)
def test_core_errors_name_the_key(params, aqm, kw, path):
    err = _core_error(params, aqm, **kw)
    assert err.path == path
    assert str(err).startswith(f"{path}: ")


def test_core_returns_arrays_of_records_by_members():
    out = _core.fluid_simulate(
        "fixed",
        {**BASE, "N": np.array([10.0, 20.0]), "p_fixed": [0.1, 0.2]},
        1.0,
        dt=1e-3,
        record_every=100,
    )
    assert set(out) == {"t", "W", "q", "p", "p_eff", "aux"}
    np.testing.assert_allclose(out["t"], np.arange(11) * 0.1)
    for k in ("W", "q", "p", "p_eff", "aux"):
        assert out[k].shape == (11, 2) and out[k].dtype == np.float64
    np.testing.assert_array_equal(out["p"][0], [0.1, 0.2])
