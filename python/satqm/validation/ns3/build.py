"""Compile the ns-3 dumbbell (``dumbbell.cc``, shipped in this package) against the
ns-3 that the ``ns3`` PyPI wheel provides.

The wheel (ns-3.44) installs, under ``site-packages/ns3/``::

    include/ns3/*.h          C++ headers (plus a bundled boost subset)
    lib64/libns3.44-*.so     shared libraries
    lib64/cmake/ns3/         CMake package files (compile definitions live here)

This script finds that prefix, compiles ``dumbbell.cc`` with ``g++ -O2`` and an
rpath to ``lib64``, and caches the binary by a hash of the source, the flags,
the prefix and the compiler version.  It prints the binary path.

Where ns-3 is looked for, first hit wins:

1. ``SATQM_NS3_PREFIX``: a directory holding ``include/ns3`` and ``lib64``;
2. the ``site-packages`` of the interpreter in ``SATQM_NS3_PYTHON``;
3. the running interpreter (``pip install 'satqm[ns3]'`` puts ns-3 there);
4. ``/work/ns3venv/bin/python`` (the development set-up's separate venv).

The build directory is ``SATQM_NS3_BUILD`` or ``~/.cache/satqm-ns3`` (never the
repository); binaries unused for 30 days are removed when a new one is built.
``SATQM_NS3_CXX`` overrides the compiler (default ``g++``).

Usage::

    python -m satqm.validation.ns3.build            # build if needed, print binary path
    python -m satqm.validation.ns3.build --force    # rebuild
    python -m satqm.validation.ns3.build --info     # JSON: prefix, defines, build profile
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "dumbbell.cc"
DEFAULT_VENV_PYTHON = Path("/work/ns3venv/bin/python")
NS3_LIBS = ["core", "network", "internet", "point-to-point", "applications", "traffic-control"]
# What the wheel's CMake targets export (ns3Targets.cmake); used if that file is missing.
FALLBACK_DEFINES = ["NS3_BUILD_PROFILE_RELEASE", "NS3_LOG_ENABLE", "NS3_ASSERT_ENABLE"]


#: How to get ns-3 (printed when it is missing).
INSTALL_HINT = (
    "pip install 'satqm[ns3]'   (or: pip install 'ns3==3.44.*'; "
    "SATQM_NS3_PYTHON=/path/to/python points at another environment that has it)"
)


class Ns3NotFound(RuntimeError):
    """The ns3 wheel (headers + libraries) could not be located."""


def build_dir() -> Path:
    d = os.environ.get("SATQM_NS3_BUILD")
    return Path(d).expanduser() if d else Path.home() / ".cache" / "satqm-ns3"


def _is_prefix(p: Path) -> bool:
    return (p / "include" / "ns3" / "core-module.h").is_file() and any(
        p.glob("lib*/libns3.*-core.so")
    )


def _site_dirs(python: str) -> list[Path]:
    if python == sys.executable:
        import site
        import sysconfig

        paths = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
        if hasattr(site, "getsitepackages"):
            paths += site.getsitepackages()
        return [Path(x) for x in paths]
    code = (
        "import json, site, sysconfig; "
        "p = [sysconfig.get_paths()['purelib'], sysconfig.get_paths()['platlib']]; "
        "p += site.getsitepackages() if hasattr(site, 'getsitepackages') else []; "
        "print(json.dumps(p))"
    )
    try:
        out = subprocess.run(
            [python, "-c", code], capture_output=True, text=True, timeout=60, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return [Path(x) for x in json.loads(out.stdout)]


def _candidate_pythons() -> list[str]:
    cands = []
    env = os.environ.get("SATQM_NS3_PYTHON")
    if env:
        cands.append(env)
    cands.append(sys.executable)
    if DEFAULT_VENV_PYTHON.exists():
        cands.append(str(DEFAULT_VENV_PYTHON))
    return cands


def find_ns3() -> Path:
    """Return the ns-3 prefix (the wheel's ``site-packages/ns3`` directory)."""
    env = os.environ.get("SATQM_NS3_PREFIX")
    if env:
        p = Path(env).expanduser()
        if _is_prefix(p):
            return p
        raise Ns3NotFound(
            f"ns-3 not found: SATQM_NS3_PREFIX={env} has no include/ns3/core-module.h and "
            f"lib*/libns3.*-core.so. Install it with:\n  {INSTALL_HINT}"
        )
    tried = []
    for py in _candidate_pythons():
        for site in _site_dirs(py):
            p = site / "ns3"
            tried.append(str(p))
            if _is_prefix(p):
                return p
    raise Ns3NotFound(
        "ns-3 not found. Install it with:\n  "
        + INSTALL_HINT
        + "\nLooked in:\n  "
        + "\n  ".join(tried)
    )


def lib_dir(prefix: Path) -> Path:
    for name in ("lib64", "lib"):
        d = prefix / name
        if any(d.glob("libns3.*-core.so")):
            return d
    raise Ns3NotFound(f"no libns3.*-core.so under {prefix}")


def ns3_version(prefix: Path) -> str:
    libs = sorted(lib_dir(prefix).glob("libns3.*-core.so"))
    m = re.match(r"libns(3\.[0-9.]+)-core\.so", libs[0].name)
    if not m:
        raise Ns3NotFound(f"cannot read the ns-3 version from {libs[0].name}")
    return m.group(1)


def compile_defines(prefix: Path) -> list[str]:
    """The compile definitions ns-3's CMake package exports for ns3::core."""
    targets = lib_dir(prefix) / "cmake" / "ns3" / "ns3Targets.cmake"
    try:
        text = targets.read_text()
    except OSError:
        return list(FALLBACK_DEFINES)
    m = re.search(r'INTERFACE_COMPILE_DEFINITIONS "((?:[^"\\]|\\.)*)"', text)
    if not m:
        return list(FALLBACK_DEFINES)
    keep = []
    for d in m.group(1).split(";"):
        name = d.split("=", 1)[0]
        # NS3_* select inline behaviour in the headers (asserts, logging);
        # build-machine paths and HAVE_* feature macros are not needed here
        if name.startswith("NS3_"):
            keep.append(d)
    return keep


def build_profile(prefix: Path) -> dict:
    """What the wheel's build keeps: profile, asserts, logging."""
    defines = compile_defines(prefix)
    names = {d.split("=", 1)[0] for d in defines}
    profile = next(
        (
            n[len("NS3_BUILD_PROFILE_") :].lower()
            for n in names
            if n.startswith("NS3_BUILD_PROFILE_")
        ),
        "unknown",
    )
    return {
        "profile": profile,
        "asserts": "NS3_ASSERT_ENABLE" in names,
        "logging": "NS3_LOG_ENABLE" in names,
        "defines": defines,
    }


def _cxx() -> str:
    return os.environ.get("SATQM_NS3_CXX", "g++")


def _cxx_version(cxx: str) -> str:
    try:
        return subprocess.run(
            [cxx, "--version"], capture_output=True, text=True, check=True
        ).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError) as e:
        raise RuntimeError(f"C++ compiler {cxx!r} not usable: {e}") from e


