"""Beyond the papers: the papers' AQMs, and TCP, on a LEO path that changes
every 15 s (``satqm reproduce leo``).

Two questions, each answered by pairs of runs that differ only in the link:
a Starlink-like schedule (:mod:`satqm.leo.starlink`: capacity drawn per
15 s interval, a base delay per interval with jitter, a delay spike and a
burst of loss at each boundary) against a fixed link with the schedule's
mean rate, mean delay and background loss.

- **AQMs on a LEO path.** 16 SACK flows with round trips of 60-150 ms
  through the bottleneck under drop-tail, RED, Adaptive RED, AVQ, AVQRED,
  PIE, CoDel and FQ-CoDel. AVQ and AVQRED run twice: following the link's
  rate (their capacity is the link's, `docs/aqm.md#links-that-change`) and
  with the fixed capacity their papers set (the mean rate). Does each
  still keep the queue low when the capacity changes every 15 s, and at
  what utilization?
- **TCP across handovers.** 4 flows of NewReno, SACK, Hybla, CUBIC and BBR
  over a drop-tail bottleneck: timeouts, timeouts no loss of the flow
  preceded (most likely spurious: the delay spike outgrew the RTO), and
  the goodput each boundary costs against the fixed link.

Every run is one scenario text with its schedule in its `[files]` table,
kept in ``runs/NAME/`` like a paper reproduction's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from satqm.experiments._runner import Run, ci_cell, run_all, write_json, write_text

#: Interval of the Starlink-like schedule: its boundaries are the handovers.
INTERVAL_S = 15.0
#: The user's capacity around which the per-interval capacity is drawn (a
#: fixed value: the Ookla spread across users would make seeds incomparable).
USER_CAPACITY_BPS = 50e6
#: Seconds left out at the start of every run.
WARMUP_S = 5.0
BUFFER_PACKETS = 500

#: Part A: name -> ([[aqm]] table body, or "" for drop-tail; and whether it
#: takes the fixed mean capacity, "{capacity}", as its papers set it).
AQMS: dict[str, str] = {
    "droptail": "",
    "red": 'kind = "red"\nmin_th = 50\nmax_th = 150\nmax_p = 0.1\nw_q = 0.002\n'
    "mean_packet_size = 1500\n",
    "ared": 'kind = "ared"\nmin_th = 50\nmax_th = 150\nmean_packet_size = 1500\n',
    "avq": 'kind = "avq"\ngamma = 0.98\nalpha = 0.15\nmean_packet_size = 1500\n',
    "avq-fixed": 'kind = "avq"\ngamma = 0.98\nalpha = 0.15\nmean_packet_size = 1500\n'
    'capacity = "{capacity} bps"\n',
    "avqred": 'kind = "avqred"\nmin_th = 50\nmax_th = 150\npacket_bytes = 1500\n',
    "avqred-fixed": 'kind = "avqred"\nmin_th = 50\nmax_th = 150\npacket_bytes = 1500\n'
    'min_capacity = "{capacity98} bps"\nmax_capacity = "{capacity98} bps"\n',
    "pie": 'kind = "pie"\n',
    "codel": 'kind = "codel"\n',
    "fq_codel": 'kind = "fq_codel"\nmode = "drop"\n',
}

#: Part B: name -> [tcp] table body. NewReno, SACK and Hybla as the
#: papers' stacks run them (satqm's RFC profile: 1 s minimum RTO, no
#: RACK); CUBIC and BBR as today's Linux does (the `linux` profile: RACK-TLP,
#: 200 ms minimum RTO, Linux's RTT estimator).
TCPS: dict[str, str] = {
    "newreno": 'recovery = "newreno"\ncc = "reno"\n',
    "sack": 'recovery = "sack"\ncc = "reno"\n',
    "hybla": 'recovery = "sack"\ncc = "hybla"\n',
    "cubic": 'profile = "linux"\n',
    "bbr": 'profile = "linux"\ncc = "bbr"\n',
}

#: A timeout is counted as most likely spurious if no data packet of its
#: flow was dropped in this many seconds before it: longer than the first
#: timeout after a loss takes (1 s at least with RFC 6298's timer, and
#: the smoothed RTT plus four deviations), so a timeout that follows a loss
#: is not counted; a drop of the flow for another reason within the window
#: hides a spurious one (the count is a floor).
SPURIOUS_WINDOW_S = 3.0


def _scenario(
    name: str,
    *,
    duration: float,
    pairs: int,
    link: dict[str, float],
    schedule: str | None,
    tcp: str,
    aqm: str,
) -> str:
    """A dumbbell whose bottleneck is the LEO path: fixed (``link``'s
    values) or playing ``schedule`` (a CSV, carried in ``[files]``)."""
    text = f"""name = "{name}"
