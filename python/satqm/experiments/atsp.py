"""Muhammad, Kasmis & De Cola, "Advanced Transport Satellite Protocol" (DLR,
papers/001_...): the experiments of Section IV.

ATSP senders on the paper's dumbbell (``scenarios/atsp/``): 100 Mbit/s 5 ms
access links, a 10 Mbit/s 290 ms bottleneck (600 ms round trip), an
800-packet buffer at R1 where a PI AQM marks with the paper's gains
(Kp = 2.607e-5, Ki = 2.508e-5, q_ref = 300 packets, T = 1/C).

- A: three senders start one after another (0, 20, 40 s) (Fig. 2a);
- B: three senders, the third stops at 45 s (Fig. 2b);
- C: Jain's index over time, three senders started together;
- D: a CBR flow of 4 Mbit/s, then of 2.5 Mbit/s (Figs. 2c-d);
- E: ATSP against TCP Hybla at a 500 ms round trip, each in its own network:
  Hybla behind drop-tail, RED and PI (Hollot et al.'s published gains),
  ATSP behind the paper's PI; one source off at 40 s (Figs. 3a-b), and a
  packet erasure rate of 1e-3 on the bottleneck (Figs. 3c-d);
- the PI gains under both readings of the printed numbers (gains with
  T = 1/C, or ns-2's ``a``, ``b``) for experiment C.

Throughput is goodput (payload, headers excluded, as in the paper), per
sender, from the delivered bytes of each traced flow in 1 s bins.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Callable

from . import _atsp_gateway
from ._runner import (
    Run,
    packaged_scenario,
    run_all,
    save_figure,
    set_run,
    write_json,
    write_text,
)

SOLO = "scenarios/atsp/solo.toml"
CBR = "scenarios/atsp/cbr.toml"
CMP_ATSP = "scenarios/atsp/compare-atsp.toml"
CMP_HYBLA = "scenarios/atsp/compare-hybla.toml"

#: The bottleneck's goodput ceiling: 10 Mbit/s x 1,460 / 1,500.
CEILING_BPS = 10e6 * 1460 / 1500
Q_REF = 300.0
#: The paper's printed PI numbers, N = 3.
KP, KI = 2.607e-5, 2.508e-5
#: Hollot, Misra, Towsley & Gong (INFOCOM 2001), the published discrete PI
#: for TCP: a, b at 160 Hz, q_ref 200 packets.
HOLLOT_PI = 'kind = "pi"\nmode = "drop"\na = 1.822e-5\nb = 1.816e-5\nsample_rate = 160\nq_ref = 200'
#: RED for Hybla on an 800-packet buffer (the paper does not give its
#: parameters): Floyd's rules of thumb, max_th = 3 min_th.
RED = 'kind = "red"\nmode = "drop"\nmin_th = 150\nmax_th = 450\nmax_p = 0.1\nw_q = 0.002'
HYBLA_AQMS = {"droptail": "", "red": RED, "pi": HOLLOT_PI}


def _traffic_block(entries: list[str]) -> str:
    return "".join(f"\n[[traffic]]\n{e}\n" for e in entries)


def _replace_traffic(text: str, entries: list[str]) -> str:
    """``text`` with every ``[[traffic]]`` table replaced by ``entries``."""
    i = re.search(r"^\[\[traffic\]\]", text, flags=re.M)
    assert i is not None
    return text[: i.start()].rstrip() + "\n" + _traffic_block(entries)


def _atsp_entry(pairs: str, start: str, w_max: int, stop: str | None = None) -> str:
    s = f'kind = "atsp"\npairs = {pairs}\nstart = {start}\natsp = {{ w_max = {w_max} }}'
    return s + (f'\nstop = "{stop}"' if stop else "")


TOGETHER = '{ uniform = ["0 s", "1 s"] }'


def _pi_ab(text: str) -> str:
    """The paper's printed numbers read as ns-2's ``a``, ``b``."""
    out = text.replace("kp = 2.607e-5\nki = 2.508e-5", "a = 2.607e-5\nb = 2.508e-5")
    assert out != text, "the PI gains were not found in the scenario"
    return out


def scenarios(quick: bool) -> dict[str, str]:
    """Every run's scenario text, by name (without seed)."""
    solo = packaged_scenario(SOLO)
    dur = 100.0 if quick else 150.0
    three = _replace_traffic(solo, [_atsp_entry("{ from = 0, to = 2 }", TOGETHER, 500)])
    out = {
        "A": set_run(solo, duration=dur),
        "B": set_run(
            _replace_traffic(
                solo,
                [
                    _atsp_entry("{ from = 0, to = 1 }", TOGETHER, 500),
                    _atsp_entry("2", TOGETHER, 500, stop="45 s"),
                ],
            ),
            duration=90.0,
        ),
        "C": set_run(three, duration=dur),
        "C-ab": set_run(_pi_ab(three), duration=dur),
        "D4": set_run(packaged_scenario(CBR), duration=dur),
        "D2.5": set_run(
            packaged_scenario(CBR).replace('rate = "4 Mbps"', 'rate = "2.5 Mbps"'), duration=dur
        ),
    }
    e_dur = 80.0 if quick else 100.0
    for proto, path in (("atsp", CMP_ATSP), ("hybla", CMP_HYBLA)):
        base = packaged_scenario(path)
        aqms = {"pi": ""} if proto == "atsp" else HYBLA_AQMS
        for aqm, table in aqms.items():
            text = base + (f"\n[[aqm]]\n{table}\n" if table else "")
            off = _split_off(text, proto)
            out[f"E-{proto}-{aqm}-base"] = set_run(text, duration=e_dur)
            out[f"E-{proto}-{aqm}-off"] = set_run(off, duration=e_dur)
            out[f"E-{proto}-{aqm}-per"] = set_run(
                re.sub(r"(?m)^loss = 0\.0$", "loss = 0.001", text), duration=e_dur
            )
    return out


