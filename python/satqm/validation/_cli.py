"""``satqm validate ns3|linux``: the paired runs and their report.

Kept apart from :mod:`satqm.cli`, which only registers the subcommand, so that
``satqm --help`` does not import any of this.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


class ValidateCliError(Exception):
    """A failure to report as one line, with an exit status."""

    def __init__(self, message: str, status: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.status = status


def add_parser(sub, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``validate`` to the ``satqm`` subcommands; returns its parser."""
    from satqm.validation.scenarios import FULL_DURATION_S, QUICK_DURATION_S

    p = sub.add_parser(
        "validate",
        parents=[common],
        help="run scenarios in satqm and in a reference (ns-3, or real Linux TCP) and compare",
        description="Run each validation scenario in satqm and in the reference with matched "
        "parameters, and write DIR/table.md, table.csv, flows.csv and overlay plots. "
        "ns3: ns-3 (optional: pip install 'satqm[ns3]'); linux: real Linux TCP between "
        "network namespaces across the same emulated network (needs root and /dev/net/tun; "
        "runs in real time). See docs/validation.md.",
    )
    p.add_argument("reference", choices=["ns3", "linux"], help="the reference")
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"the quick subset, {QUICK_DURATION_S:g} s runs instead of the full set's "
        f"{FULL_DURATION_S:g} s for ns3 (a few minutes on 2 cores); for linux, four "
        "scenarios of 30-50 s of real time (under 5 minutes)",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="report folder (default: validate-REFERENCE or validate-REFERENCE-quick)",
    )
    p.add_argument(
        "--scenarios",
        metavar="NAME,...",
        help="only these scenarios (names or groups; a trailing * matches a prefix)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=2,
        metavar="N",
        help="runs at a time (default 2; ns3 only: linux runs one emulation at a time)",
    )
    p.add_argument(
        "--device-queue",
        type=int,
        choices=[0, 1],
        metavar="{0,1}",
        help="ns3 only: satqm's bottleneck with (1) or without (0) a model of ns-3's "
        "one-packet device queue below its AQM (default: as each set has it, set 6 "
        "with, the others without)",
    )
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 if a checked scenario is outside the bounds and not explained",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    return p


def run(args: argparse.Namespace) -> int:
    """Carry out ``satqm validate``; raises ValidateCliError on failure."""
    if args.reference == "linux":
        if args.device_queue is not None:
            raise ValidateCliError("--device-queue: only with ns3 (linux runs satqm's own links)")
        return run_linux(args)
    from satqm.validation import compare
    from satqm.validation import scenarios as S

    names = [x.strip() for x in (args.scenarios or "").split(",") if x.strip()]
    try:
        descs = S.select(S.scenarios(args.quick), names)
    except ValueError as e:
        raise ValidateCliError(f"--scenarios: {e}") from None
    if args.device_queue is not None:
        for d in descs:
            d["bottleneck"]["device_queue_packets"] = args.device_queue
    if args.list:
        for d in descs:
            print(f"{d['name']:28} {compare.describe(d)}")
        return EXIT_OK
    if args.workers < 1:
        raise ValidateCliError("--workers: must be >= 1")

    from satqm.validation.ns3 import build

    try:
        build.find_ns3()
    except build.Ns3NotFound as e:
        raise ValidateCliError(str(e)) from None
    out = Path(args.out or ("validate-ns3-quick" if args.quick else "validate-ns3"))
    if out.exists() and not out.is_dir():
        raise ValidateCliError(f"--out {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValidateCliError(f"--out {out}: cannot create: {e.strerror or e}") from None

    say = (lambda *a: None) if args.quiet else (lambda m: print(m, file=sys.stderr))
    say("building the ns-3 program if needed (about 10 s the first time)")
    try:
        binary = str(build.ensure_binary())
    except RuntimeError as e:
        raise ValidateCliError(f"cannot build the ns-3 program: {e}", EXIT_FAILED) from None
    try:
        info = build.info()
    except Exception:  # informational only
        info = None

    bar = None
    progress = None
    if not args.quiet:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        bar = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
        )
        task = bar.add_task(f"{len(descs)} scenarios × 2 simulators", total=2 * len(descs))

        def progress(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, description=what or "starting")

        bar.start()
    t0 = time.perf_counter()
    try:
        results = compare.run_pairs(descs, workers=args.workers, binary=binary, progress=progress)
    except KeyboardInterrupt:
        raise ValidateCliError("interrupted; nothing written", 130) from None
    except RuntimeError as e:
        raise ValidateCliError(str(e), EXIT_FAILED) from None
    finally:
        if bar is not None:
            bar.stop()
    command = "satqm validate ns3" + (" --quick" if args.quick else "")
    if names:
        command += " --scenarios " + shlex.quote(",".join(names))
    command += f" --out {shlex.quote(str(out))}"
    path, rows = compare.write_report(
        results, out, command=command, ns3_info=info, elapsed_s=time.perf_counter() - t0
    )
    print(compare.summary_table(rows))
    fails = compare.failures(rows)
    bad = [r for r in rows if r["check"] == "FAIL"]
    print()
    if fails:
        print("outside the bounds:")
        for line in fails:
            group = line.split(":", 1)[0]
            why = compare.EXPLAINED.get(group)
            print(f"  {line}" + (f"  [explained: {why}]" if why else ""))
    elif any(r["check"] != "-" for r in rows):
        print("every checked scenario is within the bounds")
    else:
        print("none of these scenarios is checked against the bounds")
    print(f"report: {path}")
    if args.strict and bad:
        return EXIT_FAILED
    return EXIT_OK