[simulation]
duration = "{duration:g} s"
warmup = "{WARMUP_S:g} s"
sample_interval = "100 ms"

[topology]
kind = "dumbbell"
pairs = {pairs}

[topology.access]
rate = "1 Gbps"
delay = {{ min = "5 ms", max = "50 ms" }}

[topology.bottleneck]
rate = "{link["rate_bps"]:.0f} bps"
delay = "{link["delay_s"] * 1e3:.6f} ms"
loss = {link["loss"]:.6g}
reverse_loss = {link["reverse_loss"]:.6g}
buffer = {BUFFER_PACKETS}
"""
    if schedule is not None:
        text += '\n[topology.bottleneck.schedule]\ntrace = "starlink.csv"\n'
    text += f"\n[tcp]\nmss = 1448\ninitial_window = 10\nwindow_scaling = true\n{tcp}"
    text += '\n[[traffic]]\nkind = "bulk"\npairs = "all"\nstart = { uniform = ["0 s", "1 s"] }\n'
    if aqm:
        text += f'\n[[aqm]]\nat = "bottleneck"\n{aqm}'
    if schedule is not None:
        # The schedule travels with the scenario (a TOML literal string).
        text += f"\n[files]\n\"starlink.csv\" = '''\n{schedule}'''\n"
    return text


def _means(df: Any, duration: float) -> dict[str, float]:
    """The time-weighted means of a schedule's rate, delay and losses over
    ``[0, duration]``: the fixed link it is compared with."""
    import numpy as np

    t = df["time"].to_numpy(dtype=float)
    out: dict[str, float] = {}
    for col, key in (
        ("rate", "rate_bps"),
        ("delay", "delay_s"),
        ("loss", "loss"),
        ("reverse_loss", "reverse_loss"),
    ):
        v = df[col].ffill().to_numpy(dtype=float)
        ends = np.append(t[1:], duration)
        w = np.clip(np.minimum(ends, duration) - np.minimum(t, duration), 0.0, None)
        out[key] = float(np.sum(v * w) / np.sum(w))
    return out


def _flow_timeouts(res: Any) -> tuple[int, int]:
    """All retransmission timeouts after the warm-up, and those that no
    drop of the flow's data preceded within :data:`SPURIOUS_WINDOW_S`."""
    cg = res.congestion
    to = cg[(cg["kind"] == "timeout") & (cg["time_s"] >= WARMUP_S)]
    drops = res.drops[res.drops["data"]]
    spurious = 0
    for row in to.itertuples():
        d = drops[(drops["flow"] == row.flow) & (drops["time_s"] <= row.time_s)]
        if not len(d) or float(d["time_s"].max()) < row.time_s - SPURIOUS_WINDOW_S:
            spurious += 1
    return len(to), spurious


def _stats(res: Any, duration: float) -> dict[str, float]:
    s = res.summary()
    ts = res.link("bottleneck")
    after = ts[ts.index > WARMUP_S]
    timeouts, spurious = _flow_timeouts(res)
    return {
        "goodput_mbps": s["goodput_total_bps"] / 1e6,
        "utilization": float(after["utilization"].mean()),
        "qdelay_mean_ms": s["queue_delay_mean_ms"],
        "qdelay_p95_ms": s["queue_delay_p95_ms"],
        "qdelay_p99_ms": s["queue_delay_p99_ms"],
        "queue_mean_packets": s["queue_mean_packets"],
        "drops": s["drops_total"],
        "timeouts": float(timeouts),
        "spurious_timeouts": float(spurious),
    }


