"""Type stubs for the compiled module ``satqm._core`` (crates/satqm-py/src/lib.rs).

Private: use the wrappers in :mod:`satqm`. Keep in step with lib.rs. The
``_*`` TypedDicts exist only for type checkers.
"""

from typing import Literal, TypedDict, final

import numpy as np
import numpy.typing as npt

__version__: str

class ConfigError(ValueError):
    """A scenario that cannot be run as written; `path` names the key, `rule` the rule broken.

    ``str(e)`` is ``"path: rule"``; TOML syntax errors have ``path == ""``.
    """

    path: str
    rule: str

class SimulationError(RuntimeError):
    """A run that failed after it started."""

class _ScenarioInfo(TypedDict):
    name: str
    seed: int
    duration: float
    warmup: float
    sample_interval: float
    flows: int

def validate(
    text: str,
    seed: int | None = None,
    duration: float | None = None,
    max_memory: str | None = None,
    capture: list[str] | None = None,
    warmup: float | None = None,
    capture_side: str | None = None,
    files: dict[str, str] | None = None,
) -> _ScenarioInfo:
    """Validate a scenario; returns a few facts about it."""

def scenario_files(text: str) -> list[str]:
    """The files a scenario text names (its link schedules' traces), as it names
    them: the caller reads them and passes their text as ``files``."""

class _MemoryEstimate(TypedDict):
    total: float
    base: float
    parts: list[tuple[str, float, float, str, float]]

def estimate_memory(
    text: str,
    seed: int | None = None,
    duration: float | None = None,
    capture: list[str] | None = None,
    warmup: float | None = None,
    capture_side: str | None = None,
    host: Literal["python", "rust"] = "python",
    files: dict[str, str] | None = None,
) -> _MemoryEstimate:
    """The up-front memory estimate of a scenario (bytes), whatever its limit, run
    from Python or from a Rust program: ``total``, ``base`` (what the process holds
    before the run) and each part as ``(name, bytes, count, what, each)``."""

def parse_quantity(
    value: str | float, dim: Literal["time", "rate", "bytes"], path: str = "value"
) -> float:
    """A scenario quantity ("290 ms", "10 Mbps", "64 KiB"; a number only if it
    is 0) in base units: seconds, bit/s or bytes; ConfigError naming ``path``
    if it cannot be read or has no unit."""

class _TimeSeriesColumns(TypedDict):
    # After these, one float64 column per AQM internal the run's links
    # report (``aqm_avg``, ``aqm_prob``, …), named by the algorithm.
    time_ns: npt.NDArray[np.uint64]
    link: npt.NDArray[np.uint32]
    utilization: npt.NDArray[np.float64]
    throughput_bps: npt.NDArray[np.float64]
    queue_packets: npt.NDArray[np.uint32]
    queue_bytes: npt.NDArray[np.uint64]
    queue_delay_ms: npt.NDArray[np.float64]
    drops: npt.NDArray[np.uint64]
    arrivals: npt.NDArray[np.uint64]
    marks: npt.NDArray[np.uint64]

class _DelayHistColumns(TypedDict):
    link: npt.NDArray[np.uint32]
    packets_of: npt.NDArray[np.uint8]
    delay_lo_ns: npt.NDArray[np.uint64]
    delay_hi_ns: npt.NDArray[np.uint64]
    packets: npt.NDArray[np.uint64]

class _DropColumns(TypedDict):
    time_ns: npt.NDArray[np.uint64]
    link: npt.NDArray[np.uint32]
    flow: npt.NDArray[np.uint32]
    index: npt.NDArray[np.uint64]
    reason: npt.NDArray[np.uint8]
    data: npt.NDArray[np.bool_]
    size: npt.NDArray[np.uint32]

class _CwndColumns(TypedDict):
    time_ns: npt.NDArray[np.uint64]
    flow: npt.NDArray[np.uint32]
    cwnd_bytes: npt.NDArray[np.float64]
    ssthresh_bytes: npt.NDArray[np.float64]
    delivered_bytes: npt.NDArray[np.uint64]
    pacing_rate_bps: npt.NDArray[np.float64]
    cc_state: npt.NDArray[np.uint8]
    pacing_gain: npt.NDArray[np.float64]
    cwnd_gain: npt.NDArray[np.float64]
    bw_estimate_bps: npt.NDArray[np.float64]
    min_rtt_s: npt.NDArray[np.float64]

