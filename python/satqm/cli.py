"""The ``satqm`` command.

::

    satqm run SCENARIO --out DIR [--seed N] [--duration S] [--warmup S] [--max-memory SIZE]
                                 [--capture LINK]... [--quiet] [--no-plot]
    satqm check SCENARIO [--seed N] [--duration S] [--warmup S] [--max-memory SIZE]
    satqm plot {seq,cwnd,link,delay} RUN_DIR [--flow N] [--way W] [--from S] [--until S]
                                             [--link NAME] [--out FILE]
    satqm reproduce NAME --out DIR [--quick] [--workers N] | --list
    satqm sweep FILE --out DIR [--workers N | --scheduler ADDR | --scheduler-file F]
    satqm sweep status DIR
    satqm sweep table DIR --metric M [--metric M]... [--by AXIS]... [--csv]
    satqm validate ns3|linux [--quick] [--out DIR] [--scenarios NAME,...] [--list] [--strict]
    satqm shell SCENARIO [--host NAME] [--duration S] [--out DIR] [-- COMMAND...]
    satqm emulate SCENARIO --out DIR --run HOST:COMMAND [--run HOST:COMMAND]... [--duration S]
    satqm --version

Exit status: 0 done, 1 the run failed, 2 bad input (the scenario, a file, the
command line), 130 interrupted. Errors are one line on stderr
(``error: FILE: KEY: RULE``); ``--debug`` adds the traceback.
"""

from __future__ import annotations

import argparse
import math
import sys
import traceback
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from rich.console import Console

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class CliError(Exception):
    """A failure to report as ``error: <message>`` with an exit status."""

    def __init__(self, message: str, status: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.status = status


# ----- argument types --------------------------------------------------------


def _seed(text: str) -> int:
    try:
        v = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return v


def _seconds(text: str) -> float:
    s = text.strip()
    if s.endswith("s") and not s.endswith("ms"):
        s = s[:-1].strip()
    try:
        return float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None


# ----- shared steps ----------------------------------------------------------


def _load(args: argparse.Namespace):  # -> satqm.Scenario
    import satqm

    path = Path(args.scenario)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"{path}: is a directory, not a scenario file") from None
    except UnicodeDecodeError:
        raise CliError(f"{path}: not UTF-8 text") from None
    except OSError as e:
        raise CliError(f"{path}: {e.strerror or e}") from None
    try:
        return satqm.Scenario(
            text,
            seed=args.seed,
            duration=args.duration,
            warmup=args.warmup,
            path=path,
            max_memory=getattr(args, "max_memory", None),
            capture=getattr(args, "capture", None),
            capture_side=getattr(args, "capture_side", None),
        )
    except satqm.ConfigError as e:
        raise CliError(_config_message(path, e, args)) from e


def _config_message(path: Path, e, args: argparse.Namespace) -> str:
    key = getattr(e, "path", "")
    rule = getattr(e, "rule", str(e))
    # Blame the command-line flag for a value that came from it.
    if key == "simulation.seed" and args.seed is not None:
        return f"--seed {args.seed}: {rule}"
    if key == "simulation.duration" and args.duration is not None:
        warmup_s = getattr(e, "warmup_s", None)
        if warmup_s is not None:  # not longer than the file's warm-up
            return (
                f"--duration {args.duration:g}: not longer than the scenario's {warmup_s:g} s "
                f"warm-up (simulation.warmup in {path}); add --warmup S with S < "
                f"{args.duration:g}"
            )
        return f"--duration {args.duration:g}: {rule}"
    if key == "simulation.warmup" and args.warmup is not None:
        if args.duration is not None and args.warmup >= args.duration:
            return f"--warmup {args.warmup:g}: must be less than --duration {args.duration:g}"
        return f"--warmup {args.warmup:g}: {rule}"
    max_memory = getattr(args, "max_memory", None)
    if key == "simulation.max_memory" and max_memory is not None:
        return f"--max-memory {max_memory}: {rule}"
    capture = getattr(args, "capture", None)
    if key.startswith("simulation.capture[") and capture:
        i = int(key[len("simulation.capture[") : -1])
        return f"--capture {capture[i]}: {rule}"
    capture_side = getattr(args, "capture_side", None)
    if key == "simulation.capture_side" and capture_side is not None:
        return f"--capture-side {capture_side}: {rule}"
    if not key:
        return f"{path}: {e}"
    return f"{path}: {key}: {rule}"


