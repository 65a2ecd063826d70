"""The PI tuning of the ATSP paper (Section III-A): minimise ITSE,
J = integral of t (q - q_ref)^2 dt (eq. 1), over (Kp, Ki) with the downhill
simplex (Nelder-Mead), for N = 3 ATSP senders on the paper's dumbbell.

Two closed loops are tuned:

- the packet-level simulator: one evaluation is a short run of experiment
  C's scenario with the candidate gains. A coarse grid around the paper's
  point is run first, in parallel through the sweep executors, and its
  best point starts the simplex; the simplex itself is sequential;
- a fluid/discrete-map model of ATSP (:func:`fluid_atsp`): the aggregate
  window of N identical senders, the queue, Hollot's discrete PI, marks fed
  back one round trip late, eqs. 2-7 applied per RTT cycle.

Gains are searched as gains (a = Kp + Ki T/2, b = Kp - Ki T/2, T = 1/C);
each result is also written as the a, b it stands for, beside the paper's
printed numbers read both ways.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ._runner import Run, run_all

C_PKTS = 10e6 / (8 * 1500)
T_S = 1.0 / C_PKTS
Q_REF = 300.0
BUFFER = 800.0
R0 = 0.6
W_MAX = 500.0


def with_gains(text: str, kp: float, ki: float, as_ab: bool = False) -> str:
    """Experiment C's scenario with PI numbers ``kp``, ``ki`` (as gains, or
    as ns-2's ``a``, ``b``)."""
    keys = ("a", "b") if as_ab else ("kp", "ki")
    out = text.replace("kp = 2.607e-5\nki = 2.508e-5", f"{keys[0]} = {kp!r}\n{keys[1]} = {ki!r}")
    assert out != text, "the PI gains were not found in the scenario"
    return out


def queue_itse(res: Any) -> float:
    from satqm.models.pi import itse

    q = res.link("bottleneck").queue_packets
    t = q.index.to_numpy(float)
    return itse(np.concatenate([[0.0], t]), np.concatenate([[-Q_REF], q.to_numpy(float) - Q_REF]))


def packet_itse(text: str, kp: float, ki: float, as_ab: bool = False) -> float:
    """J of one packet-level run of ``text`` with the given PI numbers."""
    import satqm

    return queue_itse(satqm.run(satqm.Scenario.from_toml(with_gains(text, kp, ki, as_ab))))