def compile_command(prefix: Path, output: Path) -> list[str]:
    libdir = lib_dir(prefix)
    ver = ns3_version(prefix)
    cmd = [_cxx(), "-std=c++20", "-O2", "-w"]
    cmd += [f"-D{d}" for d in compile_defines(prefix)]
    cmd += [f"-I{prefix / 'include'}", str(SOURCE), "-o", str(output)]
    cmd += [f"-L{libdir}", f"-Wl,-rpath,{libdir}"]
    cmd += [f"-lns{ver}-{lib}" for lib in NS3_LIBS]
    return cmd


def binary_path(prefix: Path | None = None) -> Path:
    """Where the binary for this source, ns-3 and compiler lives (the name is a
    hash of the source text, the compile flags and the compiler version, not
    of where the source is, so every copy of satqm shares one binary)."""
    prefix = prefix or find_ns3()
    cxx = _cxx()
    h = hashlib.sha256()
    h.update(SOURCE.read_bytes())
    flags = [a for a in compile_command(prefix, Path("X")) if a != str(SOURCE)]
    h.update("\0".join(flags).encode())
    h.update(_cxx_version(cxx).encode())
    return build_dir() / f"dumbbell-{h.hexdigest()[:16]}"


def available() -> bool:
    """Whether ns-3 and a C++ compiler are there (nothing is built)."""
    try:
        find_ns3()
        _cxx_version(_cxx())
    except (Ns3NotFound, RuntimeError):
        return False
    return True


def ensure_binary(force: bool = False, verbose: bool = False) -> Path:
    """Build dumbbell.cc if no cached binary matches; return the binary path."""
    prefix = find_ns3()
    out = binary_path(prefix)
    if out.exists() and not force:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=out.name + ".", suffix=".tmp", dir=out.parent)
    os.close(fd)
    cmd = compile_command(prefix, Path(tmp))
    if verbose:
        print(" ".join(cmd), file=sys.stderr)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise RuntimeError(f"compiling {SOURCE} failed:\n{' '.join(cmd)}\n{proc.stderr}")
    os.chmod(tmp, 0o755)
    os.replace(tmp, out)
    # Binaries of other sources stay: another satqm (another checkout, a run
    # in progress) may be using them. Drop the ones unused for 30 days.
    cutoff = time.time() - 30 * 86400
    for old in out.parent.glob("dumbbell-*"):
        if old != out and re.fullmatch(r"dumbbell-[0-9a-f]{16}", old.name):
            try:
                if old.stat().st_atime < cutoff:
                    old.unlink()
            except OSError:
                pass
    return out


def info() -> dict:
    prefix = find_ns3()
    return {
        "prefix": str(prefix),
        "include_dir": str(prefix / "include"),
        "lib_dir": str(lib_dir(prefix)),
        "ns3_version": ns3_version(prefix),
        "build": build_profile(prefix),
        "compiler": _cxx_version(_cxx()),
        "binary": str(binary_path(prefix)),
        "build_dir": str(build_dir()),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--force", action="store_true", help="rebuild even if a cached binary exists")
    ap.add_argument("--info", action="store_true", help="print what was found as JSON and exit")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the compile command")
    args = ap.parse_args(argv)
    try:
        if args.info:
            print(json.dumps(info(), indent=2))
            return 0
        print(ensure_binary(force=args.force, verbose=args.verbose))
    except (Ns3NotFound, RuntimeError) as e:
        print(f"satqm.validation.ns3.build: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