def _fmt_figure(v: float, spec: str) -> str:
    """A summary figure formatted by ``spec``, or ``n/a`` where it is
    undefined (NaN: Jain's index when no flow delivered anything, rates
    before the warm-up has ended)."""
    return format(v, spec) if math.isfinite(v) else "n/a"


def _fmt_rate(bps: float) -> str:
    if not math.isfinite(bps):
        return "n/a"
    for unit, f in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if abs(bps) >= f:
            return f"{bps / f:.3f} {unit}"
    return f"{bps:.1f} bit/s"


# ----- commands --------------------------------------------------------------


def cmd_check(args: argparse.Namespace) -> int:
    sc = _load(args)
    print(
        f"OK {sc.name}: {sc.duration:.9g} s, {sc.flows} flow{'s' if sc.flows != 1 else ''}, "
        f"seed {sc.seed} ({args.scenario})"
    )
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    import satqm

    sc = _load(args)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"--out {out}: exists and is not a directory")
    try:  # fail now rather than after a long run
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CliError(f"--out {out}: cannot create: {e.strerror or e}") from None
    try:
        sim = satqm.Simulation(sc)
    except satqm.ConfigError as e:
        raise CliError(_config_message(Path(args.scenario), e, args)) from e
    if _has_emulation(sc.text) and not args.quiet:
        print(
            "satqm: note: [emulation]'s real hosts carry no traffic in a simulation; "
            "`satqm emulate` or `satqm shell` runs them",
            file=sys.stderr,
        )
    progress: bool | Console = False
    if not args.quiet:
        from rich.console import Console

        progress = Console(stderr=True)
        progress.print(
            f"running {sc.name} (seed {sc.seed}, {sc.duration:.9g} s simulated) -> {out}",
            markup=False,
            highlight=False,
        )
    try:
        sim.run(progress=progress)
    except KeyboardInterrupt:
        raise CliError(
            f"interrupted at {sim.now:.6g} s of {sim.end:.6g} s simulated; no results written",
            EXIT_INTERRUPTED,
        ) from None
    except satqm.SimulationError as e:
        raise CliError(
            f"{args.scenario}: simulation failed at {sim.now:.6g} s: {e}", EXIT_FAILED
        ) from e
    res = sim.results()
    try:
        res.save(out, plot=not args.no_plot)
    except OSError as e:
        raise CliError(f"--out {out}: cannot write results: {e.strerror or e}", EXIT_FAILED) from e
    if not args.quiet:
        _print_summary(res, out)
    return EXIT_OK


def _has_emulation(text: str) -> bool:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        return "emulation" in tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False


def _emulation(args: argparse.Namespace) -> Any:
    """The Emulation of ``args.scenario``, or a CliError saying why not."""
    import satqm
    from satqm.emulation import missing_requirement

    why = missing_requirement()
    if why:
        raise CliError(why, EXIT_FAILED)
    sc = _load(args)
    try:
        return satqm.Emulation(sc)
    except satqm.ConfigError as e:
        raise CliError(_config_message(Path(args.scenario), e, args)) from e


#: The stop signal an emulation command received, once it has: the
#: KeyboardInterrupt its handler raises is lost when it lands in a callback
#: that cannot raise (such as the at-fork hooks a new process runs), so the
#: waiting loops also look here.
_STOP_SIGNAL: list[int] = []


def _on_stop_signals() -> None:
    """SIGTERM stops an emulation as Ctrl-C does, through its clean-up; and
    neither is lost while a command is being started."""
    import os
    import signal

    pid = os.getpid()

    def stop(signum: int, frame: object) -> None:
        if os.getpid() != pid:  # a child forked by a library, not satqm
            os._exit(128 + signum)
        _STOP_SIGNAL.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)


