"""ATSP across the IP-over-satellite gateway, beyond the ATSP paper: ATSP
senders and split TCP transfers share the gateway's transmit queue, where a
PI AQM marks.

The gateway is that of the AVQRED conference scenario
(``scenarios/avqred/conference.toml``: 20 Mbit/s downlink behind a
200-packet transmit queue with backpressure, split-TCP PEPs at the gateway
and the terminal), with six servers and six clients. Three ATSP senders
(pairs 0-2) run end to end: a TCP-splitting PEP does not speak ATSP, so
their packets cross both PEPs' nodes as routed traffic. Three bulk TCP
transfers (pairs 3-5) are split into server-gateway, backbone and
terminal-client connections. The PI at the transmit queue marks ECN-capable
packets: ATSP's data and the backbone's (``[pep.tcp] ecn = true``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

from ._runner import packaged_scenario, set_run, write_json

GATEWAY = "scenarios/avqred/conference.toml"
NAME = "X-gateway"
#: Half the transmit queue's 200 packets.
Q_REF = 100
#: 20 Mbit/s in 1,500-byte packets per second: the PI samples at T = 1/C.
C_PKTS = 20e6 / (8 * 1500)
#: The downlink's bandwidth-delay product, 20 Mbit/s x 0.78 s (the mean
#: round trip: 40-80 ms to the servers, 305-405 ms down, 300-400 ms up).
W_MAX = 1300
#: Payload bytes of a 1,500-byte packet (ATSP's and the servers' TCP).
PAYLOAD = 1460


def scenario(duration: float = 150.0) -> str:
    """The run's scenario text."""
    text = packaged_scenario(GATEWAY)
    text = text.replace("servers = 60\nclients = 200", "servers = 6\nclients = 6", 1)
    text = text.replace('sample_interval = "100 ms"', 'sample_interval = "500 ms"', 1)
    text = text.replace('receive_buffer = "2 MB"', 'receive_buffer = "2 MB"\necn = true', 1)
    cut = text.index("[[traffic]]")
    pi = (
        f'kind = "pi"\nmode = "mark"\nat = "transmit"\nq_ref = {Q_REF}\n'
        f"sample_rate = {C_PKTS:.3f}\nkp = 2.607e-5\nki = 2.508e-5"
    )
    traffic = (
        f'[[traffic]]\nkind = "atsp"\npairs = {{ from = 0, to = 2 }}\n'
        f'start = {{ uniform = ["0 s", "1 s"] }}\natsp = {{ w_max = {W_MAX} }}\n\n'
        '[[traffic]]\nkind = "bulk"\npairs = { from = 3, to = 5 }\n'
        'start = { uniform = ["0 s", "1 s"] }\n'
    )
    text = text[:cut] + traffic + f"\n[[aqm]]\n{pi}\n"
    text = set_run(text, name="atsp-gateway", duration=duration, warmup=duration / 2)
    for part in ("servers = 6", 'sample_interval = "500 ms"', "ecn = true"):
        assert part in text, f"the gateway scenario no longer has {part!r}"
    return text