class _TrafficColumns(TypedDict):
    time_ns: npt.NDArray[np.uint64]
    traffic: npt.NDArray[np.uint32]
    delivered_bytes: npt.NDArray[np.uint64]

class _CongestionColumns(TypedDict):
    time_ns: npt.NDArray[np.uint64]
    flow: npt.NDArray[np.uint32]
    origin: npt.NDArray[np.uint32]
    kind: npt.NDArray[np.uint8]
    cwnd_before: npt.NDArray[np.float64]
    cwnd_after: npt.NDArray[np.float64]
    ssthresh: npt.NDArray[np.float64]
    srtt_s: npt.NDArray[np.float64]

class _FlowColumns(TypedDict):
    flow: npt.NDArray[np.uint32]
    pair: npt.NDArray[np.uint32]
    start_s: npt.NDArray[np.float64]
    completion_s: npt.NDArray[np.float64]
    bytes_delivered: npt.NDArray[np.uint64]
    goodput_bps: npt.NDArray[np.float64]
    segments_sent: npt.NDArray[np.uint64]
    retransmits: npt.NDArray[np.uint64]
    fast_retransmits: npt.NDArray[np.uint64]
    timeouts: npt.NDArray[np.uint64]
    loss_probes: npt.NDArray[np.uint64]
    undos: npt.NDArray[np.uint64]
    ecn_reductions: npt.NDArray[np.uint64]
    rtt_samples: npt.NDArray[np.uint64]
    rtt_min_s: npt.NDArray[np.float64]
    rtt_mean_s: npt.NDArray[np.float64]
    rtt_max_s: npt.NDArray[np.float64]
    cwnd_bytes: npt.NDArray[np.float64]
    kind: list[str]

class _SeqColumns(TypedDict):
    time_ns: npt.NDArray[np.uint64]
    flow: npt.NDArray[np.uint32]
    event: npt.NDArray[np.uint8]
    way: npt.NDArray[np.uint8]
    seq: npt.NDArray[np.uint64]
    end: npt.NDArray[np.uint64]

class _LinkStateColumns(TypedDict):
    time_ns: npt.NDArray[np.uint64]
    link: npt.NDArray[np.uint32]
    rate_bps: npt.NDArray[np.uint64]
    delay_ns: npt.NDArray[np.uint64]
    loss: npt.NDArray[np.float64]
    up: npt.NDArray[np.bool_]

class _PacketCounts(TypedDict):
    created: int
    delivered: int
    dropped: int
    in_flight: int

class _RawResults(TypedDict):
    links: list[str]
    bottleneck: str
    drop_reasons: list[str]
    timeseries: _TimeSeriesColumns
    delay_hist: _DelayHistColumns
    drops: _DropColumns
    cwnd: _CwndColumns
    congestion: _CongestionColumns
    traffic: _TrafficColumns
    flows: _FlowColumns
    seq: _SeqColumns
    seq_events: list[str]
    link_state: _LinkStateColumns
    summary: dict[str, float]
    packets: _PacketCounts
    # Each capture file: its name (LINK for a link direction's departures,
    # LINK.in for its arrivals), packets written, pcapng bytes.
    captures: list[tuple[str, int, bytes]]

@final
class Simulation:
    """One run of a scenario, advanced step by step or to the end."""

    def __new__(
        cls,
        text: str,
        seed: int | None = None,
        duration: float | None = None,
        max_memory: str | None = None,
        capture: list[str] | None = None,
        warmup: float | None = None,
        capture_side: str | None = None,
        files: dict[str, str] | None = None,
    ) -> Simulation: ...
    @property
    def now(self) -> float:
        """Current simulated time in seconds."""
    @property
    def end(self) -> float:
        """End of the run in seconds."""
    @property
    def finished(self) -> bool: ...
    @property
    def events(self) -> int: ...
    def run_until(self, t: float) -> float:
        """Advance to simulated time `t` seconds (at most the end). Releases
        the GIL while simulating and raises KeyboardInterrupt on Ctrl-C."""
    def run(self) -> float:
        """Run to the end."""
    def results(self) -> _RawResults:
        """All recorded data as dicts of numpy arrays, plus the summary."""

class _Lateness(TypedDict):
    count: int
    p50_ns: int
    p99_ns: int
    max_ns: int