#: Beyond the paper: (name, senders, heterogeneous access delays, TCP flows).
BEYOND = (
    ("N10", 10, False, False),
    ("N30", 30, False, False),
    ("N100", 100, False, False),
    ("N10-hetero", 10, True, False),
    ("meet-newreno", 6, False, True),
)


def beyond_scenarios() -> dict[str, str]:
    """Runs beyond the paper (full reproduction only): many senders with
    the same PI, access delays drawn from 5-100 ms per pair, and three ATSP
    senders meeting three TCP NewReno flows (not ECN-capable) at the PI;
    ATSP and split TCP at the IP-over-satellite gateway's transmit queue."""
    solo = packaged_scenario(SOLO)
    out = {}
    for name, n, hetero, tcp in BEYOND:
        text = solo.replace("pairs = 3\n", f"pairs = {n}\n", 1)
        text = text.replace("trace_cwnd = [0, 1, 2]", f"trace_cwnd = {list(range(n))}")
        if hetero:
            text = text.replace(
                'delay = "5 ms"\nbuffer = 1000',
                'delay = { min = "5 ms", max = "100 ms" }\nbuffer = 1000',
            )
        k = n // 2 if tcp else n
        entries = [_atsp_entry(f"{{ from = 0, to = {k - 1} }}", TOGETHER, 500)]
        if tcp:
            entries.append(
                f'kind = "bulk"\npairs = {{ from = {k}, to = {n - 1} }}\nstart = {TOGETHER}'
            )
        out[f"X-{name}"] = set_run(_replace_traffic(text, entries), duration=150.0)
    out[_atsp_gateway.NAME] = _atsp_gateway.scenario(150.0)
    return out


def _split_off(text: str, proto: str) -> str:
    """The third source stops at 40 s."""
    if proto == "atsp":
        entries = [
            _atsp_entry("{ from = 0, to = 1 }", TOGETHER, 417),
            _atsp_entry("2", TOGETHER, 417, stop="40 s"),
        ]
    else:
        entries = [
            f'kind = "bulk"\npairs = {{ from = 0, to = 1 }}\nstart = {TOGETHER}',
            f'kind = "bulk"\npairs = 2\nstart = {TOGETHER}\nstop = "40 s"',
        ]
    # [[aqm]] after the traffic stays after it.
    m = re.search(r"^\[\[aqm\]\]", text, flags=re.M)
    tail = text[m.start() :] if m and m.start() > text.find("[[traffic]]") else ""
    head = text[: m.start()] if tail else text
    return _replace_traffic(head, entries) + ("\n" + tail if tail else "")


# ---------------------------------------------------------------------------
# Measures
# ---------------------------------------------------------------------------


def per_sender(res: Any, bin_s: float = 1.0) -> Any:
    """Goodput (bit/s) of each traced flow in bins of ``bin_s``: a DataFrame
    indexed by the bin's end time, one column per flow."""
    cw = res.cwnd.pivot(index="time_s", columns="flow", values="delivered_bytes")
    step = cw.index[1] - cw.index[0]
    k = max(1, int(round(bin_s / step)))
    sampled = cw.iloc[::k]
    return sampled.diff().dropna() * 8.0 / (k * step)


def jain(x: Any) -> float:
    s = float(sum(x))
    q = float(sum(v * v for v in x))
    return s * s / (len(x) * q) if q > 0 else math.nan


def jain_series(g: Any) -> Any:
    """Jain's index of the columns of ``g`` at each row (rows with traffic)."""
    return g.apply(lambda r: jain(list(r)), axis=1)