def reproduce(
    out: Path,
    quick: bool = False,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Run both parts; write their tables and REPORT.md. ``quick``: one seed
    and 45 s instead of three seeds and 180 s. Returns the path of REPORT.md."""
    import pandas as pd

    import satqm
    from satqm.leo.starlink import StarlinkLike, starlink_schedule, write_starlink_schedule

    out = Path(out)
    seeds = [1] if quick else [1, 2, 3]
    duration = 45.0 if quick else 180.0
    params = StarlinkLike(user_capacity_bps=USER_CAPACITY_BPS)
    (out / "schedules").mkdir(parents=True, exist_ok=True)
    runs: list[Run] = []
    links: dict[int, dict[str, float]] = {}
    for seed in seeds:
        path = out / "schedules" / f"starlink-s{seed}.csv"
        write_starlink_schedule(path, duration, seed=seed, params=params)
        csv = path.read_text(encoding="utf-8")
        links[seed] = _means(starlink_schedule(duration, seed=seed, params=params), duration)
        # The fixed link: the schedule's mean rate and delay, and its
        # background loss only (the boundary bursts are the handovers').
        links[seed].update(loss=params.downlink_loss, reverse_loss=params.uplink_loss)
        m = links[seed]
        fill = {
            "capacity": f"{m['rate_bps']:.0f}",
            "capacity98": f"{0.98 * m['rate_bps']:.0f}",
        }
        for variant, schedule in (("fixed", None), ("leo", csv)):
            for name, table in AQMS.items():
                runs.append(
                    Run(
                        f"aqm-{name}-{variant}-s{seed}",
                        _scenario(
                            f"leo-aqm-{name}-{variant}",
                            duration=duration,
                            pairs=16,
                            link=m,
                            schedule=schedule,
                            tcp=TCPS["sack"],
                            aqm=table.format(**fill),
                        ),
                        seed,
                    )
                )
            for name, tcp in TCPS.items():
                runs.append(
                    Run(
                        f"tcp-{name}-{variant}-s{seed}",
                        _scenario(
                            f"leo-tcp-{name}-{variant}",
                            duration=duration,
                            pairs=4,
                            link=m,
                            schedule=schedule,
                            tcp=tcp,
                            aqm="",
                        ),
                        seed,
                    )
                )
    folders = run_all(runs, out / "runs", workers=workers, progress=progress)

    rows = []
    for r in runs:
        part = r.name.split("-", 1)[0]
        name, variant = _split(r.name)
        res = satqm.Results.load(folders[r.name])
        rows.append(
            {"part": part, "name": name, "link": variant, "seed": r.seed, **_stats(res, duration)}
        )
    df = pd.DataFrame(rows)
    df.to_csv(out / "runs.csv", index=False)

    # Boundaries at 12 s past the minute and every 15 s (runs start at second 0).
    boundaries = int((duration - 12.0) // INTERVAL_S) + 1
    aqm_md = _aqm_table(df[df.part == "aqm"])
    tcp_md = _tcp_table(df[df.part == "tcp"], duration, boundaries, links)
    write_text(out / "aqm.md", aqm_md)
    write_text(out / "tcp.md", tcp_md)
    write_json(out / "links.json", {f"s{k}": v for k, v in links.items()})

    mean_rate = sum(v["rate_bps"] for v in links.values()) / len(links) / 1e6
    report = f"""# Beyond the papers: AQM and TCP on a LEO path that changes every 15 s

Command: `satqm reproduce leo{" --quick" if quick else ""} --out {out}`
({len(seeds)} seed(s): {", ".join(map(str, seeds))}; {duration:g} s simulated per run,
the first {WARMUP_S:g} s left out).

The LEO path is `satqm.leo.starlink`'s preset (docs/leo.md) with a user
capacity of {USER_CAPACITY_BPS / 1e6:g} Mbit/s: every 15 s (boundaries at 12, 27, 42
and 57 s past the minute) a new capacity (lognormal around it, sigma 0.3) and
a new base delay; 10 ms jitter steps; at each boundary a +40 ms spike for
140 ms with a 10 % loss burst, and +20 ms for 75 ms before it. The *fixed*
link has the schedule's time-weighted mean rate (here {mean_rate:.1f} Mbit/s on
average over seeds), mean delay and background loss (1e-4 down, 2e-3 up).
Schedules: `schedules/`. The bottleneck buffer holds {BUFFER_PACKETS} packets.
Means over seeds, with the 95 % confidence half-width where there are several.