class _EmulationReport(TypedDict):
    connections: list[tuple[int, int, str, int, str, int]]
    rejected: dict[str, int]
    injected: int
    written: int
    write_errors: int
    wall_s: float
    realtime: bool
    lateness: _Lateness
    entered: list[list[int]]
    left: list[list[int]]

class Emulation:
    """A scenario run in real time with real hosts."""

    def __new__(
        cls,
        text: str,
        seed: int | None = None,
        duration: float | None = None,
        max_memory: str | None = None,
        capture: list[str] | None = None,
        warmup: float | None = None,
        capture_side: str | None = None,
        files: dict[str, str] | None = None,
    ) -> Emulation: ...
    @property
    def hosts(self) -> list[tuple[str, str]]:
        """(node name, IPv4 address) of each real host, in [emulation] order."""
    @property
    def prefix(self) -> int: ...
    @property
    def running(self) -> bool: ...
    def start(self, netns: list[str], device: str = "satqm0", mtu: int = 1500) -> None:
        """Open a TUN device in each real host's namespace and start the run."""
    def stop(self) -> tuple[Simulation, _EmulationReport]:
        """Stop the run; the simulation (for its results) and the report."""

class _ReplayOut(TypedDict):
    verdict: list[str]
    avg: list[float]
    prob: list[float]
    vq_bytes: list[float]
    vcap_bps: list[float]
    price: list[float]
    max_p: list[float]
    qdelay: list[float]
    count: list[float]

def aqm_replay(
    spec: str, trace: list[dict[str, object]], rate_bps: int, limit_bytes: int
) -> _ReplayOut:
    """Replay a trace of arrivals, departures and timer ticks through one AQM.

    ``spec`` is the TOML of an ``[[aqm]]`` table without placement keys; see
    docs/aqm.md for the trace format. Verdicts are ``"pass"``, ``"mark:early"``,
    ``"mark:forced"``, ``"drop:early"``, ``"drop:forced"``, or ``"timer"``.
    """

def qdisc_replay(
    spec: str, limit_packets: int, ops: list[dict[str, object]]
) -> list[dict[str, object]]:
    """Replay enqueue, dequeue and update operations through a queue
    discipline (``kind = "fq_codel"`` or ``"dualpi2"``).

    ``spec`` is the TOML of an ``[[aqm]]`` table without placement keys;
    ``ops`` are ``{"op": "enqueue", "t", "bucket", "size", "ecn"}``,
    ``{"op": "dequeue", "t"}`` and ``{"op": "update", "t"}`` (times in ns;
    ``ecn`` one of ``"not-ect"``, ``"ect0"``, ``"ect1"``, ``"ce"``). Each
    step gives ``dropped`` (packet numbers), ``sent`` and ``mark``, and
    after an update DualPI2's ``p`` (units of 2^-32); see tests/oracles/.
    """

class _FluidOut(TypedDict):
    t: npt.NDArray[np.float64]
    W: npt.NDArray[np.float64]
    q: npt.NDArray[np.float64]
    p: npt.NDArray[np.float64]
    p_eff: npt.NDArray[np.float64]
    aux: npt.NDArray[np.float64]

def fluid_simulate(
    aqm: str,
    params: dict[str, float | npt.ArrayLike],
    duration: float,
    dt: float = 1e-3,
    record_every: int = 1,
    max_queue_delay: float = 10.0,
    gentle: bool = False,
    delay_interp: str = "nearest",
) -> _FluidOut:
    """Integrate the Misra-Gong-Towsley fluid model for a batch of parameter sets.

    ``aqm`` is ``"red"``, ``"pi"``, ``"avq"``, ``"fixed"`` or ``"droptail"``;
    ``params`` maps the keyword names of
    :func:`satqm.models.fluid.simulate_fluid` (``N``, ``C``, ``Tp``, ``W0``,
    ``q0``, ``buffer``, ``w_min``, ``w_max`` and the closure's own, e.g.
    ``min_th``, ``kp`` or ``a, b, fs``, ``gamma``, ``p_fixed``) to a number
    or a 1-D array (one value per parameter set, or one for all). ``t`` has
    one entry per record (every ``record_every`` steps, the initial state
    first); the other arrays have shape ``(len(t), sets)``. Bad input raises
    :class:`ConfigError` whose ``path`` names the key (``"w_q[2]"`` for set
    2 of a batch). Releases the GIL; Ctrl-C raises KeyboardInterrupt.
    """