def _raise_if_stopped() -> None:
    if _STOP_SIGNAL:
        raise KeyboardInterrupt


def _print_emulation(emu: Any) -> None:
    res = emu.results
    if res is None:
        return
    s = res.summary()
    print(
        f"real packets: {int(s['real_packets_in']):,} in, {int(s['real_packets_out']):,} "
        f"delivered, {int(res.packets['dropped']):,} dropped in the network, "
        f"{int(s['real_packets_refused']):,} refused; lateness median "
        f"{s['lateness_p50_ms'] * 1e3:.0f} us, "
        f"99th percentile {s['lateness_p99_ms'] * 1e3:.0f} us, "
        f"max {s['lateness_max_ms']:.3g} ms",
        file=sys.stderr,
    )


def _save_emulation(emu: Any, out: Path | None, announce: bool = True) -> None:
    if out is None or emu.results is None:
        return
    try:
        emu.results.save(out)
    except OSError as e:
        raise CliError(f"--out {out}: cannot write results: {e.strerror or e}", EXIT_FAILED) from e
    if announce:
        print(f"results in {out}", file=sys.stderr)


def cmd_shell(args: argparse.Namespace) -> int:
    import os
    import subprocess

    emu = _emulation(args)
    host = args.host or next(iter(emu.hosts))
    if host not in emu.hosts:
        raise CliError(f"--host {host}: not a real host (real hosts: {', '.join(emu.hosts)})")
    command = list(args.argv or [os.environ.get("SHELL", "/bin/sh")])
    if command and command[0] == "--":
        command = command[1:]
    out = Path(args.out) if args.out else None
    _on_stop_signals()
    status = EXIT_OK
    with emu:
        for name, (addr, ns) in emu.hosts.items():
            print(f"{name}: {addr} (ip netns exec {ns} ...)", file=sys.stderr)
        print(
            f"running {' '.join(command)} in {host}; the link runs for {emu.end:.6g} s",
            file=sys.stderr,
        )
        env = dict(os.environ, SATQM_HOST=host)
        for name, (addr, _) in emu.hosts.items():
            env[f"SATQM_ADDR_{''.join(c if c.isalnum() else '_' for c in name).upper()}"] = addr
        try:
            p = emu.popen(host, command, env=env)
        except OSError as e:
            raise CliError(f"cannot run {command[0]}: {e.strerror or e}", EXIT_FAILED) from e
        while p.poll() is None and emu.running:
            _raise_if_stopped()
            try:
                p.wait(0.1)
            except subprocess.TimeoutExpired:
                pass
        if p.poll() is None:
            print(
                f"satqm: the run reached its duration ({emu.end:.6g} s); stopping {command[0]}",
                file=sys.stderr,
            )
        else:
            status = p.returncode
    _print_emulation(emu)
    _save_emulation(emu, out)
    return status


def _run_spec(text: str) -> tuple[str, str]:
    host, sep, command = text.partition(":")
    if not sep or not host or not command.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: expected HOST:COMMAND")
    return host, command


def cmd_emulate(args: argparse.Namespace) -> int:
    import time

    emu = _emulation(args)
    out = Path(args.out)
    for host, _ in args.run:
        if host not in emu.hosts:
            raise CliError(f"--run {host}: not a real host (real hosts: {', '.join(emu.hosts)})")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CliError(f"--out {out}: cannot create: {e.strerror or e}") from None
    _on_stop_signals()
    logs = []
    try:
        with emu:
            if not args.quiet:
                print(
                    f"emulating {emu.scenario.name} for {emu.end:.6g} s -> {out}", file=sys.stderr
                )
            for i, (host, command) in enumerate(args.run):
                log = open(out / f"run{i}-{host.replace('[', '').replace(']', '')}.log", "wb")  # noqa: SIM115
                logs.append(log)
                emu.popen(host, command, stdout=log, stderr=log)
                # Let a server bind before the next command connects to it.
                _raise_if_stopped()
                time.sleep(args.stagger)
            while emu.running:
                _raise_if_stopped()
                time.sleep(0.05)
    except KeyboardInterrupt:
        raise CliError(
            f"interrupted at {emu.now:.6g} s of {emu.end:.6g} s; no results written",
            EXIT_INTERRUPTED,
        ) from None
    finally:
        for log in logs:
            log.close()
    _save_emulation(emu, out, announce=False)
    if not args.quiet:
        _print_emulation(emu)
        _print_summary(emu.results, out)
    return EXIT_OK