def time_to_reach(series: Any, after: float, level: float) -> float:
    """Seconds from ``after`` until ``series`` first reaches ``level``."""
    s = series[series.index > after]
    hit = s[s >= level]
    return float(hit.index[0] - after) if len(hit) else math.inf


def window_mean(series: Any, lo: float, hi: float) -> float:
    return float(series[(series.index > lo) & (series.index <= hi)].mean())


# ---------------------------------------------------------------------------
# The reproduction
# ---------------------------------------------------------------------------


def reproduce(
    out: Path,
    quick: bool = False,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Run experiments A-E; write figures, ``claims.md``, ``measures.json``
    and REPORT.md. ``quick``: one seed and shorter runs (three seeds
    otherwise). Returns the path of REPORT.md."""
    import satqm

    out = Path(out)
    seeds = [1] if quick else [1, 2, 3]
    texts = scenarios(quick)
    if not quick:
        texts.update(beyond_scenarios())
    runs = [Run(f"{n}-s{s}", t, s) for n, t in texts.items() for s in seeds]
    folders = run_all(runs, out / "runs", workers=workers, progress=progress)

    def load(name: str, seed: int) -> Any:
        return satqm.Results.load(folders[f"{name}-s{seed}"])

    per_seed = [_measures(load, s, quick) for s in seeds]
    m = {k: sum(d[k] for d in per_seed) / len(per_seed) for k in per_seed[0]}
    write_json(out / "measures.json", {"mean": m, "per_seed": per_seed, "seeds": seeds})
    claims = _claims(per_seed)
    claims_md = _claims_table(claims)
    write_text(out / "claims.md", claims_md)
    _figures(out, load, seeds[0])
    beyond_md = "" if quick else _beyond(out, load, seeds)
    from . import _atsp_tuning

    tuned = _atsp_tuning.tune(set_run(texts["C"], duration=60.0), out, quick, workers)
    write_json(out / "tuning.json", tuned)
    tuning_md = _atsp_tuning.table(tuned)
    write_text(out / "tuning.md", tuning_md)
    report = (
        _report(out, quick, seeds, m, claims_md)
        + _steady_section(m)
        + _tuning_section(tuned, tuning_md)
        + beyond_md
    )
    write_text(out / "REPORT.md", report)
    return out / "REPORT.md"


def _measures(load: Callable[[str, int], Any], seed: int, quick: bool) -> dict[str, float]:
    m: dict[str, float] = {}
    a = per_sender(load("A", seed))
    end = float(a.index[-1])
    m["A_jain_end"] = jain(a[(a.index > end - 30)].mean())
    m["A_total_end_bps"] = float(a[(a.index > end - 30)].sum(axis=1).mean())
    fair3 = CEILING_BPS / 3
    m["A_newcomer2_s"] = time_to_reach(a[1], 20.0, 0.9 * CEILING_BPS / 2)
    m["A_newcomer3_s"] = time_to_reach(a[2], 40.0, 0.9 * fair3)
    b = per_sender(load("B", seed))
    tot_b = b.sum(axis=1)
    before = window_mean(tot_b, 35.0, 45.0)
    m["B_total_before_bps"] = before
    m["B_dip_min_bps"] = float(tot_b[(tot_b.index > 45) & (tot_b.index <= 60)].min())
    m["B_refill_s"] = time_to_reach(tot_b, 46.0, 0.95 * before)
    m["B_jain2_end"] = jain(b[[0, 1]][b.index > 75].mean())
    for name in ("C", "C-ab"):
        res = load(name, seed)
        c = per_sender(res)
        js = jain_series(c)
        q = res.link("bottleneck").queue_packets
        end = float(c.index[-1])
        key = name.replace("-", "_")
        m[f"{key}_jain_after20_mean"] = window_mean(js, 20.0, end)
        m[f"{key}_jain_after20_min"] = float(js[js.index > 20].min())
        # From 2 s: every sender has started (0-1 s) and delivered.
        m[f"{key}_jain_first10_min"] = float(js[(js.index > 2) & (js.index <= 10)].min())
        m[f"{key}_queue_mean_late"] = window_mean(q, end / 2, end)
        m[f"{key}_queue_std_late"] = float(q[q.index > end / 2].std(ddof=0))
        m[f"{key}_utilization_late"] = window_mean(res.link("bottleneck").utilization, end / 2, end)
        m[f"{key}_overflow_drops"] = float(res.summary().get("drops_overflow", math.nan))
        b = res.link("bottleneck")
        # The AQM's probability (none on a drop-tail bottleneck).
        m[f"{key}_prob_late"] = (
            window_mean(b["aqm_prob"], end / 2, end) if "aqm_prob" in b else math.nan
        )
        cw = res.cwnd[res.cwnd.time_s > end / 2]
        m[f"{key}_w_late"] = float((cw.cwnd_bytes / 1500).mean())
    for name, rate in (("D4", 4e6), ("D2.5", 2.5e6)):
        res = load(name, seed)
        d = per_sender(res)
        end = float(d.index[-1])
        late = d[d.index > end / 2].mean()
        key = name.replace(".", "_")
        m[f"{key}_jain"] = jain(late)
        m[f"{key}_atsp_total_bps"] = float(late.sum())
        m[f"{key}_remainder_bps"] = (10e6 - rate) * 1460 / 1500
        cbr = res.flows[res.flows.kind == "cbr"].goodput_bps
        m[f"{key}_cbr_bps"] = float(cbr.iloc[0])
    for proto, aqms in (("atsp", ("pi",)), ("hybla", tuple(HYBLA_AQMS))):
        for aqm in aqms:
            key = f"E_{proto}_{aqm}"
            base = per_sender(load(f"E-{proto}-{aqm}-base", seed)).sum(axis=1)
            off = per_sender(load(f"E-{proto}-{aqm}-off", seed)).sum(axis=1)
            per = per_sender(load(f"E-{proto}-{aqm}-per", seed)).sum(axis=1)
            end = float(base.index[-1])
            m[f"{key}_base_bps"] = window_mean(base, 20.0, end)
            m[f"{key}_per_bps"] = window_mean(per, 20.0, end)
            m[f"{key}_per_fall"] = 1.0 - m[f"{key}_per_bps"] / m[f"{key}_base_bps"]
            pre = window_mean(off, 30.0, 40.0)
            m[f"{key}_off_before_bps"] = pre
            m[f"{key}_off_after_bps"] = window_mean(off, 50.0, end)
            m[f"{key}_off_refill_s"] = time_to_reach(off, 41.0, 0.95 * min(pre, CEILING_BPS))
    return m


#: The bottleneck's bandwidth-delay product (packets of 1,500 bytes) and
#: round trip: 10 Mbit/s x 600 ms.
BDP_PACKETS, RTT_S = 10e6 * 0.6 / (8 * 1500), 0.6


def _claims(per_seed: list[dict[str, float]]) -> list[tuple[str, str, Any]]:
    """(experiment, the paper's claim, its verdict), each judged seed by seed
    (docs/reproductions.md#verdicts).

    Long because it is a table: one entry per claim of the paper, each with
    its test written beside it."""
    from . import _verdict as V

    def s(key: str, scale: float = 1.0) -> list[float]:
        return [d[key] * scale for d in per_seed]

    mb = 1e-6
    link = {"scale": 10.0, "unit": "Mbit/s", "digits": 2}
    hyb = {a: sum(s(f"E_hybla_{a}_base_bps")) for a in HYBLA_AQMS}
    best = max(hyb, key=lambda k: hyb[k])
    fast = V.fill_time(BDP_PACKETS, RTT_S)
    fast_text = (f"\"fast\": the {fast / RTT_S:.0f} round trips of {RTT_S:g} s a slow start "
                 f"needs to reach the {BDP_PACKETS:.0f}-packet BDP")

    def fair(key: str) -> Any:
        return V.match(s(key), 1.0, V.FAIRNESS, what="1 (fair)", name="Jain")

    return [
        ("A", "the three senders share the bottleneck fairly once all have started",
         V.window("the last 30 s", fair("A_jain_end"))),
        ("A", "a newcomer gets room fast: the others drop their rates to make room",
         V.all_of(
             V.bound(s("A_newcomer2_s"), fast, V.TIME, below=True, level_text=fast_text,
                     name="sender 2 at 90 % of half the link after"),
             V.bound(s("A_newcomer3_s"), fast, V.TIME, below=True, level_text=fast_text,
                     name="sender 3 at 90 % of a third after"),
         )),
        ("A", "the total, headers excluded, stays below 10 Mbit/s (the link less the headers)",
         V.window("the last 30 s", V.match(s("A_total_end_bps", mb), CEILING_BPS * mb, V.SHARE,
                                           what=f"the payload ceiling {CEILING_BPS * mb:.2f}",
                                           **link))),
        ("B", "when sender 3 stops the total drops significantly, then the others fill the gap "
         "fast",
         V.all_of(
             V.window("lowest in 45-60 s against 35-45 s",
                      V.below(s("B_dip_min_bps", mb), s("B_total_before_bps", mb), V.SHARE,
                              **link)),
             V.bound(s("B_refill_s"), fast, V.TIME, below=True, level_text=fast_text,
                     name="back to 95 % after"),
         )),
        ("C", "Jain's index is about 1 (tuned PI)",
         V.window("after 20 s", fair("C_jain_after20_mean"))),
        ("C", "with a short dip to about 0.9 near t = 3 s",
         V.window("lowest in 2-10 s",
                  V.match(s("C_jain_first10_min"), 0.9, V.FAIRNESS, printed=0.05))),
        ("C", "the PI holds the queue at q_ref = 300 packets",
         V.window("second half", V.all_of(
             V.match(s("C_queue_mean_late"), Q_REF, V.QUEUE, what="q_ref", name="mean"),
             V.bound(s("C_queue_std_late"), V.QUEUE.paper.of(Q_REF), V.QUEUE, below=True,
                     name="std", level_text="the tolerance around q_ref"),
         ))),
        *(
            ("D", f"beside a {rate} Mbit/s CBR flow the ATSP senders share the rest fairly",
             V.window("second half", V.all_of(
                 fair(f"{key}_jain"),
                 V.not_above(s(f"{key}_remainder_bps", mb), s(f"{key}_atsp_total_bps", mb),
                             V.SHARE, names=("remainder", "ATSP"), **link),
             )))
            for key, rate in (("D4", 4), ("D2_5", 2.5))
        ),
        ("E", "Hybla does best behind PI (of drop-tail, RED, PI)",
         V.above(s("E_hybla_pi_base_bps", mb),
                 [max(d[f"E_hybla_{a}_base_bps"] for a in ("droptail", "red")) * mb
                  for d in per_seed],
                 V.SHARE, names=("PI", "the better of drop-tail and RED"), **link)),
        ("E", "after a source turns off at 40 s Hybla needs time to use the freed capacity; "
         "ATSP fills the gap fast",
         V.below(s("E_atsp_pi_off_refill_s"), s(f"E_hybla_{best}_off_refill_s"), V.TIME,
                 names=("back to 95 %: ATSP", f"Hybla ({best}, its best)"), digits=1)),
        ("E", "with a packet erasure rate of 1e-3 Hybla's throughput falls greatly, ATSP's holds",
         V.all_of(
             V.same(s("E_atsp_pi_per_bps", mb), s("E_atsp_pi_base_bps", mb), V.SHARE,
                    names=("ATSP with erasures", "without"), **link),
             *(V.below(s(f"E_hybla_{a}_per_bps", mb), s(f"E_hybla_{a}_base_bps", mb), V.SHARE,
                       names=(f"Hybla ({a}) with", "without"), **link) for a in HYBLA_AQMS),
         )),
        ("E", "ATSP's average rate is higher than Hybla's",
         V.all_of(
             V.above(s("E_atsp_pi_base_bps", mb), s(f"E_hybla_{best}_base_bps", mb), V.SHARE,
                     names=("ATSP", f"Hybla ({best}, its best)"), **link),
             V.above(s("E_atsp_pi_per_bps", mb), s(f"E_hybla_{best}_per_bps", mb), V.SHARE,
                     names=("with erasures ATSP", "Hybla"), **link),
         )),
    ]


def _claims_table(claims: list[tuple[str, str, Any]]) -> str:
    rows = ["| exp. | the paper | satqm | criterion | verdict |", "|---|---|---|---|---|"]
    for exp, claim, v in claims:
        rows.append(f"| {exp} | {claim} | {v.numbers} | {v.criterion} | {v.word} |")
    return "\n".join(rows) + "\n"


def _figures(out: Path, load: Callable[[str, int], Any], seed: int) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    def save(fig: Any, name: str) -> None:
        fig.tight_layout()
        save_figure(fig, out / name)

    def throughput(ax: Any, name: str, title: str) -> None:
        g = per_sender(load(name, seed))
        for f in g.columns:
            ax.plot(g.index, g[f] * 1e-6, lw=0.8, label=f"sender {f + 1}")
        ax.plot(g.index, g.sum(axis=1) * 1e-6, lw=0.8, color="k", label="total")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("goodput (Mbit/s)")
        ax.set_ylim(0, 11)

    fig = Figure(figsize=(10, 6), dpi=100)
    FigureCanvasAgg(fig)
    for i, (name, title) in enumerate(
        (
            ("A", "A: senders start at 0, 20, 40 s (Fig. 2a)"),
            ("B", "B: sender 3 stops at 45 s (Fig. 2b)"),
            ("D4", "D: beside 4 Mbit/s CBR (Fig. 2c)"),
            ("D2.5", "D: beside 2.5 Mbit/s CBR (Fig. 2d)"),
        )
    ):
        ax = fig.add_subplot(2, 2, i + 1)
        throughput(ax, name, title)
        if i == 0:
            ax.legend(fontsize=7)
    save(fig, "fig2_throughput.png")

    fig = Figure(figsize=(10, 6), dpi=100)
    FigureCanvasAgg(fig)
    for i, (name, label) in enumerate((("C", "Kp, Ki as gains"), ("C-ab", "as a, b"))):
        res = load(name, seed)
        js = jain_series(per_sender(res))
        ax = fig.add_subplot(2, 2, 1 + i)
        ax.plot(js.index, js, lw=0.8)
        ax.set_ylim(0, 1.05)
        ax.set_title(f"C: Jain's index, PI {label}", fontsize=9)
        ax.set_xlabel("time (s)")
        q = res.link("bottleneck").queue_packets
        ax = fig.add_subplot(2, 2, 3 + i)
        ax.plot(q.index, q, lw=0.8)
        ax.axhline(Q_REF, color="grey", ls="--", lw=0.8)
        ax.set_title(f"C: queue at R1, PI {label}", fontsize=9)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("packets")
    save(fig, "figC_jain_queue.png")

    fig = Figure(figsize=(10, 6), dpi=100)
    FigureCanvasAgg(fig)
    for i, (case, title) in enumerate((("off", "one source off at 40 s"), ("per", "PER 1e-3"))):
        ax = fig.add_subplot(1, 2, 1 + i)
        for proto, aqm in [("atsp", "pi")] + [("hybla", a) for a in HYBLA_AQMS]:
            g = per_sender(load(f"E-{proto}-{aqm}-{case}", seed)).sum(axis=1)
            ax.plot(g.index, g * 1e-6, lw=0.8, label=f"{proto.upper()} / {aqm}")
        ax.set_title(f"E: total goodput, {title} (Fig. 3)", fontsize=9)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("goodput (Mbit/s)")
        ax.set_ylim(0, 11)
        ax.legend(fontsize=7)
    save(fig, "fig3_atsp_vs_hybla.png")


C_PKTS = 10e6 / (8 * 1500)


def _steady_section(m: dict[str, float]) -> str:
    from satqm.models.atsp import atsp_steady_state

    ss = atsp_steady_state(3, C_PKTS, 0.6, Q_REF, 500, buffer=800)
    return f"""
## The steady state predicted from eqs. 2-7

`satqm.models.atsp.atsp_steady_state` (three senders, C = 833.3 packets/s,
600 ms propagation, q_ref = 300, W_max = 500, each mark cutting once) against
experiment C's second half:

| | marking probability p | window w (packets/RTT) | queue (packets) |
|---|---:|---:|---:|
| predicted | {ss.p:.4f} | {ss.w:.1f} | {ss.q:.0f} |
| packet runs | {m["C_prob_late"]:.4f} | {m["C_w_late"]:.1f} | {m["C_queue_mean_late"]:.0f} |

Accumulated congestion per cycle at equilibrium: Lambda = {ss.lam:.3f}.
"""


def _beyond(out: Path, load: Callable[[str, int], Any], seeds: list[int]) -> str:
    """The table of the runs beyond the paper (means over seeds, 75-150 s)."""
    rows = [
        "| run | senders | Jain (ATSP) | ATSP Mbit/s | TCP Mbit/s | queue mean | queue std | "
        "overflow drops | predicted queue |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    data = {}
    for name, n, _, tcp in BEYOND:
        vals = []
        for seed in seeds:
            res = load(f"X-{name}", seed)
            g = per_sender(res)
            late = g[g.index > 75].mean()
            k = n // 2 if tcp else n
            q = res.link("bottleneck").queue_packets
            q = q[q.index > 75]
            vals.append(
                (
                    jain(late.iloc[:k]),
                    float(late.iloc[:k].sum()),
                    float(late.iloc[k:].sum()),
                    float(q.mean()),
                    float(q.std(ddof=0)),
                    float(res.summary().get("drops_overflow", math.nan)),
                )
            )
        v = [sum(x[i] for x in vals) / len(vals) for i in range(6)]
        data[name] = v
        pred = "-"
        if not tcp:
            from satqm.models.atsp import atsp_steady_state

            pred = f"{atsp_steady_state(n, C_PKTS, 0.6, Q_REF, 500, buffer=800).q:.0f}"
        rows.append(
            f"| {name} | {n} | {v[0]:.4f} | {v[1] * 1e-6:.2f} | {v[2] * 1e-6:.2f} | "
            f"{v[3]:.0f} | {v[4]:.0f} | {v[5]:.0f} | {pred} |"
        )
    table = "\n".join(rows) + "\n"
    gw_table, gw_md = _atsp_gateway.section(out, load, seeds, jain)
    write_text(out / "beyond.md", table + "\nATSP and split TCP at the gateway:\n\n" + gw_table)
    write_json(out / "beyond.json", data)
    return f"""
## Beyond the paper

The same PI (the paper's numbers as gains) and W_max = 500 packets per
sender, 150 s runs, figures over 75-150 s: N = 10, 30, 100 senders; ten
senders whose access delays are drawn from 5-100 ms per pair; three ATSP
senders sharing R1 with three TCP NewReno flows (not ECN-capable, so the
PI's marks are drops for them).

{table}
Why the queue leaves q_ref as N grows: with W_max the link's BDP for every
sender, N senders fit the pipe and the setpoint only when each holds about
(BDP + q_ref) / N, i.e. when Lambda reaches 1 - (BDP + q_ref) / (N W_max).
But Lambda, the sum over a cycle's n = w / alpha SACKs of the cumulative
rho, is at most beta alpha p n (n + 1) / 2: the smaller each window, the
fewer SACKs per cycle and the less congestion a sender can register. Past
about ten senders no marking probability is enough; the buffer stays full
and the excess is dropped, while ATSP, resending without cutting its rate,
keeps the link busy. (The predicted queue is that of
`satqm.models.atsp.atsp_steady_state`, 600 ms propagation, equal RTTs.)
ATSP meeting TCP: marks are drops for the TCP flows, which back off while
ATSP does not, and TCP is starved.
{gw_md}"""


def _tuning_section(t: dict[str, Any], table: str) -> str:
    rows = {r["label"]: r for r in t["rows"]}
    gains, ab = rows["paper, read as gains"], rows["paper, read as a, b"]
    pk, fl = rows["tuned on packet runs"], rows["tuned on the fluid model"]
    best = min(t["grid"], key=lambda g: g["J_packet"])
    return f"""
## The PI tuning (Section III-A)

ITSE, J = integral of t (q - 300)^2 dt over a 60 s run of experiment C
(three senders started together, queue empty at 0), minimised over
(Kp, Ki) by Nelder-Mead (`satqm.models.pi.tune_pi_itse`, in log space).
Packet runs: a 3 x 3 grid around the paper's point (0.3, 1 and 3 times each
gain) ran in parallel through the sweep executors; its best point
(Kp {best["kp"]:.3g}, Ki {best["ki"]:.3g}, J {best["J_packet"]:.3g}) started
the simplex ({t["packet_nfev"]} packet runs). Fluid model: the
discrete-map model of `satqm.experiments._atsp_tuning.fluid_atsp`
({t["fluid_nfev"]} evaluations). J of every point is measured on packet
runs and on the model; a and b are the coefficients each pair stands for
(bilinear, T = 1/C).

{table}
Read as gains, the paper's numbers give J = {gains["J_packet"]:.3g} on packet
runs, {gains["J_packet"] / pk["J_packet"]:.1f} times the optimum found here;
read as a, b, J = {ab["J_packet"]:.3g}, {ab["J_packet"] / pk["J_packet"]:.0f}
times: neither reading is at the ITSE optimum of this setting, and the gains
reading is far closer. The packet-level search ends at Kp {pk["kp"]:.3g},
Ki {pk["ki"]:.3g}; the fluid model's optimum, Kp {fl["kp"]:.3g},
Ki {fl["ki"]:.3g}, gives J {fl["J_packet"]:.3g} on packet runs: the two loops
agree on the proportional gain, about {pk["kp"] / gains["kp"]:.0f} times the
paper's, while J hardly depends on the integral gain over this range (a
60 s run weights the start-up overshoot and the first settling, where the
proportional term acts). The optimum depends on the run length and the
start times, which the paper does not give.
"""


def _report(out: Path, quick: bool, seeds: list[int], m: dict[str, float], claims: str) -> str:
    # Long because it is the report's text, with the numbers filled in.
    return f"""# ATSP (Muhammad, Kasmis & De Cola, DLR): Section IV in satqm

Command: `satqm reproduce atsp{" --quick" if quick else ""} --out {out}`
({len(seeds)} seed(s): {", ".join(map(str, seeds))}; means over seeds).

Scenarios: `scenarios/atsp/` (`solo.toml`, `cbr.toml`, `compare-atsp.toml`,
`compare-hybla.toml`); the protocol as implemented and every reading of the
paper it rests on: `docs/atsp.md`. Throughput is goodput per sender in 1 s
bins (headers excluded, as the paper's are). PI at R1: Hollot's discrete
controller, marking, q_ref = 300, T = 1/C (C = 833.3 packets/s of 1,500
bytes), the printed Kp = {KP}, Ki = {KI} read as gains; run C-ab reads them
as ns-2's a, b.

## The paper's claims here

Each claim judged seed by seed, with its criterion (docs/reproductions.md#verdicts):

{claims}
Figures: `fig2_throughput.png` (A, B, D), `figC_jain_queue.png` (C under
both readings of the PI numbers), `fig3_atsp_vs_hybla.png` (E). All numbers:
`measures.json`.

## What differs from the paper, and why

- **The PI numbers.** Read as gains (a = Kp + Ki T/2, b = Kp - Ki T/2,
  T = 1/C) the loop settles: queue mean {m["C_queue_mean_late"]:.0f} packets
  (std {m["C_queue_std_late"]:.0f}) over the second half. Read as ns-2's a, b
  the integral step a - b is about 33 times larger and the queue swings
  between empty and the full buffer (mean {m["C_ab_queue_mean_late"]:.0f},
  std {m["C_ab_queue_std_late"]:.0f}, {m["C_ab_overflow_drops"]:.0f} overflow
  drops, utilization {m["C_ab_utilization_late"]:.3f}). The reproduction
  uses the gains reading; the paper does not say which it printed.
- **Start-up overshoot.** Every sender starts at w = alpha = 20 and, with no
  congestion in its first cycle, eq. 6 lifts it to 20 + (W_max - 20)/1.5 in
  one RTT: three senders each aim at 2/3 of the link's BDP. With the slow
  integral of the gains reading, the queue overflows for the first ~10 s
  before the PI's probability has grown enough
  ({m["C_overflow_drops"]:.0f} overflow drops in run C); ATSP resends them
  without cutting its rate, so fairness is not disturbed.
- **CBR and ECN.** The CBR flow is not ECN-capable, so the PI drops its
  packets with the marking probability: the CBR gets
  {m["D4_cbr_bps"] * 1e-6:.2f} of its 4 Mbit/s and ATSP takes the rest
  ({m["D4_atsp_total_bps"] * 1e-6:.2f} Mbit/s, more than the remainder). The
  paper's Fig. 2c shows ATSP sharing "the remaining capacity"; it does not
  say whether its CBR lost packets.
- **Hybla.** satqm's Hybla (Caini & Firrincieli 2004, rho = RTT / 25 ms = 20)
  adds rho^2 = 400 segments per RTT in congestion avoidance and 2^rho - 1 per
  ACK in slow start; without pacing its bursts overflow every buffer, so the
  Hybla scenario paces each connection at the link rate (`rate_cap`), as
  Hybla's authors recommend. The paper does not give its RED parameters
  (here min_th 150, max_th 450, max_p 0.1, w_q 0.002, drop mode) or the PI
  settings "from [21]" (here that paper's published a = 1.822e-5,
  b = 1.816e-5 at 160 Hz, q_ref 200, drop mode; Hybla is not ECN-capable).
- **B's dip.** When sender 3 stops, the queue at R1 (held near 300
  packets, 0.36 s of the link) drains while the PI's probability falls and
  the two remaining senders grow by eq. 6 within a cycle or two: the total
  dips to {m["B_dip_min_bps"] * 1e-6:.2f} Mbit/s and is back above 95 % after
  {m["B_refill_s"]:.1f} s. The paper's dip is deeper ("dropped
  significantly") and it explains it by the few packets each sender injects
  after a congestion notification; here the standing queue absorbs most of
  the gap. The refill being fast agrees with the paper.
- **C's early dip.** The three senders start within the first second; in
  the 1 s bins Jain's index is {m["C_jain_first10_min"]:.2f} at its lowest
  (around 2.5 s, while the last sender's first window is still in flight)
  and about 1 from 3.5 s on. The paper reports a dip to about 0.9 at 3 s
  lasting 2 s: the same start-up transient, deeper and shorter here; the
  depth depends on the start times, which the paper does not give.
- **Hybla behind RED and PI.** satqm's Hybla keeps windows of thousands of
  segments (rho = 20 makes each ACK add 400 / cwnd segments, and each loss
  only halves it), so the paced senders offer far more than the link
  carries; behind drop-tail the buffer absorbs the excess and the total is
  {m["E_hybla_droptail_base_bps"] * 1e-6:.2f} Mbit/s, but behind RED and PI
  (drop mode) the early drops keep every connection in loss recovery with
  repeated timeouts ({m["E_hybla_red_base_bps"] * 1e-6:.2f} and
  {m["E_hybla_pi_base_bps"] * 1e-6:.2f} Mbit/s). The paper found Hybla best
  behind PI; its ns-2 Hybla and its RED and PI settings are not given, so
  this comparison rests on ours. Erasures then make little difference to an
  already collapsed Hybla (fall: RED {100 * m["E_hybla_red_per_fall"]:.0f} %,
  PI {100 * m["E_hybla_pi_per_fall"]:.0f} %), while behind drop-tail they
  cut it by {100 * m["E_hybla_droptail_per_fall"]:.0f} %. ATSP loses
  {100 * m["E_atsp_pi_per_fall"]:.1f} %: it resends erased packets in its
  paced slots and never cuts its rate for them.
- **Start and stop times.** The paper does not give when the senders of A
  start (here 0, 20, 40 s) nor the run lengths; B stops sender 3 at 45 s as
  the paper says, E turns source 3 off at 40 s.
- **N.** The paper tuned its PI for N = 3 only; so does this reproduction.
"""
