"""The results of one run as pandas DataFrames, and their files on disk.

A run's folder (:meth:`Results.save`) holds everything needed to check it and
to run it again:

==================  =========================================================
``scenario.toml``   the scenario text that ran, headed by a comment giving the
                    seed and duration used and the command to run it again
``summary.json``    summary figures, seed, duration, satqm version, link and
                    drop-reason names, packet counts
``timeseries.parquet``  one row per monitored link per sample
``delay_hist.parquet``  each monitored link's histogram of queueing delays
``drops.parquet``   one row per dropped or ECN-marked packet (``reason``)
``flows.parquet``   one row per flow
``cwnd.parquet``    congestion window samples of the traced flows
``congestion.parquet``  one row per window cut of any TCP sender
``traffic.parquet``  each traffic entry's delivered bytes at every sample
                    (only with ``simulation.trace_traffic``)
``plot.png``        utilization and queue of the bottleneck link
``run.json``        wall-clock facts (time taken, when, where)
==================  =========================================================

Everything but ``run.json`` and ``plot.png`` is byte-for-byte the same for
the same scenario, seed and software versions.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import secrets
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from satqm._core import SimulationError
from satqm._core import __version__ as _VERSION

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from matplotlib.figure import Figure

    from satqm.scenario import Scenario

__all__ = ["Results"]

#: Files written by :meth:`Results.save` that are identical for identical runs.
DETERMINISTIC_FILES = (
    "scenario.toml",
    "summary.json",
    "timeseries.parquet",
    "delay_hist.parquet",
    "drops.parquet",
    "flows.parquet",
    "cwnd.parquet",
    "congestion.parquet",
)

_TABLES = ("timeseries", "delay_hist", "drops", "flows", "cwnd", "congestion")
# Written only by an emulation (satqm.Emulation), and only when not empty.
_EMULATION_TABLES = ("connections", "real_packets")

#: Why a sender cut its window, by code (the core's `CutKind`).
CUT_KINDS = ["fast_retransmit", "timeout", "ecn"]
#: The ``cc_state`` of the window traces: ``none`` for a congestion control
#: without states; BBR's four; BBRv3's ProbeBW phases.
CC_STATES = [
    "none",
    "startup",
    "drain",
    "probe_bw",
    "probe_rtt",
    "probe_bw_down",
    "probe_bw_cruise",
    "probe_bw_refill",
    "probe_bw_up",
]

#: Which packets a ``delay_hist`` row counts, by code: every packet, or
#: those carrying ECT(1), the L4S identifier (RFC 9331).
DELAY_CLASSES = ["all", "l4s"]

#: What a row of the ``seq`` table records, by code (the core's `SeqEvent`).
SEQ_EVENTS = ["sent", "retransmitted", "acked", "sacked", "dropped"]

# Column order and dtype of each table (categoricals are set separately).
_INT = "int64"
_F = "float64"
_SCHEMAS: dict[str, dict[str, str]] = {
    "timeseries": {
        "time_s": _F,
        "link": "category",
        "utilization": _F,
        "throughput_bps": _F,
        "queue_packets": _INT,
        "queue_bytes": _INT,
        "queue_delay_ms": _F,
        "drops": _INT,
        "arrivals": _INT,
        "marks": _INT,
    },
    "delay_hist": {
        "link": "category",
        "packets_of": "category",
        "delay_lo_ns": _INT,
        "delay_hi_ns": _INT,
        "packets": _INT,
    },
    "drops": {
        "time_s": _F,
        "link": "category",
        "flow": _INT,
        "index": _INT,
        "reason": "category",
        "data": "bool",
        "size": _INT,
    },
    "flows": {
        "flow": _INT,
        "pair": _INT,
        "kind": "category",
        "start_s": _F,
        "completion_s": _F,
        "bytes_delivered": _INT,
        "goodput_bps": _F,
        "segments_sent": _INT,
        "retransmits": _INT,
        "fast_retransmits": _INT,
        "timeouts": _INT,
        "loss_probes": _INT,
        "undos": _INT,
        "ecn_reductions": _INT,
        "rtt_samples": _INT,
        "rtt_min_s": _F,
        "rtt_mean_s": _F,
        "rtt_max_s": _F,
        "cwnd_bytes": _F,
    },
    "cwnd": {
        "time_s": _F,
        "flow": _INT,
        "cwnd_bytes": _F,
        "ssthresh_bytes": _F,
        "delivered_bytes": _INT,
        "pacing_rate_bps": _F,
        "cc_state": "category",
        "pacing_gain": _F,
        "cwnd_gain": _F,
        "bw_estimate_bps": _F,
        "min_rtt_s": _F,
    },
    "seq": {
        "time_s": _F,
        "flow": _INT,
        "event": "category",
        "way": _INT,
        "seq": _INT,
        "end": _INT,
    },
    "traffic": {
        "time_s": _F,
        "traffic": _INT,
        "delivered_bytes": _INT,
    },
    "link_state": {
        "time_s": _F,
        "link": "category",
        "rate_bps": _INT,
        "delay_s": _F,
        "loss": _F,
        "up": "bool",
    },
    # An emulation's real connections (satqm.Emulation): one row per 5-tuple.
    "connections": {
        "flow": _INT,
        "protocol": _INT,
        "src": "object",
        "src_port": _INT,
        "dst": "object",
        "dst_port": _INT,
    },
    # An emulation's real packets: when each entered the network and when
    # it reached its host (NaN: dropped or still in flight), and how late the
    # emulator wrote it to the host's device.
    "real_packets": {
        "uid": _INT,
        "flow": _INT,
        "size": _INT,
        "entered_s": _F,
        "delivered_s": _F,
        "late_s": _F,
    },
    "congestion": {
        "time_s": _F,
        "flow": _INT,
        "origin": _INT,
        "kind": "category",
        "cwnd_before": _F,
        "cwnd_after": _F,
        "ssthresh": _F,
        "srtt_s": _F,
    },
}


# numpy and pandas are imported where used, so that `satqm --help` and
# `satqm check` start quickly.


def _seconds(ns: Any) -> np.ndarray:
    import numpy as np

    # Division (not multiplication by 1e-9) is correctly rounded: 120 s stays 120.0.
    return np.asarray(ns, dtype=np.uint64).astype(np.float64) / 1e9


def _codes(name: str, values: Any, categories: list[str]) -> pd.Categorical:
    import numpy as np
    import pandas as pd

    codes = np.asarray(values).astype(np.int64)
    if codes.size and (codes.min() < 0 or codes.max() >= len(categories)):
        raise SimulationError(f"results: {name} code out of range")
    return pd.Categorical.from_codes(codes, categories=categories)


def _fmt(v: float) -> str:
    """A summary figure for a table cell (``n/a`` where it is undefined)."""
    if isinstance(v, float) and math.isnan(v):
        return "n/a"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return f"{int(v)}"
    return f"{v:.6g}"


#: The time series' columns after its fixed ones: the internals of each
#: link's AQM and queue discipline, named by the algorithm (float64).
PROBE_PREFIX = "aqm_"


def _probe_columns(table: str, names: Any) -> list[str]:
    """The AQM-internal columns among ``names``, in order (time series only)."""
    if table != "timeseries":
        return []
    return [k for k in names if k.startswith(PROBE_PREFIX) and k not in _SCHEMAS[table]]


def _frame(table: str, cols: Mapping[str, Any]) -> pd.DataFrame:
    import pandas as pd

    schema = _SCHEMAS[table]
    df = pd.DataFrame({k: cols[k] for k in [*schema, *_probe_columns(table, cols)]})
    for k, dtype in schema.items():
        if dtype != "category":
            df[k] = df[k].astype(dtype)
    for k in _probe_columns(table, cols):
        df[k] = df[k].astype(_F)
    return df


def _json_value(v: Any) -> Any:
    """Plain JSON: NaN and infinities become null; numpy scalars become Python."""
    if isinstance(v, Mapping):
        return {str(k): _json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if type(v).__module__ == "numpy" and hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    return v


def _atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """Write ``path`` through a temporary file in the same folder, then rename."""
    # Not mkstemp: its files are mode 0600, while results are meant to be shared.
    tmp_path = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        write(tmp_path)
        os.replace(tmp_path, path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def _write_text(path: Path, text: str) -> None:
    _atomic_write(path, lambda p: p.write_text(text, encoding="utf-8", newline="\n"))


def _write_parquet(path: Path, df: pd.DataFrame) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False)
    # No statistics timestamps or writer clocks are involved: the bytes depend
    # only on the data and the pyarrow/pandas versions.
    _atomic_write(path, lambda p: pq.write_table(table, p, compression="zstd"))


_HEADER_START = "# Run by satqm "
_HEADER_LINES = 2


def _scenario_header(scenario: Scenario, seed: int, duration: float) -> str:
    lines = [
        f"{_HEADER_START}{_VERSION} with seed = {seed}, duration = {duration:.9g} s.",
    ]
    ov = scenario.overrides
    if ov:
        flags = []
        if "seed" in ov:
            flags.append(f"--seed {ov['seed']}")
        if "duration" in ov:
            flags.append(f"--duration {ov['duration']!r}")
        if "warmup" in ov:
            flags.append(f"--warmup {ov['warmup']!r}")
        if "max_memory" in ov:
            flags.append(f"--max-memory {str(ov['max_memory'])!r}")
        flags.extend(f"--capture {name}" for name in ov.get("capture", ()))
        if "capture_side" in ov:
            flags.append(f"--capture-side {ov['capture_side']}")
        lines.append(
            "# (overriding the text below); to run it again: satqm run scenario.toml "
            f"{' '.join(flags)} --out DIR"
        )
    else:
        lines.append("# To run it again: satqm run scenario.toml --out DIR")
    assert len(lines) == _HEADER_LINES
    return "\n".join(lines) + "\n"


def _strip_header(text: str) -> str:
    """The scenario text as it ran, without the header :meth:`Results.save` adds."""
    if text.startswith(_HEADER_START):
        return text.split("\n", _HEADER_LINES)[-1]
    return text


class Results:
    """The data of one run.

    Attributes
    ----------
    timeseries : pandas.DataFrame
        One row per monitored link per sample: ``time_s``, ``link``
        (categorical of link names), ``utilization`` (fraction of the sample
        interval the link was busy, in [0, 1]), ``throughput_bps``,
        ``queue_packets``, ``queue_bytes``, ``queue_delay_ms`` (mean queueing
        delay of the packets that left the buffer in the interval, NaN if
        none did), ``drops``, ``arrivals`` and ``marks``
        (counts in the interval); then the internals of the AQM acting at
        each link and of its queue discipline, one ``aqm_…`` column per
        value any link of the run reports, named by the algorithm and NaN
        on the rows of links that do not report it: ``aqm_avg`` (RED's
        average), ``aqm_prob`` (drop or mark probability), ``aqm_count``,
        ``aqm_max_p`` (Adaptive RED), ``aqm_vq_bytes`` and
        ``aqm_vcap_bps`` (virtual queue and capacity), ``aqm_price`` (REM),
        ``aqm_qdelay`` (PIE's estimate, CoDel's last sojourn, s), DualPI2's
        ``aqm_p_c``, ``aqm_p_cl``, ``aqm_l_packets``, ``aqm_c_packets``,
        flow queuing's ``aqm_new_flows`` and ``aqm_old_flows``, RED+Tail's
        ``aqm_min_th``, ``aqm_max_th``, ``aqm_pd_avg`` and ``aqm_vq1_…``,
        ``aqm_vq2_…``; ``docs/aqm.md`` lists each algorithm's. A run
        without an AQM has none.
    delay_hist : pandas.DataFrame
        Each monitored link's queueing delays after the warm-up, as a
        histogram: one row per non-empty bucket, ``link``, ``packets_of``
        (``all`` for every packet, ``l4s`` for those carrying ECT(1), which
        get rows of their own when any left the buffer), ``delay_lo_ns`` and
        ``delay_hi_ns`` (the bucket's durations, both ends included; a
        bucket is at most 1/128 of its lower end wide) and ``packets``.
        :meth:`delay_cdf` turns it into a distribution.
    drops : pandas.DataFrame
        One row per dropped packet: ``time_s``, ``link``, ``flow``, ``index``
        (position among the packets that arrived at that link), ``reason``
        (categorical, e.g. ``overflow``, ``erasure``), ``data`` (False for
        ACKs and handshake packets), ``size`` (bytes on the wire).
    flows : pandas.DataFrame
        One row per flow: ids, ``kind``, start and completion (NaN if not
        completed) in seconds, bytes delivered, goodput over the measurement
        window, TCP counters and RTT statistics, final ``cwnd_bytes``.
    cwnd : pandas.DataFrame
        Samples of the traced flows' ``cwnd_bytes`` and ``ssthresh_bytes``,
        ``delivered_bytes``, the pacing rate (``pacing_rate_bps``, NaN
        unpaced) and the congestion control's state: ``cc_state``
        (``none``, or BBR's ``startup``, ``drain``, ``probe_bw``,
        ``probe_rtt``, BBRv3's ``probe_bw_down``, ``probe_bw_cruise``,
        ``probe_bw_refill``, ``probe_bw_up``), BBR's ``pacing_gain``, ``cwnd_gain``,
        ``bw_estimate_bps`` and ``min_rtt_s`` (NaN for other controls).
    congestion : pandas.DataFrame
        One row per congestion-window cut of any TCP sender: ``time_s``,
        ``flow`` (the connection; a PEP segment has its own id), ``origin``
        (the end-to-end flow it carries), ``kind`` (``fast_retransmit``,
        ``timeout``, ``ecn``), ``cwnd_before``, ``cwnd_after`` (the window
        the cut sets; with ``prr``, the ``linux`` profile's, cwnd comes down
        to it over the following round trip) and ``ssthresh`` (bytes),
        ``srtt_s`` (smoothed RTT at the cut, NaN before the first sample).
        :func:`satqm.analysis.synchronization` measures how many
        connections cut within the same round trip.
    packets : dict
        ``created``, ``delivered``, ``dropped``, ``in_flight`` packet counts.
    scenario : Scenario
        What ran, with its overrides.
    seed : int
    wall_time_s : float or None
        Wall-clock seconds the run took (None if not recorded).
    links, drop_reasons : list of str
        Link names (by link id) and drop-reason names (by code).
    seq : pandas.DataFrame
        Per-packet records of the connections ``simulation.trace_seq``
        names, and in an emulation with ``emulation.trace_seq`` of every
        real TCP connection (empty otherwise), for time-sequence graphs
        (:meth:`plot_seq`): ``time_s``, ``flow``, ``event`` (``sent``,
        ``retransmitted``: bytes ``seq`` to ``end`` left the sender;
        ``acked``: an ACK reached it, ``seq`` its cumulative ACK and ``end``
        the right edge of the window it advertises; ``sacked``: one SACK
        block of that ACK; ``dropped``: the network lost bytes ``seq`` to
        ``end``), ``way`` (whose data the row is about: 0 the flow's
        source's, always for a simulated connection; 1 the other end's, for
        a real connection carrying data both ways). Byte offsets count from
        the connection's first byte that way.
    traffic : pandas.DataFrame
        With ``simulation.trace_traffic`` (empty otherwise): at every sample,
        one row per ``[[traffic]]`` entry: ``time_s``, ``traffic`` (the
        entry's index) and ``delivered_bytes``, the payload bytes delivered
        in order to the entry's receivers since the start (the flows table's
        ``bytes_delivered`` summed over the entry's flows).
        :meth:`traffic_throughput` turns it into rates.
    link_state : pandas.DataFrame
        The state of each link that plays a schedule
        (``topology.LINK.schedule``; empty if none does): a row at the
        start, at every change and at every sample time, with ``time_s``,
        ``link``, ``rate_bps`` (the rate in force), ``delay_s`` (the
        propagation delay a packet sent then gets), ``loss`` (the erasure
        probability) and ``up``. :meth:`plot_links` draws it.
    captures : dict of str to bytes
        The packet captures the run wrote (``simulation.capture``): each
        file's name and its pcapng bytes. A captured link direction's
        departures are ``LINK``, its arrivals (``simulation.capture_side``
        ``"in"`` or ``"both"``) ``LINK.in``. :meth:`save` writes them as
        ``capture/NAME.pcapng``.
    connections : pandas.DataFrame
        An emulation's real connections (empty for a simulation): one row
        per 5-tuple, both directions: its ``flow`` (the flows table's row,
        of kind ``real``), ``protocol`` (IP protocol number), and the
        ``src``/``src_port`` that sent its first packet and the
        ``dst``/``dst_port`` it went to.
    real_packets : pandas.DataFrame
        An emulation's real packets: ``uid``, ``flow``, ``size`` (IP bytes),
        ``entered_s`` (when the emulator read it from its host's device),
        ``delivered_s`` (when the network delivered it; NaN if it was
        dropped, see ``drops``, or was still in flight at the end) and
        ``late_s``, how long after ``delivered_s`` it was written to the
        far host's device.
    """

    def __init__(
        self,
        *,
        scenario: Scenario,
        timeseries: pd.DataFrame,
        drops: pd.DataFrame,
        flows: pd.DataFrame,
        cwnd: pd.DataFrame,
        summary: Mapping[str, float],
        congestion: pd.DataFrame | None = None,
        packets: Mapping[str, int],
        links: list[str],
        drop_reasons: list[str],
        wall_time_s: float | None = None,
        bottleneck: str | None = None,
        captures: Mapping[str, bytes] | None = None,
        seq: pd.DataFrame | None = None,
        traffic: pd.DataFrame | None = None,
        delay_hist: pd.DataFrame | None = None,
        link_state: pd.DataFrame | None = None,
        connections: pd.DataFrame | None = None,
        real_packets: pd.DataFrame | None = None,
    ) -> None:
        self.scenario = scenario
        if connections is None:
            connections = _frame("connections", {k: [] for k in _SCHEMAS["connections"]})
        self.connections = connections
        if real_packets is None:
            real_packets = _frame("real_packets", {k: [] for k in _SCHEMAS["real_packets"]})
        self.real_packets = real_packets
        if delay_hist is None:
            import pandas as pd

            cols = {k: [] for k in _SCHEMAS["delay_hist"]}
            cols["link"] = pd.Categorical([], categories=list(links))
            cols["packets_of"] = pd.Categorical([], categories=DELAY_CLASSES)
            delay_hist = _frame("delay_hist", cols)
        self.delay_hist = delay_hist
        if traffic is None:
            traffic = _frame("traffic", {k: [] for k in _SCHEMAS["traffic"]})
        self.traffic = traffic
        if link_state is None:
            import pandas as pd

            cols = {k: [] for k in _SCHEMAS["link_state"]}
            cols["link"] = pd.Categorical([], categories=list(links))
            link_state = _frame("link_state", cols)
        self.link_state = link_state
        if seq is None:
            import pandas as pd

            cols: dict[str, Any] = {k: [] for k in _SCHEMAS["seq"]}
            cols["event"] = pd.Categorical([], categories=SEQ_EVENTS)
            seq = _frame("seq", cols)
        self.seq = seq
        self.captures: dict[str, bytes] = dict(captures or {})
        self.timeseries = timeseries
        self.drops = drops
        self.flows = flows
        self.cwnd = cwnd
        if congestion is None:
            import pandas as pd

            cols: dict[str, Any] = {k: [] for k in _SCHEMAS["congestion"]}
            cols["kind"] = pd.Categorical([], categories=CUT_KINDS)
            congestion = _frame("congestion", cols)
        self.congestion = congestion
        self._summary = dict(summary)
        self.packets = dict(packets)
        self.links = list(links)
        self.drop_reasons = list(drop_reasons)
        self.wall_time_s = wall_time_s
        if bottleneck is None:
            # Folders written before the core named it: the dumbbell's link.
            bottleneck = "bottleneck" if "bottleneck" in self.links else self.links[0]
        self._bottleneck = bottleneck

    # ----- construction ------------------------------------------------------

    @classmethod
    def _from_core(cls, raw: Mapping[str, Any], scenario: Scenario, wall: float) -> Results:
        links = [str(x) for x in raw["links"]]
        reasons = [str(x) for x in raw["drop_reasons"]]

        ts = dict(raw["timeseries"])
        ts["time_s"] = _seconds(ts["time_ns"])
        ts["link"] = _codes("link", ts["link"], links)

        dh = dict(raw["delay_hist"])
        dh["link"] = _codes("link", dh["link"], links)
        dh["packets_of"] = _codes("packets_of", dh["packets_of"], DELAY_CLASSES)

        dr = dict(raw["drops"])
        dr["time_s"] = _seconds(dr["time_ns"])
        dr["link"] = _codes("link", dr["link"], links)
        dr["reason"] = _codes("reason", dr["reason"], reasons)

        cw = dict(raw["cwnd"])
        cw["time_s"] = _seconds(cw["time_ns"])
        cw["cc_state"] = _codes("cc_state", cw["cc_state"], CC_STATES)

        cg = dict(raw["congestion"])
        cg["time_s"] = _seconds(cg["time_ns"])
        cg["kind"] = _codes("kind", cg["kind"], CUT_KINDS)

        tr = dict(raw["traffic"])
        tr["time_s"] = _seconds(tr["time_ns"])

        ls = dict(raw["link_state"])
        ls["time_s"] = _seconds(ls["time_ns"])
        ls["delay_s"] = _seconds(ls["delay_ns"])
        ls["link"] = _codes("link", ls["link"], links)

        sq = dict(raw["seq"])
        sq["time_s"] = _seconds(sq["time_ns"])
        sq["event"] = _codes("event", sq["event"], [str(e) for e in raw["seq_events"]])

        import pandas as pd

        fl = dict(raw["flows"])
        kinds = [str(k) for k in fl["kind"]]
        fl["kind"] = pd.Categorical(kinds, categories=sorted(set(kinds)))

        return cls(
            scenario=scenario,
            timeseries=_frame("timeseries", ts),
            drops=_frame("drops", dr),
            flows=_frame("flows", fl),
            cwnd=_frame("cwnd", cw),
            congestion=_frame("congestion", cg),
            summary={str(k): float(v) for k, v in raw["summary"].items()},
            packets={str(k): int(v) for k, v in raw["packets"].items()},
            links=links,
            drop_reasons=reasons,
            wall_time_s=wall,
            bottleneck=str(raw["bottleneck"]),
            captures={str(name): bytes(data) for name, _n, data in raw.get("captures", [])},
            seq=_frame("seq", sq),
            traffic=_frame("traffic", tr),
            delay_hist=_frame("delay_hist", dh),
            link_state=_frame("link_state", ls),
        )

    # ----- looking -----------------------------------------------------------

    @property
    def seed(self) -> int:
        return self.scenario.seed

    @property
    def duration(self) -> float:
        """Simulated seconds covered by the data."""
        return float(self._summary.get("duration_s", self.scenario.duration))

    @property
    def bottleneck(self) -> str:
        """Name of the link the summary describes (the topology's bottleneck:
        `bottleneck` of a dumbbell, `transmit` of the IP-over-satellite
        gateway); ``link()``, ``plot()`` and the CLI default to it."""
        return self._bottleneck

    def summary(self) -> dict[str, float]:
        """Run-level figures for the bottleneck over the measurement window
        (after warm-up): ``utilization_mean``, ``goodput_total_bps``,
        ``jain_index``, ``queue_mean_packets``, ``drops_total``, …
        (a copy; change it freely)."""
        return dict(self._summary)

    def link(self, name: str | None = None) -> pd.DataFrame:
        """The time series of one link (default: the bottleneck), indexed by
        ``time_s``."""
        name = self.bottleneck if name is None else name
        if name not in self.links:
            raise KeyError(f"no link named {name!r} (links: {', '.join(self.links)})")
        ts = self.timeseries
        out = ts[ts["link"] == name].drop(columns="link").set_index("time_s")
        if out.empty and not ts.empty:
            raise KeyError(f"link {name!r} is not monitored")
        # No samples at all (a run shorter than one sample interval): empty.
        return out

    def delay_cdf(self, link: str | None = None, packets: str = "all") -> pd.DataFrame:
        """The distribution of the queueing delays at ``link`` (default: the
        bottleneck) after the warm-up, from ``delay_hist``: one row per
        non-empty bucket, shortest first, with ``delay_lo_ns`` and
        ``delay_hi_ns`` (the bucket's delays, both ends included),
        ``packets``, and ``fraction``, the share of the packets whose delay
        is at most ``delay_hi_ns``. ``packets``: ``"all"``, ``"l4s"`` (those
        carrying ECT(1), RFC 9331: DualPI2's L queue) or ``"classic"`` (the
        others). Empty if no such packet left the buffer after the warm-up.
        Raises ``KeyError`` for a link that does not exist or is not
        monitored, ``ValueError`` for another ``packets``.
        :meth:`delay_quantile` reads percentiles from it."""
        import numpy as np
        import pandas as pd

        if packets not in ("all", "l4s", "classic"):
            raise ValueError(f"packets: {packets!r} is not 'all', 'l4s' or 'classic'")
        name = self.bottleneck if link is None else link
        self.link(name)  # the same errors for an unknown or unmonitored link
        dh = self.delay_hist[self.delay_hist["link"] == name]
        if packets == "classic":
            # Every packet's buckets less the L4S packets' (the same layout).
            every = dh[dh["packets_of"] == "all"].set_index("delay_lo_ns")
            l4s = dh[dh["packets_of"] == "l4s"].set_index("delay_lo_ns")["packets"]
            left = every["packets"] - l4s.reindex(every.index, fill_value=0)
            h = every.assign(packets=left)[left > 0].reset_index().sort_values("delay_lo_ns")
        else:
            h = dh[dh["packets_of"] == packets].sort_values("delay_lo_ns")
        packets = h["packets"].to_numpy(dtype=np.int64)
        total = int(packets.sum())
        cum = np.cumsum(packets)
        return pd.DataFrame(
            {
                "delay_lo_ns": h["delay_lo_ns"].to_numpy(dtype=np.int64),
                "delay_hi_ns": h["delay_hi_ns"].to_numpy(dtype=np.int64),
                "packets": packets,
                "fraction": cum / total if total else cum.astype(np.float64),
            }
        )

    def delay_quantile(self, q: float, link: str | None = None, packets: str = "all") -> float:
        """The ``q``-quantile (``0 < q <= 1``) of the queueing delays at
        ``link`` (default: the bottleneck) after the warm-up, of ``packets``
        as :meth:`delay_cdf` takes it, in ms, read
        from ``delay_hist`` as the core reads its histogram: by nearest rank,
        the midpoint of the bucket holding the ``ceil(q * n)``-th shortest of
        the ``n`` delays, within 0.4 % of the exact value; NaN if there are
        none. The bottleneck's ``queue_delay_p50_ms``, ``_p95_ms`` and
        ``_p99_ms`` are these, except that the summary's are never above the
        exact maximum (``queue_delay_max_ms``)."""
        import numpy as np

        cdf = self.delay_cdf(link, packets)
        packets = cdf["packets"].to_numpy(dtype=np.int64)
        n = int(packets.sum())
        if n == 0:
            return math.nan
        rank = min(max(math.ceil(q * n), 1), n)
        i = int(np.searchsorted(np.cumsum(packets), rank))
        lo, hi = int(cdf["delay_lo_ns"].iloc[i]), int(cdf["delay_hi_ns"].iloc[i])
        # The core's arithmetic, so that the figures are the same floats.
        return (float(lo) + float(hi)) / 2.0 / 1e6

    def plot(self, link: str | None = None) -> Figure:
        """Utilization, queue length (packets) and queueing delay (ms) of
        ``link`` (default: the bottleneck) against time, as a matplotlib
        Figure (no pyplot state involved)."""
        from satqm.plots import plot_link

        return plot_link(self, link)

    def plot_delay(self, link: str | None = None) -> Figure:
        """The queueing delay at ``link`` (default: the bottleneck): the
        distribution of every packet's delay after the warm-up, and the mean
        delay of each sample interval against time. See
        :func:`satqm.plots.plot_delay`."""
        from satqm.plots import plot_delay

        return plot_delay(self, link)

    def plot_seq(
        self,
        flow: int,
        start: float | None = None,
        end: float | None = None,
        way: int | None = None,
    ) -> Figure:
        """The time-sequence graph of connection ``flow`` (which
        ``simulation.trace_seq`` must name, or ``emulation.trace_seq`` for a
        real connection; ``way`` picks a real connection's direction, by
        default the one that sent more): segments sent and resent, the
        ACK and receive-window lines, SACKed ranges and drops, and below it
        the congestion window if ``simulation.trace_cwnd`` names the flow
        too; ``start`` and ``end`` (seconds) zoom on part of the run. See
        :func:`satqm.plots.plot_seq`."""
        from satqm.plots import plot_seq

        return plot_seq(self, flow, start, end, way)

    def traffic_throughput(self) -> pd.DataFrame:
        """Each traffic entry's throughput over time, from the ``traffic``
        table (``simulation.trace_traffic``): one row per entry per sample,
        ``time_s`` (the end of the interval), ``traffic`` (the entry's index)
        and ``throughput_bps``, the payload bits delivered to the entry's
        receivers in the interval ending at ``time_s``, per second.

        Raises ``ValueError`` if the run did not record the table.
        """
        import numpy as np
        import pandas as pd

        if not len(self.traffic):
            raise ValueError("this run has no traffic table: set simulation.trace_traffic = true")
        parts = []
        for entry, g in self.traffic.groupby("traffic", sort=True):
            t = g["time_s"].to_numpy()
            b = g["delivered_bytes"].to_numpy().astype(np.float64)
            dt = np.diff(t, prepend=0.0)
            rate = np.diff(b, prepend=0.0) * 8.0 / dt
            parts.append(pd.DataFrame({"time_s": t, "traffic": entry, "throughput_bps": rate}))
        out = pd.concat(parts, ignore_index=True)
        out["traffic"] = out["traffic"].astype("int64")
        return out.sort_values(["time_s", "traffic"], kind="stable", ignore_index=True)

    def plot_links(self, link: str | None = None) -> Figure:
        """The schedule of a link that changes over time (default: the
        bottleneck): its rate and the throughput it carried, its delay, and
        its outages. See :func:`satqm.plots.plot_link_state`."""
        from satqm.plots import plot_link_state

        return plot_link_state(self, link)

    def plot_cwnd(self) -> Figure:
        """Congestion window and slow-start threshold over time of the
        flows ``simulation.trace_cwnd`` names."""
        from satqm.plots import plot_cwnd

        return plot_cwnd(self)

    def _repr_html_(self) -> str:
        """A notebook's view: the summary table and the bottleneck's plot."""
        import base64
        import html
        import io

        s = self._summary
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{_fmt(v)}</td></tr>"
            for k, v in s.items()
        )
        head = html.escape(repr(self))
        img = ""
        if len(self.timeseries):
            buf = io.BytesIO()
            self.plot().savefig(buf, format="png", dpi=80, metadata={"Software": None})
            data = base64.b64encode(buf.getvalue()).decode("ascii")
            alt = f"plot of {html.escape(self.bottleneck)}"
            img = f"<img src='data:image/png;base64,{data}' alt='{alt}'/>"
        return (
            f"<div><p><code>{head}</code></p><div style='display:flex;gap:1em;"
            f"align-items:flex-start'><table>{rows}</table>{img}</div></div>"
        )

    @property
    def measured(self) -> bool:
        """Whether the measurement window has begun (the run went past its
        warm-up); before, the summary's rates are NaN."""
        return self._summary.get("measured_s", self.duration - self.scenario.warmup) > 0

    def __repr__(self) -> str:
        s = self._summary
        head = (
            f"<Results {self.scenario.name!r} seed={self.seed} "
            f"duration={self.duration:.6g} s flows={len(self.flows)} "
        )
        if not self.measured:
            return head + f"no measurement yet (warm-up {self.scenario.warmup:g} s)>"
        return head + (
            f"utilization={s.get('utilization_mean', float('nan')):.3f} "
            f"drops={int(s.get('drops_total', 0))}>"
        )

    # ----- files -------------------------------------------------------------

    def _summary_document(self) -> dict[str, Any]:
        sc = self.scenario
        ov: dict[str, Any] = {}
        if "seed" in sc.overrides:
            ov["seed"] = sc.overrides["seed"]
        if "duration" in sc.overrides:
            ov["duration_s"] = sc.overrides["duration"]
        if "warmup" in sc.overrides:
            ov["warmup_s"] = sc.overrides["warmup"]
        if "max_memory" in sc.overrides:
            ov["max_memory"] = sc.overrides["max_memory"]
        if "capture" in sc.overrides:
            ov["capture"] = list(sc.overrides["capture"])
        if "capture_side" in sc.overrides:
            ov["capture_side"] = sc.overrides["capture_side"]
        return _json_value(
            {
                "satqm_version": _VERSION,
                "scenario": sc.name,
                "seed": self.seed,
                "duration_s": self.duration,
                "overrides": ov,
                "links": self.links,
                "bottleneck": self.bottleneck,
                "drop_reasons": self.drop_reasons,
                "packets": self.packets,
                "summary": self._summary,
            }
        )

    def save(self, directory: str | os.PathLike[str], *, plot: bool = True) -> Path:
        """Write the run's folder (see the module doc) and return its path.

        The folder is created if needed; files already in it are replaced,
        each one atomically (written under a temporary name, then renamed).
        With ``plot=False`` no ``plot.png`` is drawn (and a stale one from an
        earlier run in the same folder is removed). If a write fails (a full
        disk), the files this call wrote are removed again, and the folder if
        this call made it, before the error is raised.
        """
        out = Path(directory)
        created = not out.exists()
        out.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        try:
            self._write_folder(out, plot, written)
        except BaseException:
            # A full disk or a failed write: leave no partial run behind.
            for f in written:
                f.unlink(missing_ok=True)
            if created:
                with contextlib.suppress(OSError):
                    out.rmdir()
            raise
        return out

    def _write_folder(self, out: Path, plot: bool, written: list[Path]) -> None:
        """The files of :meth:`save`, each recorded in ``written`` before it is
        written."""

        def text(name: str, content: str) -> None:
            written.append(out / name)
            _write_text(out / name, content)

        sc = self.scenario
        text("scenario.toml", _scenario_header(sc, self.seed, sc.duration) + sc.text)
        for name in _TABLES:
            written.append(out / f"{name}.parquet")
            _write_parquet(out / f"{name}.parquet", getattr(self, name))
        doc = json.dumps(self._summary_document(), indent=2, allow_nan=False)
        text("summary.json", doc + "\n")
        run_doc = {
            "satqm_version": _VERSION,
            "wall_time_s": self.wall_time_s,
            "events": self._summary.get("events"),
            "written_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "python": platform.python_version(),
            "platform": platform.platform(),
        }
        text("run.json", json.dumps(_json_value(run_doc), indent=2) + "\n")
        if len(self.seq):
            written.append(out / "seq.parquet")
            _write_parquet(out / "seq.parquet", self.seq)
        else:
            (out / "seq.parquet").unlink(missing_ok=True)
        if len(self.traffic):
            written.append(out / "traffic.parquet")
            _write_parquet(out / "traffic.parquet", self.traffic)
        else:
            (out / "traffic.parquet").unlink(missing_ok=True)
        if len(self.link_state):
            written.append(out / "link_state.parquet")
            _write_parquet(out / "link_state.parquet", self.link_state)
        else:
            (out / "link_state.parquet").unlink(missing_ok=True)
        if sc.files:
            # The files the scenario names (its traces), so that the folder
            # runs again on its own.
            text("scenario_files.json", json.dumps(sc.files, indent=1, sort_keys=True) + "\n")
        else:
            (out / "scenario_files.json").unlink(missing_ok=True)
        for name in _EMULATION_TABLES:
            if len(getattr(self, name)):
                written.append(out / f"{name}.parquet")
                _write_parquet(out / f"{name}.parquet", getattr(self, name))
            else:
                (out / f"{name}.parquet").unlink(missing_ok=True)
        if self.captures:
            (out / "capture").mkdir(exist_ok=True)
        for name, data in self.captures.items():
            path = out / "capture" / f"{name}.pcapng"
            written.append(path)
            _atomic_write(path, lambda p, data=data: p.write_bytes(data))
        if plot:
            from satqm.plots import save_figure

            fig = self.plot()
            written.append(out / "plot.png")
            _atomic_write(out / "plot.png", lambda p: save_figure(fig, p))
        else:
            (out / "plot.png").unlink(missing_ok=True)

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Results:
        """Read a folder written by :meth:`save`."""
        import pandas as pd

        from satqm.scenario import Scenario

        d = Path(directory)
        doc = json.loads((d / "summary.json").read_text(encoding="utf-8"))
        ov = doc.get("overrides", {})
        text = _strip_header((d / "scenario.toml").read_text(encoding="utf-8"))
        named = d / "scenario_files.json"
        files = json.loads(named.read_text(encoding="utf-8")) if named.exists() else None
        scenario = Scenario(
            text,
            seed=ov.get("seed"),
            duration=ov.get("duration_s"),
            path=d / "scenario.toml",
            capture=ov.get("capture"),
            warmup=ov.get("warmup_s"),
            max_memory=ov.get("max_memory"),
            capture_side=ov.get("capture_side"),
            files=files,
        )
        links = list(doc["links"])
        reasons = list(doc["drop_reasons"])
        frames = {}
        for name in _TABLES:
            if name in ("congestion", "delay_hist") and not (d / f"{name}.parquet").exists():
                continue  # written by satqm before the table existed
            df = pd.read_parquet(d / f"{name}.parquet")
            schema = _SCHEMAS[name]
            if name == "delay_hist" and "packets_of" not in df:
                df["packets_of"] = "all"  # written before L4S packets were told apart
            if name == "timeseries" and "queue_delay_ms" not in df:
                df["queue_delay_ms"] = math.nan  # written before it was measured
            if name == "cwnd" and "cc_state" not in df:
                # Written before the controllers' state was traced.
                for k in ("pacing_rate_bps", "pacing_gain", "cwnd_gain"):
                    df[k] = math.nan
                df["bw_estimate_bps"] = math.nan
                df["min_rtt_s"] = math.nan
                df["cc_state"] = "none"
            probes = _probe_columns(name, df.columns)
            df = df[[*schema, *probes]]
            for k, dtype in schema.items():
                if dtype != "category":
                    df[k] = df[k].astype(dtype)
            for k in probes:
                df[k] = df[k].astype(_F)
            frames[name] = df
        # Reapply the full category lists (Parquet keeps only those present).
        for name in ("timeseries", "drops", "delay_hist"):
            if name not in frames:
                continue
            f = frames[name]
            f["link"] = pd.Categorical(f["link"].astype(object), categories=links)
        if "delay_hist" in frames:
            f = frames["delay_hist"]
            f["packets_of"] = pd.Categorical(
                f["packets_of"].astype(object), categories=DELAY_CLASSES
            )
        frames["drops"]["reason"] = pd.Categorical(
            frames["drops"]["reason"].astype(object), categories=reasons
        )
        if (d / "seq.parquet").exists():
            sq = pd.read_parquet(d / "seq.parquet")
            if "way" not in sq:  # saved before real connections were traced
                sq["way"] = 0
            sq = sq[list(_SCHEMAS["seq"])]
            for k, dtype in _SCHEMAS["seq"].items():
                if dtype != "category":
                    sq[k] = sq[k].astype(dtype)
            sq["event"] = pd.Categorical(sq["event"].astype(object), categories=SEQ_EVENTS)
            frames["seq"] = sq
        if (d / "traffic.parquet").exists():
            tr = pd.read_parquet(d / "traffic.parquet")[list(_SCHEMAS["traffic"])]
            frames["traffic"] = tr.astype(_SCHEMAS["traffic"])
        if (d / "link_state.parquet").exists():
            ls = pd.read_parquet(d / "link_state.parquet")[list(_SCHEMAS["link_state"])]
            for k, dtype in _SCHEMAS["link_state"].items():
                if dtype != "category":
                    ls[k] = ls[k].astype(dtype)
            ls["link"] = pd.Categorical(ls["link"].astype(object), categories=links)
            frames["link_state"] = ls
        for name in _EMULATION_TABLES:
            if (d / f"{name}.parquet").exists():
                t = pd.read_parquet(d / f"{name}.parquet")[list(_SCHEMAS[name])]
                frames[name] = t.astype(_SCHEMAS[name])
        frames["cwnd"]["cc_state"] = pd.Categorical(
            frames["cwnd"]["cc_state"].astype(object), categories=CC_STATES
        )
        if "congestion" in frames:
            frames["congestion"]["kind"] = pd.Categorical(
                frames["congestion"]["kind"].astype(object), categories=CUT_KINDS
            )
        kinds = frames["flows"]["kind"].astype(object)
        frames["flows"]["kind"] = pd.Categorical(kinds, categories=sorted(set(kinds)))
        summary = {k: (math.nan if v is None else float(v)) for k, v in doc["summary"].items()}
        wall = None
        run_json = d / "run.json"
        if run_json.exists():
            wall = json.loads(run_json.read_text(encoding="utf-8")).get("wall_time_s")
        return cls(
            scenario=scenario,
            summary=summary,
            packets={k: int(v) for k, v in doc["packets"].items()},
            links=links,
            drop_reasons=reasons,
            wall_time_s=wall,
            bottleneck=doc.get("bottleneck"),
            captures={p.stem: p.read_bytes() for p in sorted((d / "capture").glob("*.pcapng"))},
            **frames,
        )