#: The options of `satqm plot` that apply to some figures only: (dest, flag, figures...).
_PLOT_ONLY = (
    ("flow", "--flow", "seq"),
    ("way", "--way", "seq"),
    ("start", "--from", "seq"),
    ("end", "--until", "seq"),
    ("link", "--link", "link", "delay", "links"),
)


def _zoom_suffix(start: float | None, end: float | None) -> str:
    """What a zoomed figure's default file name adds: ``-60-75s``,
    ``-from-60s``, ``-until-75s``; nothing unzoomed."""
    if start is not None and end is not None:
        return f"-{start:g}-{end:g}s"
    if start is not None:
        return f"-from-{start:g}s"
    if end is not None:
        return f"-until-{end:g}s"
    return ""


def cmd_plot(args: argparse.Namespace) -> int:
    import satqm
    from satqm.plots import save_figure

    for dest, flag, *figures in _PLOT_ONLY:
        if getattr(args, dest) is not None and args.what not in figures:
            which = " and ".join(f"`satqm plot {f}`" for f in figures)
            raise CliError(f"{flag} applies to {which} only, not to {args.what}")
    if args.start is not None and args.end is not None and args.start >= args.end:
        raise CliError(f"--from {args.start:g} --until {args.end:g}: --from must come first")
    run = Path(args.run_dir)
    if not (run / "summary.json").is_file():
        raise CliError(f"{run}: not a results folder (no summary.json); see `satqm run --out`")
    res = satqm.Results.load(run)
    # Default names never clash with each other or with the plot.png that
    # `satqm run` writes: each figure, link and zoom has its own.
    if args.what == "seq":
        if args.flow is None:
            raise CliError("plot seq: give the connection with --flow N")
        try:
            fig = res.plot_seq(args.flow, args.start, args.end, args.way)
        except ValueError as e:
            raise CliError(f"--flow {args.flow}: {e}") from None
        way = "" if args.way is None else f"-way{args.way}"
        default = run / f"seq-flow{args.flow}{way}{_zoom_suffix(args.start, args.end)}.png"
    elif args.what == "cwnd":
        try:
            fig = res.plot_cwnd()
        except ValueError as e:
            raise CliError(f"{run}: {e}") from None
        default = run / "cwnd.png"
    else:
        # The figures of one link: each draws it and names its file by it.
        draw, prefix = {
            "links": (res.plot_links, "links"),
            "delay": (res.plot_delay, "delay"),
            "link": (res.plot, "plot"),
        }[args.what]
        link = res.bottleneck if args.link is None else args.link
        try:
            fig = draw(link)
        except KeyError as e:
            raise CliError(f"--link {link}: {e.args[0]}") from None
        default = run / f"{prefix}-{link}.png"
    out = Path(args.out) if args.out else default
    try:
        save_figure(fig, out)
    except OSError as e:
        raise CliError(f"{out}: cannot write: {e.strerror or e}", EXIT_FAILED) from None
    print(out)
    return EXIT_OK


