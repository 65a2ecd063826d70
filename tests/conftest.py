"""Shared fixtures: example scenarios, a tiny fast scenario, a TOML writer."""

from __future__ import annotations

import copy
import math
import re
import sys
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def pytest_report_header(config) -> str:
    """The versions of the libraries results pass through, for CI's log."""
    from importlib.metadata import PackageNotFoundError, version

    def v(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "absent"

    names = ("numpy", "scipy", "pandas", "pyarrow", "matplotlib")
    return "satqm's libraries: " + ", ".join(f"{n} {v(n)}" for n in names)


#: Test files that run in real time (the emulator between network
#: namespaces). Under pytest-xdist they are one unit of work, so that they run
#: one after the other in one process, never two emulations at once.
REAL_TIME = ("test_emulation.py", "test_validate_linux.py")


def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's work units: a whole test file each (its module
    fixtures computed once), the real-time files together as one."""
    from xdist.scheduler import LoadScopeScheduling

    class ByFile(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "real-time" if path.rsplit("/", 1)[-1] in REAL_TIME else path

    return ByFile(config, log)


def pytest_collection_modifyitems(config, items) -> None:
    """The real-time files first, so that their long unit starts at once
    beside the files that only compute."""
    items.sort(key=lambda it: it.path.name not in REAL_TIME)


ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "scenarios" / "examples"
DROPTAIL = EXAMPLES / "dumbbell-droptail.toml"
HETERO = EXAMPLES / "dumbbell-hetero-rtt.toml"

#: A small scenario that runs in milliseconds: two bulk flows over a 50 ms,
#: 10 Mbit/s bottleneck with a short buffer, so there are drops.
TINY = """\
name = "tiny"

[simulation]
duration = "3 s"
seed = 1
sample_interval = "100 ms"
trace_cwnd = [0, 1]

[topology]
kind = "dumbbell"
pairs = 2

[topology.access]
rate = "100 Mbps"
delay = "5 ms"
buffer = 1000

[topology.bottleneck]
rate = "10 Mbps"
delay = "50 ms"
buffer = 20

[tcp]
recovery = "newreno"
mss = 1460
initial_window = 2

[[traffic]]
kind = "bulk"
pairs = "all"
start = { uniform = ["0 s", "0.5 s"] }
"""


def tiny_dict() -> dict[str, Any]:
    """TINY parsed, for tests that change it."""
    return copy.deepcopy(tomllib.loads(TINY))


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE_KEY.match(k) else _string(k)


def _string(s: str) -> str:
    """A TOML basic string: escape quotes, backslashes and control characters."""
    out = []
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list) and len(v) > 0 and all(isinstance(x, dict) for x in v)


def to_toml(data: dict[str, Any], _prefix: str = "") -> str:
    """Write a dict as TOML: sub-dicts of the top levels as [tables], lists
    of dicts as [[arrays of tables]] (their own sub-dicts inline)."""
    lines: list[str] = []
    nested: list[tuple[str, Any]] = []
    for k, v in data.items():
        if isinstance(v, dict) or _is_table_array(v):
            nested.append((k, v))
        else:
            lines.append(f"{_key(k)} = {_value(v)}")
    for k, v in nested:
        name = f"{_prefix}{_key(k)}"
        if isinstance(v, dict):
            lines.append(f"\n[{name}]")
            lines.append(to_toml(v, name + "."))
        else:
            for item in v:
                lines.append(f"\n[[{name}]]")
                lines.extend(f"{_key(ik)} = {_value(iv)}" for ik, iv in item.items())
    return "\n".join(x for x in lines if x != "") + "\n"


@pytest.fixture
def tiny_text() -> str:
    return TINY


@pytest.fixture(scope="session")
def droptail_path() -> Path:
    return DROPTAIL


@pytest.fixture(scope="session")
def hetero_path() -> Path:
    return HETERO
