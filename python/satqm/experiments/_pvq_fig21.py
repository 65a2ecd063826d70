"""Jou, Tan, Baras, "A Parallel Virtual Queue Structure for Active Queue
Management" (CSHCN TR 2003-18), Fig. 21: the steady-state length
distribution of the Adaptive RED virtual queue (dynamic thresholds) for
N = 20 and 40 persistent connections with S = RTT, from the simulation, from
the Markov chain of eqs. (17)-(19) and from the Gaussian of eq. (21).

Setting (``scenarios/pvq2003/fig21.toml``): C = 6 Mbit/s, d_k = 64 ms,
1,000-byte packets, N FTP connections in the RED queue, 800 web mice in the
drop-tail queue, RED+Tail with dynamic thresholds in (P_L, P_U) = (0.01,
0.02), the bandwidth split recomputed every S = RTT = N W/C with the paper's
W = 6.02e4 bits (Prop. 6.2: f'(q_e) = 0 for the homogeneous case).

The models take, as the paper does, the flow-rate deviation sigma measured
from the simulation; everything else is the paper's setting, except:

* ``C`` in the model is the RED queue's measured service rate (its bytes
  that were not dropped, per second): with web mice the RED queue does not
  get the whole link. Without mice it is the link rate.
* ``W`` is given two ways: the mean congestion window of the FTP flows
  measured in the run ("measured"), and the paper's 6.02e4 bits ("paper").

Measurements, over the samples after the warm-up (the sampler runs at S/4):

* the queue: the RED virtual queue's bytes at each sample, in states
  ``floor(bytes / 1000)`` (eq. (19)'s binning, L = 8,000 bits);
* sigma: each FTP flow's delivered rate over consecutive slots of length S,
  minus the mean of all flows in that slot (under eq. (3) the flows of the
  homogeneous case share ``W/R^n``, so what is left is ``E_k^n``); the
  standard deviation over flows and slots, with the N/(N - 1) correction.
  The delivered rates of flows sharing a busy link are not independent
  (they sum to about its rate), so ``sigma_aggregate`` is given beside it:
  the standard deviation of the bits offered to the RED queue per slot
  (``sum_k T_k^n``, dropped packets included), per second, over sqrt(N). If
  the E_k were independent, as eq. (7) assumes, and ``W/R^n`` constant, the
  two would be equal.

Nothing is fitted to make the distributions agree; the table reports means,
standard deviations, the total variation distance and the Kolmogorov-Smirnov
distance of each model to the simulation.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Callable

from ._runner import Run, packaged_scenario, run_all, set_run, write_json, write_text

#: Shipped with the package; `scenarios/` at the repository root links here.
SCENARIO = "scenarios/pvq2003/fig21.toml"

C_BPS = 6e6
D_S = 0.064
W_PAPER_BITS = 6.02e4
L_BITS = 8000.0
PACKET_BYTES = 1000
#: The buffer of the scenario (600 kB) in packets.
B_PACKETS = 600
#: Section VI-B: sigma measured from the paper's simulation (bit/s).
SIGMA_PAPER_BPS = {20: 77021.0, 40: 128490.0}
NS = (20, 40)
#: Full run and warm-up, seconds; quick run and warm-up.
DURATION, WARMUP = 400.0, 100.0
QUICK_DURATION, QUICK_WARMUP = 150.0, 50.0


def scenario_text() -> str:
    return packaged_scenario(SCENARIO)


def update_interval(n: int) -> float:
    """S = RTT = N W / C (homogeneous case, Prop. 6.2), seconds."""
    return n * W_PAPER_BITS / C_BPS


def scenario_for(
    n: int,
    web_mice: bool = True,
    duration: float = DURATION,
    warmup: float = WARMUP,
    base: str | None = None,
) -> str:
    """The Fig. 21 scenario with N FTP connections (N <= 40)."""
    if not 1 <= n <= 40:
        raise ValueError(f"N must be in 1..40, got {n}")
    text = scenario_text() if base is None else base
    s = update_interval(n)
    s_ns = round(s * 1e9)
    text = text.replace("pairs = { from = 0, to = 19 }", f"pairs = {{ from = 0, to = {n - 1} }}")
    text = re.sub(r'update_interval = "[^"]*"', f'update_interval = "{s_ns / 1e9!r} s"', text)
    text = re.sub(r'sample_interval = "[^"]*"', f'sample_interval = "{s_ns / 4e9!r} s"', text)
    text = set_run(text, duration=duration, warmup=warmup)
    text = re.sub(
        r"trace_cwnd = \[[^\]]*\]",
        "trace_cwnd = [" + ", ".join(str(i) for i in range(n)) + "]",
        text,
        count=1,
    )
    if not web_mice:
        i = text.index('[[traffic]]\nkind = "web_mice"')
        text = text[:i] + text[text.index("[[aqm]]") :]
    return text


def measure(res: Any, n: int, warmup: float) -> dict[str, Any]:
    """What the models need from one run (see the module docstring)."""
    import numpy as np

    s = update_interval(n)
    ts = res.link("bottleneck")
    w = ts[ts.index > warmup]
    window = float(w.index[-1] - warmup)
    flows = res.flows
    kind = flows.set_index("flow")["kind"]
    drops = res.drops
    ftp_drops = drops[
        (drops.link == "bottleneck")
        & (drops.time_s > warmup)
        & drops.flow.map(kind).eq("bulk").to_numpy()
        & ~drops.reason.isin(["early_mark", "forced_mark"]).to_numpy()
    ]
    arrived = float(w.aqm_vq2_arrived_bytes.sum())
    c2 = (arrived - float(ftp_drops["size"].sum())) * 8.0 / window
    q_states = np.floor(w.aqm_vq2_bytes.to_numpy() / PACKET_BYTES).astype(int)
    emp = np.bincount(np.minimum(q_states, B_PACKETS), minlength=B_PACKETS + 1).astype(float)
    emp /= emp.sum()

    cw = res.cwnd
    cw = cw[cw.time_s > warmup]
    w_bar = float(cw.cwnd_bytes.mean()) * 8.0
    piv = cw.pivot(index="time_s", columns="flow", values="delivered_bytes").to_numpy(float)
    slots = piv[::4]  # every 4th sample: slots of length S
    rates = np.diff(slots, axis=0) * 8.0 / s  # (slots, N), bit/s
    dev = rates - rates.mean(axis=1, keepdims=True)
    sigma = float(dev.std() * math.sqrt(n / (n - 1)))
    arrivals = w.aqm_vq2_arrived_bytes.to_numpy(float)
    k = len(arrivals) // 4
    offered = arrivals[: 4 * k].reshape(k, 4).sum(axis=1) * 8.0 / s  # bit/s per slot
    sigma_agg = float(offered.std() / math.sqrt(n))
    return {
        "N": n,
        "S_s": s,
        "C2_bps": c2,
        "W_bar_bits": w_bar,
        "sigma_bps": sigma,
        "sigma_aggregate_bps": sigma_agg,
        "sigma_paper_bps": SIGMA_PAPER_BPS.get(n, math.nan),
        "flow_rate_mean_bps": float(rates.mean()),
        "ftp_loss": len(ftp_drops) / (arrived / PACKET_BYTES) if arrived else math.nan,
        "pd_avg_mean": float(w.aqm_pd_avg.mean()),
        "min_th_mean_pkts": float(w.aqm_min_th.mean()),
        "max_th_mean_pkts": float(w.aqm_max_th.mean()),
        "vq1_pkts_mean": float(w.aqm_vq1_packets.mean()),
        "samples": int(len(w)),
        "slots": int(rates.shape[0]),
        "empirical": emp,
    }


def models(m: dict[str, Any], w_bar: float) -> dict[str, Any]:
    """Markov chain (17)-(19) and Gaussian (21) for the measured run."""
    from satqm.models import parallel_vq as pv

    n, s, c2, sigma = m["N"], m["S_s"], m["C2_bps"], m["sigma_bps"]
    T = pv.transition_matrix(w_bar, D_S, c2, s, B_PACKETS, L_BITS, sigma, N=n)
    qe = pv.lindley_equilibrium(w_bar, D_S, c2, N=n)
    return {
        "markov_chain": pv.stationary_distribution(T),
        "gaussian": pv.gaussian_queue_pmf(w_bar, D_S, c2, s, B_PACKETS, L_BITS, sigma, N=n),
        "q_e_pkts": qe / L_BITS,
        "f_prime_q_e": float(pv.lindley_map_derivative(qe, w_bar, D_S, c2, s, N=n)),
    }


def moments(p: Any) -> tuple[float, float]:
    """Mean and standard deviation of a pmf over states 0, 1, ... (packets)."""
    import numpy as np

    j = np.arange(len(p))
    mean = float((j * p).sum())
    return mean, float(math.sqrt(max((j * j * p).sum() - mean * mean, 0.0)))


def distances(p: Any, q: Any) -> tuple[float, float]:
    """Total variation and Kolmogorov-Smirnov distances of two pmfs."""
    import numpy as np

    tv = 0.5 * float(np.abs(p - q).sum())
    ks = float(np.abs(np.cumsum(p) - np.cumsum(q)).max())
    return tv, ks


def _plot(results: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(1, len(results), figsize=(6.2 * len(results), 4.2), squeeze=False)
    for ax, (m, meas, paper) in zip(axes[0], results):
        emp = m["empirical"]
        j = np.arange(len(emp))
        mass = np.flatnonzero(
            (emp > 1e-4) | (meas["markov_chain"] > 1e-4) | (paper["markov_chain"] > 1e-4)
        )
        lo, hi = max(mass.min() - 5, 0), min(mass.max() + 5, len(emp) - 1)
        sel = slice(lo, hi + 1)
        ax.bar(j[sel], emp[sel], width=1.0, color="0.75", label="simulation (satqm)")
        ax.plot(j[sel], meas["markov_chain"][sel], "C0-", lw=1.6, label="Markov chain (17)-(19)")
        ax.plot(j[sel], meas["gaussian"][sel], "C1--", lw=1.6, label="Gaussian (21)")
        ax.plot(
            j[sel],
            paper["markov_chain"][sel],
            "C2:",
            lw=1.4,
            label=f"Markov chain, paper's W = {W_PAPER_BITS:.3g} bits",
        )
        ax.set_title(
            f"N = {m['N']}, S = RTT = {m['S_s'] * 1e3:.1f} ms, "
            f"sigma = {m['sigma_bps'] / 1e3:.0f} kbit/s"
        )
        ax.set_xlabel("RED virtual queue (packets of 1,000 bytes)")
        ax.set_ylabel("probability")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def fig21(
    out_dir: str | Path,
    quick: bool = False,
    web_mice: bool = True,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Any:
    """Run Fig. 21's setting for N = 20 and 40 and compare with the models.

    Writes ``runs/`` (the two runs), ``fig21.png``, ``fig21_agreement.csv``,
    ``fig21_inputs.csv``, ``fig21.json`` and ``fig21.md`` under ``out_dir``.
    ``quick``: 150 s runs with a 50 s warm-up instead of 400 s and 100 s.
    ``web_mice=False`` drops the web mice (the paper's FTP-only Fig. 10/21
    setting).

    Returns
    -------
    pandas.DataFrame
        One row per N and distribution (``empirical``, ``markov_chain``,
        ``gaussian``) and value of W (``measured``, ``paper``): mean and
        standard deviation (packets), and the total variation and
        Kolmogorov-Smirnov distances to the simulation's distribution. The
        measured inputs are in ``.attrs["inputs"]``.
    """
    import pandas as pd

    import satqm

    out = Path(out_dir)
    duration, warmup = (QUICK_DURATION, QUICK_WARMUP) if quick else (DURATION, WARMUP)
    tag = "mice" if web_mice else "ftp"
    runs = [Run(f"N{n}-{tag}", scenario_for(n, web_mice, duration, warmup), 1) for n in NS]
    folders = run_all(runs, out / "runs", workers=workers, progress=progress)

    rows: list[dict[str, Any]] = []
    inputs: list[dict[str, Any]] = []
    plotted = []
    for n, r in zip(NS, runs):
        m = measure(satqm.Results.load(folders[r.name]), n, warmup)
        meas = models(m, m["W_bar_bits"])
        paper = models(m, W_PAPER_BITS)
        plotted.append((m, meas, paper))
        emp = m["empirical"]
        mean, std = moments(emp)
        rows.append(
            {
                "N": n,
                "distribution": "empirical",
                "W_bar": "",
                "mean_pkts": mean,
                "std_pkts": std,
                "tv": 0.0,
                "ks": 0.0,
            }
        )
        for label, mod in (("measured", meas), ("paper", paper)):
            for dist in ("markov_chain", "gaussian"):
                mean, std = moments(mod[dist])
                tv, ks = distances(emp, mod[dist])
                rows.append(
                    {
                        "N": n,
                        "distribution": dist,
                        "W_bar": label,
                        "mean_pkts": mean,
                        "std_pkts": std,
                        "tv": tv,
                        "ks": ks,
                    }
                )
        inputs.append(
            {
                **{k: v for k, v in m.items() if k != "empirical"},
                "web_mice": web_mice,
                "q_e_measured_W_pkts": meas["q_e_pkts"],
                "q_e_paper_W_pkts": paper["q_e_pkts"],
                "f_prime_q_e_measured_W": meas["f_prime_q_e"],
                "f_prime_q_e_paper_W": paper["f_prime_q_e"],
            }
        )

    table = pd.DataFrame(rows)
    inp = pd.DataFrame(inputs)
    table.attrs["inputs"] = inp
    table.to_csv(out / "fig21_agreement.csv", index=False)
    inp.to_csv(out / "fig21_inputs.csv", index=False)
    _plot(plotted, out / "fig21.png")
    write_json(
        out / "fig21.json",
        {
            "quick": quick,
            "web_mice": web_mice,
            "duration_s": duration,
            "warmup_s": warmup,
            "agreement": table.to_dict(orient="records"),
            "inputs": inp.to_dict(orient="records"),
        },
    )
    write_text(out / "fig21.md", _report(table, inp, quick, web_mice, duration, warmup))
    return table


def _report(
    table: Any, inp: Any, quick: bool, web_mice: bool, duration: float, warmup: float
) -> str:
    lines = [
        "# Parallel virtual queues, Fig. 21: RED queue length distribution",
        "",
        f"Scenario `{SCENARIO}`"
        + ("" if web_mice else " without the web mice")
        + f"; {duration:g} s, measured after {warmup:g} s"
        + (" (quick)" if quick else "")
        + ". Models from `satqm.models.parallel_vq` with sigma measured from the run.",
        "",
        "| N | distribution | W | mean (pkts) | std (pkts) | TV | KS |",
        "|---:|---|---|---:|---:|---:|---:|",
    ]
    for r in table.itertuples():
        lines.append(
            f"| {r.N} | {r.distribution} | {r.W_bar} | {r.mean_pkts:.1f} | {r.std_pkts:.1f} "
            f"| {r.tv:.3f} | {r.ks:.3f} |"
        )
    lines += [
        "",
        "| N | S (ms) | C2 (Mbit/s) | W measured (bits) | sigma (kbit/s) | "
        "sigma aggregate (kbit/s) | sigma paper (kbit/s) | FTP loss | P_d avg | minth2 (pkts) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in inp.itertuples():
        lines.append(
            f"| {r.N} | {r.S_s * 1e3:.1f} | {r.C2_bps / 1e6:.3f} | {r.W_bar_bits:.0f} | "
            f"{r.sigma_bps / 1e3:.1f} | {r.sigma_aggregate_bps / 1e3:.1f} | "
            f"{r.sigma_paper_bps / 1e3:.1f} | {r.ftp_loss:.4f} | {r.pd_avg_mean:.4f} | "
            f"{r.min_th_mean_pkts:.1f} |"
        )
    lines += ["", "![Fig. 21](fig21.png)", ""]
    return "\n".join(lines)