def measure(res: Any, jain: Callable[[Any], float]) -> dict[str, float]:
    """Goodputs at the clients, Jain's index among the ATSP flows, the
    transmit queue and its marks and drops over the run's second half (its
    warmup is the first half)."""
    f = res.flows
    atsp_f, tcp_f = f[f.kind == "atsp"], f[f.kind == "bulk"]
    half = float(res.summary()["warmup_s"])
    q = res.link("transmit").queue_packets
    q = q[q.index > half]
    d = res.drops
    d = d[(d.time_s > half) & (d.link == "transmit")]
    atsp = d.flow.isin(atsp_f.flow)
    marks = d.reason.isin(["early_mark", "forced_mark"])
    # ATSP's marking probability: its marks per data packet delivered.
    seconds = float(res.summary()["duration_s"]) - half
    p = float((atsp & marks).sum()) / max(
        1.0, float(atsp_f.goodput_bps.sum()) * seconds / 8 / PAYLOAD
    )
    # A split transfer's connections are numbered in path order: the
    # backbone follows the server's connection. Mathis et al.'s rate at
    # that probability over the backbone's round trip.
    backbone = f[f.flow.isin(tcp_f.flow + 1)]
    mathis = (backbone.rtt_mean_s.rdiv(PAYLOAD * 8.0) * math.sqrt(1.5 / p)).sum() if p > 0 else 0.0
    return {
        "mark_prob": p,
        "tcp_mathis_bps": float(mathis),
        "jain_atsp": jain(list(atsp_f.goodput_bps)),
        "atsp_bps": float(atsp_f.goodput_bps.sum()),
        "tcp_bps": float(tcp_f.goodput_bps.sum()),
        "queue_mean": float(q.mean()),
        "queue_std": float(q.std(ddof=0)),
        "atsp_marks": float((atsp & marks).sum()),
        "backbone_marks": float((~atsp & marks).sum()),
        "overflow_drops": float((d.reason == "overflow").sum()),
    }


def section(
    out: Path,
    load: Callable[[str, int], Any],
    seeds: list[int],
    jain: Callable[[Any], float],
) -> tuple[str, str]:
    """The gateway run's table and its section of the report (means over
    seeds); writes ``beyond-gateway.json``."""
    per_seed = [measure(load(NAME, s), jain) for s in seeds]
    m = {k: sum(x[k] for x in per_seed) / len(per_seed) for k in per_seed[0]}
    write_json(out / "beyond-gateway.json", {"mean": m, "per_seed": per_seed, "seeds": seeds})
    table = (
        "| ATSP Mbit/s | split TCP Mbit/s | Jain (ATSP) | transmit queue mean | std | "
        "ATSP marks | backbone marks | overflow drops |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        f"| {m['atsp_bps'] * 1e-6:.2f} | {m['tcp_bps'] * 1e-6:.2f} | {m['jain_atsp']:.4f} | "
        f"{m['queue_mean']:.0f} | {m['queue_std']:.0f} | {m['atsp_marks']:.0f} | "
        f"{m['backbone_marks']:.0f} | {m['overflow_drops']:.0f} |\n"
    )
    share = m["atsp_bps"] / (m["atsp_bps"] + m["tcp_bps"]) if m["tcp_bps"] > 0 else math.nan
    return (
        table,
        f"""
### ATSP across the IP-over-satellite gateway

The AVQRED conference gateway (`scenarios/avqred/conference.toml`) with six
servers and six clients: three ATSP senders (W_max = {W_MAX} packets, the
downlink's bandwidth-delay product) and three bulk TCP transfers split by the
gateway and terminal PEPs share the 200-packet transmit queue, where a PI
marks (the paper's gains, q_ref = {Q_REF}, T = 1/C with C = {C_PKTS:.1f}
packets/s; the PEP backbone is ECN-capable). The PEPs split TCP only: ATSP
runs end to end. Figures over 75-150 s; marks and drops at the transmit queue.

{table}
ATSP takes {100 * share:.0f} % of the goodput. Both sides see the same
marking probability ({m["mark_prob"]:.3f} per ATSP data packet) but answer
it differently: ATSP cuts by the marked fraction and climbs back toward
(1 - Lambda) W_max every cycle, so the PI settles where three senders of
W_max = BDP fit the link; a backbone connection halves its window at a
mark, and at that probability over the backbone's round trip Mathis et al.'s
formula, MSS / RTT x sqrt(3 / 2p), allows the three of them
{m["tcp_mathis_bps"] * 1e-6:.2f} Mbit/s (measured
{m["tcp_bps"] * 1e-6:.2f}). The PEP cannot help: it shortens the
servers' loops, but the backbone still crosses the satellite.
""",
    )