## AQMs on the LEO path (16 SACK flows)

{aqm_md}
`-fixed`: the capacity the papers set, fixed at the mean rate (AVQ's `C`;
AVQRED's `min_capacity` = `max_capacity` = 98 % of it); the others follow
the link's rate at each change (docs/aqm.md#links-that-change). Utilization
is the share of time the bottleneck's transmitter was busy, at the rate in
force.

## TCP across the boundaries (4 flows, drop-tail)

NewReno, SACK and Hybla run as the papers' stacks (RFC 6298's timer, 1 s
minimum RTO, no RACK); CUBIC and BBR (v1) as Linux runs them (the `linux`
profile: RACK-TLP, 200 ms minimum RTO).

{tcp_md}
"Lost per boundary": the goodput the LEO run lost against the fixed link
(what the capacity changes, the delay spikes and the loss bursts cost
together), spread over its {boundaries} boundaries, in kilobytes and in
milliseconds of the fixed link's rate; negative where the LEO run did
better. "Without loss before": timeouts that no drop of the flow's data
preceded within {SPURIOUS_WINDOW_S:g} s, most likely spurious (the delay spike
outgrew the RTO); the others followed a loss.

## What this does not model

- One rate for both directions: the uplink's capacity is the downlink's.
- The schedule is statistical (docs/leo.md, "A Starlink-like preset"):
  several of its parameters are placeholders to fit from measured traces.
- The receiver side of the dish, Wi-Fi, and the PoP's own queues are not
  modelled; the queue is the bottleneck's alone.
"""
    write_text(out / "REPORT.md", report)
    return out / "REPORT.md"


def _split(name: str) -> tuple[str, str]:
    """``aqm-avq-fixed-leo-s1`` -> (``avq-fixed``, ``leo``)."""
    body = name.rsplit("-s", 1)[0].split("-", 1)[1]
    what, variant = body.rsplit("-", 1)
    return what, variant


def _aqm_table(df: Any) -> str:
    lines = [
        "| AQM | link | goodput Mbit/s | utilization | queueing delay mean ms | p95 ms | "
        "p99 ms | drops |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in AQMS:
        for link in ("fixed", "leo"):
            g = df[(df.name == name) & (df.link == link)]
            lines.append(
                f"| {name} | {link} | {ci_cell(list(g.goodput_mbps), 2)} | "
                f"{ci_cell(list(g.utilization), 3)} | {ci_cell(list(g.qdelay_mean_ms), 1)} | "
                f"{ci_cell(list(g.qdelay_p95_ms), 1)} | {ci_cell(list(g.qdelay_p99_ms), 1)} | "
                f"{ci_cell(list(g.drops), 0)} |"
            )
    return "\n".join(lines) + "\n"


def _tcp_table(df: Any, duration: float, boundaries: int, links: dict) -> str:
    lines = [
        "| TCP | goodput fixed Mbit/s | goodput LEO Mbit/s | lost per boundary, KB | "
        "lost per boundary, ms | timeouts fixed | timeouts LEO | without loss before |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    measured = duration - WARMUP_S
    for name in TCPS:
        fixed = df[(df.name == name) & (df.link == "fixed")].sort_values("seed")
        leo = df[(df.name == name) & (df.link == "leo")].sort_values("seed")
        lost_kb, lost_ms = [], []
        for (_, f), (_, lrow) in zip(fixed.iterrows(), leo.iterrows()):
            lost_bits = (f.goodput_mbps - lrow.goodput_mbps) * 1e6 * measured
            lost_kb.append(lost_bits / 8 / 1e3 / boundaries)
            lost_ms.append(lost_bits / links[int(f.seed)]["rate_bps"] / boundaries * 1e3)
        lines.append(
            f"| {name} | {ci_cell(list(fixed.goodput_mbps), 2)} | "
            f"{ci_cell(list(leo.goodput_mbps), 2)} | "
            f"{ci_cell(lost_kb, 0)} | {ci_cell(lost_ms, 0)} | {ci_cell(list(fixed.timeouts), 1)} | "
            f"{ci_cell(list(leo.timeouts), 1)} | {ci_cell(list(leo.spurious_timeouts), 1)} |"
        )
    return "\n".join(lines) + "\n"
