"""Real packets through a scenario's network, in real time.

:class:`Emulation` runs a scenario with the wall clock and gives each of its
real hosts (``[emulation]``) a network namespace of its own, whose traffic
crosses the scenario's links, ports and AQMs to the others::

    import satqm
    with satqm.Emulation("scenarios/examples/emulation-geo.toml") as emu:
        server = emu.popen("receiver[0]", ["iperf3", "-s", "-1"])
        emu.run("sender[0]", ["iperf3", "-c", emu.address("receiver[0]"), "-t", "20"])
    res = emu.results      # the same Results as satqm.run's, with the real flows

Each real host's namespace holds one TUN device, ``satqm0``, with the host's
address in the ``[emulation]`` subnet; every packet a process in it sends to
another real host's address enters the simulated network at that host. An
emulation needs root (CAP_NET_ADMIN) and ``/dev/net/tun``. It creates only
its own namespaces (``satqm-PID-I``) and removes them when it stops, however
it stops; namespaces a killed emulation left behind are removed by the next
one.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from typing import Any

from satqm._core import Emulation as CoreEmulation
from satqm.results import Results, _frame
from satqm.scenario import ScenarioLike, as_scenario

__all__ = [
    "Emulation",
    "EmulationLate",
    "EmulationUnavailable",
    "cleanup_leftovers",
    "missing_requirement",
]

#: A run whose 99th percentile lateness is above this warns (ms).
LATE_P99_MS = 1.0

NETNS_DIR = "/run/netns"
PREFIX = "satqm-"
DEVICE = "satqm0"


class EmulationLate(UserWarning):
    """The host could not keep up: packets reached their hosts late."""


class EmulationUnavailable(RuntimeError):
    """This machine or user cannot run an emulation (the message says why)."""


def missing_requirement() -> str | None:
    """What this machine lacks for an emulation, or ``None``."""
    if not os.path.exists("/dev/net/tun"):
        return "emulation needs /dev/net/tun (the tun kernel module)"
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        return "emulation needs root (CAP_NET_ADMIN) to create network namespaces"
    try:
        import pyroute2  # noqa: F401
    except ImportError:  # pragma: no cover - a declared dependency
        return "emulation needs the pyroute2 package"
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def cleanup_leftovers() -> list[str]:
    """Remove namespaces that an emulation killed without its clean-up
    (SIGKILL) left behind: ``satqm-PID-I`` whose process PID is gone.
    Returns their names."""
    from pyroute2 import netns

    removed = []
    for name in netns.listnetns():
        if not name.startswith(PREFIX):
            continue
        pid = name[len(PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)) and int(pid) != os.getpid():
            with contextlib.suppress(OSError):
                _kill_in(name)
                netns.remove(name)
                removed.append(name)
    return removed


def _kill_in(name: str) -> None:
    """Kill every process still inside namespace ``name``."""
    path = os.path.realpath(os.path.join(NETNS_DIR, name))
    try:
        target = os.stat(path).st_ino
    except OSError:
        return
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}/ns/net").st_ino == target and int(pid) != os.getpid():
                os.kill(int(pid), signal.SIGKILL)
        except OSError:
            continue


class Emulation:
    """A scenario run in real time, its real hosts in network namespaces.

    Use it as a context manager: entering creates the namespaces and starts
    the run; leaving stops it (if it has not reached the scenario's
    duration), stops the processes started in the namespaces, removes the
    namespaces and makes :attr:`results`.

    Parameters are those of :class:`satqm.Simulation`.
    """

    def __init__(
        self,
        scenario: ScenarioLike,
        seed: int | None = None,
        duration: float | None = None,
        capture: Sequence[str] | None = None,
        warmup: float | None = None,
        capture_side: str | None = None,
    ) -> None:
        sc = as_scenario(scenario).with_overrides(
            seed=seed,
            duration=duration,
            capture=capture,
            warmup=warmup,
            capture_side=capture_side,
        )
        self.scenario = sc
        self._core = CoreEmulation(*sc.core_arguments())
        #: Real hosts by node name: (address, namespace).
        self.hosts: dict[str, tuple[str, str]] = {
            name: (addr, f"{PREFIX}{os.getpid()}-{i}")
            for i, (name, addr) in enumerate(self._core.hosts)
        }
        self._procs: list[subprocess.Popen[Any]] = []
        self._started: float | None = None
        self._made: list[str] = []
        # Only this process removes what it made (a library may fork it).
        self._pid = os.getpid()
        self.results: Results | None = None
        #: What the emulator measured: lateness, packets refused, ...
        self.report: dict[str, Any] = {}

    # ----- the hosts --------------------------------------------------------

    def address(self, host: str) -> str:
        """The IPv4 address of real host ``host``."""
        return self._host(host)[0]

    def netns(self, host: str) -> str:
        """The network namespace of real host ``host`` (for ``ip netns exec``)."""
        return self._host(host)[1]

    def _host(self, host: str) -> tuple[str, str]:
        try:
            return self.hosts[host]
        except KeyError:
            raise KeyError(
                f"{host!r} is not a real host of this emulation (real hosts: "
                f"{', '.join(self.hosts)})"
            ) from None

    def popen(self, host: str, args: Sequence[str] | str, **kw: Any) -> subprocess.Popen[Any]:
        """Start ``args`` (a list, or a string run by ``sh -c``) in real host
        ``host``'s namespace; it is stopped when the emulation stops."""
        ns = self.netns(host)
        if isinstance(args, str):
            args = ["sh", "-c", args]

        def enter() -> None:
            from pyroute2 import netns

            netns.setns(ns)

        p = subprocess.Popen(list(args), preexec_fn=enter, **kw)  # noqa: PLW1509
        self._procs.append(p)
        return p

    def run(
        self, host: str, args: Sequence[str] | str, timeout: float | None = None, **kw: Any
    ) -> subprocess.CompletedProcess[Any]:
        """Run ``args`` in ``host``'s namespace to its end (as
        :func:`subprocess.run`)."""
        if kw.pop("capture_output", False):
            kw["stdout"] = kw["stderr"] = subprocess.PIPE
        p = self.popen(host, args, **kw)
        try:
            out, err = p.communicate(timeout=timeout)
        except BaseException:
            p.kill()
            p.wait()
            raise
        return subprocess.CompletedProcess(p.args, p.returncode, out, err)

    # ----- time --------------------------------------------------------------

    @property
    def now(self) -> float:
        """Seconds since the run started (its simulated time)."""
        return 0.0 if self._started is None else time.monotonic() - self._started

    @property
    def end(self) -> float:
        return float(self.scenario.duration)

    @property
    def running(self) -> bool:
        return bool(self._core.running)

    def wait(self) -> None:
        """Sleep until the run reaches the scenario's duration."""
        while self.running:
            time.sleep(0.05)

    # ----- start and stop ----------------------------------------------------

    def __enter__(self) -> Emulation:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Create the namespaces and start the run."""
        why = missing_requirement()
        if why:
            raise EmulationUnavailable(why)
        from pyroute2 import NetNS, netns

        cleanup_leftovers()
        try:
            for _addr, ns in self.hosts.values():
                with contextlib.suppress(FileNotFoundError):
                    netns.remove(ns)
                netns.create(ns)
                self._made.append(ns)
                with NetNS(ns) as ipr:
                    ipr.link("set", index=ipr.link_lookup(ifname="lo")[0], state="up")
            self._core.start([os.path.join(NETNS_DIR, ns) for _a, ns in self.hosts.values()])
            self._started = time.monotonic()
        except BaseException:
            self._remove_namespaces()
            raise

    def stop(self) -> Results | None:
        """Stop the run, the processes and the namespaces; returns
        :attr:`results` (``None`` if the run never started)."""
        try:
            if self._started is not None and self.results is None:
                sim, report = self._core.stop()
                self.report = report
                self.results = _results(sim, report, self.scenario, self.now)
                _warn_if_late(self.results)
        finally:
            self._stop_processes()
            self._remove_namespaces()
        return self.results

    def _stop_processes(self) -> None:
        for p in self._procs:
            if p.poll() is None:
                p.terminate()
        deadline = time.monotonic() + 2.0
        for p in self._procs:
            if p.poll() is None:
                try:
                    p.wait(max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()

    def _remove_namespaces(self) -> None:
        from pyroute2 import netns

        if os.getpid() != self._pid:
            return
        for ns in self._made:
            _kill_in(ns)
            with contextlib.suppress(OSError):
                netns.remove(ns)
        self._made = []

    def __repr__(self) -> str:
        hosts = ", ".join(f"{h}={a}" for h, (a, _) in self.hosts.items())
        return f"Emulation({self.scenario.name!r}, {hosts})"


def _warn_if_late(res: Results) -> None:
    s = res.summary()
    if s["lateness_p99_ms"] > LATE_P99_MS:
        import warnings

        warnings.warn(
            f"{res.scenario.name}: the host could not keep up: 1 % of the real packets "
            f"reached their host more than {s['lateness_p99_ms']:.3g} ms after the model's "
            f"time (median {s['lateness_p50_ms'] * 1e3:.0f} us, maximum "
            f"{s['lateness_max_ms']:.3g} ms); see real_packets.late_s",
            EmulationLate,
            stacklevel=3,
        )


def _results(core_sim: Any, report: Mapping[str, Any], scenario: Any, wall: float) -> Results:
    """The simulation's results with the emulator's tables and figures."""
    import numpy as np

    raw = core_sim.results()
    res = Results._from_core(raw, scenario, wall)
    conns = list(report["connections"])
    res.connections = _frame(
        "connections",
        {
            "flow": [c[0] for c in conns],
            "protocol": [c[1] for c in conns],
            "src": [c[2] for c in conns],
            "src_port": [c[3] for c in conns],
            "dst": [c[4] for c in conns],
            "dst_port": [c[5] for c in conns],
        },
    )
    t_in, uid_in, flow_in, size_in = (np.asarray(c, dtype=np.uint64) for c in report["entered"])
    t_out, uid_out, _flow_out, late = (np.asarray(c, dtype=np.uint64) for c in report["left"])
    delivered = np.full(len(uid_in), np.nan)
    late_s = np.full(len(uid_in), np.nan)
    pos = np.searchsorted(uid_in, uid_out)  # uids rise in order of entry
    ok = (pos < len(uid_in)) & (uid_in[np.minimum(pos, len(uid_in) - 1)] == uid_out)
    delivered[pos[ok]] = t_out[ok] / 1e9
    late_s[pos[ok]] = late[ok] / 1e9
    res.real_packets = _frame(
        "real_packets",
        {
            "uid": uid_in,
            "flow": flow_in,
            "size": size_in,
            "entered_s": t_in / 1e9,
            "delivered_s": delivered,
            "late_s": late_s,
        },
    )
    lat = report["lateness"]
    s = res._summary
    s["lateness_p50_ms"] = lat["p50_ns"] / 1e6
    s["lateness_p99_ms"] = lat["p99_ns"] / 1e6
    s["lateness_max_ms"] = lat["max_ns"] / 1e6
    s["real_packets_in"] = float(report["injected"])
    s["real_packets_out"] = float(report["written"])
    s["real_packets_refused"] = float(sum(report["rejected"].values()))
    return res