def fluid_atsp(
    kp: float,
    ki: float,
    *,
    n: int = 3,
    duration: float = 60.0,
    dt: float = 0.01,
    alpha: float = 20.0,
    beta: float = 1e-3,
    i0: float = 1.5,
    h: float = 100.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The fluid/discrete-map model of ATSP behind Hollot's discrete PI.

    Each of ``n`` identical senders sends at w / Theta with
    Theta = R0 + q / C; the queue integrates the excess over C (within
    0..BUFFER); the PI updates every T = 1/C (``dt / T`` steps per model
    step); marks come back one Theta late and cut w once each (the default
    ``cycle_base`` reading of eq. 5) and add to rho, which adds to Lambda
    at each SACK (every alpha packets); at the end of each cycle of one
    Theta, eqs. 7 and 6 with Lambda, then Lambda = rho = 0. Returns
    ``(t, q - q_ref)``.
    """
    a, b = kp + ki * T_S / 2, kp - ki * T_S / 2
    steps = int(duration / dt)
    k_pi = max(1, int(round(dt / T_S)))
    hist = int(math.ceil(3.0 / dt))  # marks can be up to 3 s late
    sent = np.zeros(hist)  # packets sent per step (one sender), ring
    prob = np.zeros(hist)  # p at each step, ring
    w, q, p, q_old = alpha, 0.0, 0.0, 0.0
    lam = rho = since_sack = 0.0
    cycle_left = 1.0  # the initial RTT, until the first measurement
    t_out = np.empty(steps)
    e_out = np.empty(steps)
    for k in range(steps):
        theta = R0 + q / C_PKTS
        x = w / theta * dt
        sent[k % hist] = x
        prob[k % hist] = p
        lag = int(round(theta / dt))
        if k >= lag:
            back = sent[(k - lag) % hist]
            marks = back * prob[(k - lag) % hist]
            w = max(1.0, w * (1.0 - beta * marks))
            rho += beta * marks
            since_sack += back
            while since_sack >= alpha:
                since_sack -= alpha
                lam += rho
        q = min(BUFFER, max(0.0, q + n * x - C_PKTS * dt))
        for j in range(k_pi):
            p = min(1.0, max(0.0, p + a * (q - Q_REF) - b * ((q_old if j == 0 else q) - Q_REF)))
        q_old = q
        cycle_left -= dt
        if cycle_left <= 0:
            nk = i0 + lam * h
            w = max(1.0, min(W_MAX, w + ((1.0 - lam) * W_MAX - w) / nk))
            lam = rho = 0.0
            cycle_left = theta
        t_out[k] = (k + 1) * dt
        e_out[k] = q - Q_REF
    return t_out, e_out


def tune(
    text: str,
    out: Path,
    quick: bool,
    workers: int | None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Tune by packet runs and by the fluid model; J of each point by packet
    runs. ``text`` is experiment C's scenario (its duration sets the
    evaluation's length)."""
    import satqm
    from satqm.models.pi import itse, pi_ab_to_gains, pi_gains_to_ab, tune_pi_itse

    kp0, ki0 = 2.607e-5, 2.508e-5
    # The grid, in parallel through the sweep executors.
    grid = [(kp0 * fp, ki0 * fi) for fp in (0.3, 1.0, 3.0) for fi in (0.3, 1.0, 3.0)]
    runs = [Run(f"tune-grid-{i}", with_gains(text, kp, ki), 1) for i, (kp, ki) in enumerate(grid)]
    folders = run_all(runs, out / "runs", workers=workers, progress=progress)
    grid_j = [queue_itse(satqm.Results.load(folders[r.name])) for r in runs]
    best = int(np.argmin(grid_j))
    maxiter = 12 if quick else 40
    packet = tune_pi_itse(
        lambda kp, ki: _series(text, kp, ki), grid[best], maxiter=maxiter, xatol=0.02
    )
    fluid = tune_pi_itse(
        lambda kp, ki: fluid_atsp(kp, ki), (kp0, ki0), maxiter=60 if quick else 150, xatol=0.01
    )

    def entry(label: str, kp: float, ki: float, as_ab: bool = False) -> dict[str, Any]:
        a, b = (kp, ki) if as_ab else pi_gains_to_ab(kp, ki, T_S)
        t, e = fluid_atsp(*(pi_ab_to_gains(kp, ki, T_S) if as_ab else (kp, ki)))
        return {
            "label": label,
            "reading": "a, b" if as_ab else "gains",
            "kp": kp,
            "ki": ki,
            "a": a,
            "b": b,
            "J_packet": packet_itse(text, kp, ki, as_ab),
            "J_fluid": itse(t, e),
        }

    rows = [
        entry("paper, read as gains", kp0, ki0),
        entry("paper, read as a, b", kp0, ki0, as_ab=True),
        entry("tuned on packet runs", packet.Kp, packet.Ki),
        entry("tuned on the fluid model", fluid.Kp, fluid.Ki),
    ]
    return {
        "rows": rows,
        "grid": [{"kp": kp, "ki": ki, "J_packet": j} for (kp, ki), j in zip(grid, grid_j)],
        "packet_nfev": packet.nfev,
        "fluid_nfev": fluid.nfev,
        "packet_converged": packet.success,
        "fluid_converged": fluid.success,
    }


def _series(text: str, kp: float, ki: float) -> tuple[np.ndarray, np.ndarray]:
    import satqm

    res = satqm.run(satqm.Scenario.from_toml(with_gains(text, kp, ki)))
    q = res.link("bottleneck").queue_packets
    t = np.concatenate([[0.0], q.index.to_numpy(float)])
    return t, np.concatenate([[-Q_REF], q.to_numpy(float) - Q_REF])


def table(result: dict[str, Any]) -> str:
    rows = [
        "| PI numbers | reading | Kp | Ki | a | b | J (packet runs) | J (fluid model) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        rows.append(
            f"| {r['label']} | {r['reading']} | {r['kp']:.4g} | {r['ki']:.4g} | "
            f"{r['a']:.4g} | {r['b']:.4g} | {r['J_packet']:.4g} | {r['J_fluid']:.4g} |"
        )
    return "\n".join(rows) + "\n"