def cmd_reproduce(args: argparse.Namespace) -> int:
    from satqm import experiments

    if args.list or not args.name:
        for name, (_, desc) in sorted(experiments.REPRODUCTIONS.items()):
            print(f"{name:12} {desc}")
        return EXIT_OK if args.list else EXIT_BAD_INPUT
    if args.out is None:
        raise CliError("reproduce: --out DIR is required")
    try:
        mod = experiments.get(args.name)
    except KeyError as e:
        raise CliError(str(e.args[0])) from None
    out = Path(args.out)
    progress = None
    bar = None
    if not args.quiet:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        bar = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            transient=False,
        )
        task = bar.add_task(f"{args.name} runs", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        bar.start()
    try:
        report = mod.reproduce(out, quick=args.quick, workers=args.workers, progress=progress)
    except KeyboardInterrupt:
        raise CliError(
            f"interrupted; finished runs are kept in {out / 'runs'} and are not redone",
            EXIT_INTERRUPTED,
        ) from None
    except experiments.RunFailed as e:
        raise CliError(
            f"{e}\nfinished runs are kept in {out / 'runs'} and are not redone", EXIT_FAILED
        ) from None
    finally:
        if bar is not None:
            bar.stop()
    if not args.quiet:
        print(Path(report).read_text())
    print(f"report: {report}")
    return EXIT_OK


def _print_summary(res, out: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    s = res.summary()
    console = Console()
    title = f"{res.scenario.name} · seed {res.seed} · {res.duration:.6g} s simulated"
    t = Table(title=title, show_header=False, title_justify="left")
    t.add_column("figure")
    t.add_column("value", justify="right")

    def row(name: str, value: str) -> None:
        t.add_row(name, value)

    warm = res.scenario.warmup
    if not res.measured:
        row("measurement", f"none yet: the run ends within its {warm:g} s warm-up")
    if res.timeseries.empty:
        row("samples", "none: the run is shorter than one sample interval")
    row(
        f"bottleneck utilization{f' (after {warm:g} s)' if warm else ''}",
        f"{_fmt_figure(s['utilization_mean'], '.3f')} ± {_fmt_figure(s['utilization_std'], '.3f')}",
    )
    row("goodput, all flows", _fmt_rate(s["goodput_total_bps"]))
    row(
        "queue (packets)",
        f"{_fmt_figure(s['queue_mean_packets'], '.1f')} ± "
        f"{_fmt_figure(s['queue_std_packets'], '.1f')}",
    )
    row(
        "queueing delay (ms)",
        f"mean {_fmt_figure(s['queue_delay_mean_ms'], '.3g')}, "
        f"p95 {_fmt_figure(s['queue_delay_p95_ms'], '.3g')}, "
        f"p99 {_fmt_figure(s['queue_delay_p99_ms'], '.3g')}",
    )
    row("drops", f"{int(s['drops_total'])}")
    row("ECN marks", f"{int(s['marks_total'])}")
    row("Jain's fairness index", _fmt_figure(s["jain_index"], ".4f"))
    wall = res.wall_time_s or 0.0
    speed = f" ({s['events'] / wall / 1e6:.2f} M events/s)" if wall > 0 else ""
    row("wall time", f"{wall:.2f} s{speed}")
    console.print(t)
    console.print(f"results in [bold]{out}[/bold]")


def cmd_sweep(args: argparse.Namespace) -> int:
    from satqm.sweep import cli as sweep_cli

    try:
        return sweep_cli.run(args)
    except sweep_cli.SweepCliError as e:
        raise CliError(str(e), e.status) from e


def cmd_validate(args: argparse.Namespace) -> int:
    from satqm.validation import _cli

    try:
        return _cli.run(args)
    except _cli.ValidateCliError as e:
        raise CliError(str(e), e.status) from e


# ----- parser ----------------------------------------------------------------


def _add_scenario_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    p.add_argument(
        "--seed", type=_seed, metavar="N", help="master random seed (replaces simulation.seed)"
    )
    p.add_argument(
        "--duration",
        type=_seconds,
        metavar="S",
        help="simulated seconds (replaces simulation.duration)",
    )
    p.add_argument(
        "--warmup",
        type=_seconds,
        metavar="S",
        help="seconds the summary leaves out at the start (replaces simulation.warmup); "
        "must be less than the duration",
    )
    p.add_argument(
        "--max-memory",
        metavar="SIZE",
        help='most memory the run may need by its estimate, e.g. "16 GB" '
        "(replaces simulation.max_memory)",
    )


def build_parser() -> argparse.ArgumentParser:
    from satqm._core import __version__

    parser = argparse.ArgumentParser(
        prog="satqm",
        description="Active queue management and transport research on satellite links.",
        epilog="Exit status: 0 ok, 1 run failed, 2 bad input, 130 interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"satqm {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    # --debug is accepted after the command too; SUPPRESS keeps the
    # subcommand's default from overwriting the main parser's value.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks on errors"
    )

    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser(
        "run",
        parents=[common],
        help="run a scenario and save its results",
        description="Run a scenario and write its results folder: "
        "Parquet tables, summary.json, the scenario as run, and plot.png.",
    )
    _add_scenario_args(p)
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="results folder (created if needed; files in it are replaced)",
    )
    p.add_argument(
        "--quiet", "-q", action="store_true", help="no progress bar and no summary; errors only"
    )
    p.add_argument("--no-plot", action="store_true", help="do not draw plot.png")
    p.add_argument(
        "--capture",
        action="append",
        metavar="LINK",
        help="write a packet capture (pcapng) of LINK and its reverse direction to "
        "DIR/capture/; repeat for more links (replaces simulation.capture)",
    )
    p.add_argument(
        "--capture-side",
        metavar="{out,in,both}",
        help="capture the departures after the links' queues (out, the default: "
        "LINK.pcapng), the arrivals before them with the drops (in: LINK.in.pcapng), "
        "or both (replaces simulation.capture_side)",
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "plot",
        parents=[common],
        help="draw a figure of a results folder: seq, cwnd, link or delay",
        description="Draw a figure of a results folder written by `satqm run` and print "
        "the path of the PNG file written: "
        "seq, the time-sequence graph of one connection (needs simulation.trace_seq, "
        "or emulation.trace_seq for a real connection); "
        "cwnd, the congestion windows of the flows in simulation.trace_cwnd; "
        "link, a link's utilization, queue and queueing delay; "
        "delay, the distribution of a link's queueing delay and the delay over time; "
        "links, the rate, delay and outages of a link that plays a schedule.",
    )
    p.add_argument(
        "what", choices=["seq", "cwnd", "link", "delay", "links"], help="which figure"
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="results folder")
    p.add_argument("--flow", type=int, metavar="N", help="the connection (for seq)")
    p.add_argument(
        "--way",
        type=int,
        choices=[0, 1],
        metavar="W",
        help="a real connection's direction: 0 from the end that opened it, 1 towards it "
        "(for seq; default: the one that sent more)",
    )
    p.add_argument(
        "--link",
        metavar="NAME",
        help="the link (for link, delay and links; default: the bottleneck)",
    )
    p.add_argument(
        "--from", dest="start", type=_seconds, metavar="S", help="zoom: from S seconds (for seq)"
    )
    p.add_argument(
        "--until", dest="end", type=_seconds, metavar="S", help="zoom: until S seconds (for seq)"
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        help="PNG file (default: in RUN_DIR, seq-flowN.png, seq-flowN-FROM-UNTILs.png when "
        "zoomed, cwnd.png, plot-LINK.png, delay-LINK.png, links-LINK.png)",
    )
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser(
        "check",
        parents=[common],
        help="validate a scenario without running it",
        description="Validate a scenario file (and any --seed, --duration, --warmup, "
        "--max-memory) without running it.",
    )
    _add_scenario_args(p)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser(
        "reproduce",
        parents=[common],
        help="reproduce a paper's experiment: runs, tables, figures, REPORT.md",
        description="Reproduce a paper's experiment and set its tables and figures beside "
        "the paper's numbers. Finished runs are kept and not redone.",
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="which reproduction (see --list)")
    p.add_argument("--list", action="store_true", help="list the reproductions")
    p.add_argument("--out", metavar="DIR", help="output folder")
    p.add_argument("--quick", action="store_true", help="fewer seeds and shorter runs")
    # The same worker count as a sweep's.
    from satqm.sweep.cli import _workers

    p.add_argument(
        "--workers",
        type=_workers,
        metavar="N",
        help="worker processes (default: one per CPU; 0 or 1: in this process)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar or report echo")
    p.set_defaults(func=cmd_reproduce)

    from satqm.sweep.cli import add_parser as add_sweep_parser

    add_sweep_parser(sub, common).set_defaults(func=cmd_sweep)

    from satqm.validation._cli import add_parser as add_validate_parser

    add_validate_parser(sub, common).set_defaults(func=cmd_validate)

    p = sub.add_parser(
        "shell",
        parents=[common],
        help="run a command (or a shell) on a real host whose packets cross the scenario",
        description="Run the scenario in real time with its real hosts ([emulation]) in "
        "network namespaces, and COMMAND (default: your shell) in one of them. Its "
        "packets to another real host cross the scenario's links, ports and AQMs. "
        "Needs root and /dev/net/tun.",
    )
    _add_scenario_args(p)
    p.add_argument("--host", metavar="NAME", help="the real host to run in (default: the first)")
    p.add_argument("--out", metavar="DIR", help="save the run's results folder here")
    p.add_argument(
        "argv",
        nargs="*",
        metavar="-- COMMAND",
        help="the command and its arguments",
    )
    p.set_defaults(func=cmd_shell)

    p = sub.add_parser(
        "emulate",
        parents=[common],
        help="run commands on real hosts across the scenario, in real time, and save results",
        description="Run the scenario in real time for its duration with its real hosts "
        "([emulation]) in network namespaces, start each --run command on its host (in "
        "order, --stagger seconds apart), and write the same results folder as "
        "`satqm run`, with the real connections and packets; each command's output goes "
        "to DIR/runI-HOST.log. Commands still running at the end are stopped.",
    )
    _add_scenario_args(p)
    p.add_argument("--out", required=True, metavar="DIR", help="results folder")
    p.add_argument(
        "--run",
        action="append",
        type=_run_spec,
        required=True,
        metavar="HOST:COMMAND",
        help="a command (run by sh -c) on a real host",
    )
    p.add_argument(
        "--stagger",
        type=_seconds,
        default=0.5,
        metavar="S",
        help="seconds between starting one command and the next (default 0.5)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="errors only")
    p.set_defaults(func=cmd_emulate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``satqm`` command; returns the exit status."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    # `satqm shell SCENARIO [OPTIONS] -- COMMAND...`: the command is the
    # shell's, whatever options it has.
    command = None
    if "shell" in argv[:1] and "--" in argv:
        i = argv.index("--")
        argv, command = argv[:i], argv[i + 1 :]
    args = parser.parse_args(argv)
    if command is not None:
        args.argv = command
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return func(args)
    except CliError as e:
        _report(args, e, str(e))
        return e.status
    except KeyboardInterrupt:
        _report(args, None, "interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_FAILED
    except Exception as e:  # a bug: say so, briefly
        _report(args, e, f"internal error: {type(e).__name__}: {e}")
        return EXIT_FAILED
    except BaseException as e:  # pyo3 PanicException derives from BaseException
        if isinstance(e, SystemExit):
            raise
        _report(args, e, f"internal error: {type(e).__name__}: {e}")
        return EXIT_FAILED


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: object = None,
    line: str | None = None,
) -> None:
    """A warning on the command line: one line, no source location."""
    print(f"satqm: warning: {message}", file=sys.stderr)


def _report(args: argparse.Namespace, exc: BaseException | None, message: str) -> None:
    debug = getattr(args, "debug", False)
    if debug and exc is not None:
        traceback.print_exception(type(exc), exc, exc.__traceback__)
    print(f"satqm: error: {message}", file=sys.stderr)
    if not debug and message.startswith("internal error"):
        print("satqm: this is a bug; run again with --debug for the traceback", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