def _out_dir(args: argparse.Namespace) -> Path:
    name = f"validate-{args.reference}" + ("-quick" if args.quick else "")
    out = Path(args.out or name)
    if out.exists() and not out.is_dir():
        raise ValidateCliError(f"--out {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValidateCliError(f"--out {out}: cannot create: {e.strerror or e}") from None
    return out


def run_linux(args: argparse.Namespace) -> int:
    """``satqm validate linux``: satqm's linux profile against the kernel's TCP."""
    from satqm.validation import linux as L

    names = [x.strip() for x in (args.scenarios or "").split(",") if x.strip()]
    try:
        descs = L.select(L.scenarios(args.quick), names)
    except ValueError as e:
        raise ValidateCliError(f"--scenarios: {e}") from None
    if args.list:
        for d in descs:
            print(f"{d['name']:30} {L.describe(d)}")
        return EXIT_OK
    from satqm.emulation import EmulationUnavailable, missing_requirement

    why = missing_requirement()
    if why:
        raise ValidateCliError(f"validate linux: {why}")
    out = _out_dir(args)
    say = (lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr))
    real = [d for d in descs if not d["skip"]]
    say(
        f"{len(real)} scenarios, {sum(d['duration_s'] for d in real):.0f} s of real time "
        "(one emulation at a time)"
    )
    for d in descs:
        if d["skip"]:
            say(f"skipping {d['name']}: {d['skip']}")

    def progress(done: int, total: int, what: str) -> None:
        say(f"[{done}/{total}] {what}")

    t0 = time.perf_counter()
    try:
        results = L.run_all(descs, out / "runs", progress=progress)
    except KeyboardInterrupt:
        raise ValidateCliError("interrupted; no report written", 130) from None
    except EmulationUnavailable as e:
        raise ValidateCliError(f"validate linux: {e}") from None
    except RuntimeError as e:
        raise ValidateCliError(str(e), EXIT_FAILED) from None
    command = "satqm validate linux" + (" --quick" if args.quick else "")
    if names:
        command += " --scenarios " + shlex.quote(",".join(names))
    command += f" --out {shlex.quote(str(out))}"
    path, rows = L.write_report(results, out, command=command, elapsed_s=time.perf_counter() - t0)
    print(L.summary_table(rows))
    print()
    fails = L.failures(rows)
    if fails:
        print("outside the bounds:")
        for line in fails:
            why = L.EXPLAINED.get(line.split(":", 1)[0])
            print(f"  {line}" + (f"  [explained: {why}]" if why else ""))
    elif any(r["check"] not in ("-", "skipped") for r in rows):
        print("every checked scenario is within the bounds")
    else:
        print("none of these scenarios is checked against the bounds")
    print(f"report: {path}")
    if args.strict and any(r["check"] == "FAIL" for r in rows):
        return EXIT_FAILED
    return EXIT_OK
