"""Values the models read from scenario tables, in base units.

Quantities (``"305 ms"``, ``"20 Mbps"``, ``"1.5 MB"``; a number only if it is 0)
are read by the core's own parser (:func:`satqm._core.parse_quantity`), the
one that reads scenario files, so a model sees exactly what a run sees; a
value it cannot read raises :class:`satqm.ConfigError` naming the key.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

from satqm._core import parse_quantity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: A scenario: a TOML file, or a parsed table built here.
ScenarioSource = Any

_REPO = Path(__file__).resolve().parents[4]


def read_scenario(source: ScenarioSource) -> dict[str, Any]:
    """A scenario as a table: from a TOML file, or a copy of a parsed one."""
    if isinstance(source, dict):
        return copy.deepcopy(source)
    return tomllib.loads(Path(source).read_text(encoding="utf-8"))


def data_packet_bytes(tcp: dict[str, Any]) -> float:
    """Bytes of a full data segment on the wire under a ``[tcp]`` table:
    ``mss`` (default 1,460) and 40 header bytes, 12 more with the
    timestamps option (``timestamps``, on by default under the ``linux``
    and ``linux-2009`` profiles), as the core builds its packets."""
    ts = tcp.get("timestamps")
    if ts is None:
        ts = tcp.get("profile") in ("linux", "linux-2009")
    return float(tcp.get("mss", 1460)) + 40.0 + (12.0 if ts else 0.0)


def seconds(value: Any, path: str) -> float:
    return parse_quantity(value, "time", path)


def bits_per_second(value: Any, path: str) -> float:
    return parse_quantity(value, "rate", path)


def mean_delay(spec: Any, path: str) -> float:
    """Mean of the delay at ``path``: fixed, ``{min, max}``, ``{uniform = [a, b]}``
    or a list."""
    if isinstance(spec, dict):
        if "uniform" in spec:
            a, b = spec["uniform"]
            ends = (seconds(a, f"{path}.uniform[0]"), seconds(b, f"{path}.uniform[1]"))
        else:
            ends = (seconds(spec["min"], f"{path}.min"), seconds(spec["max"], f"{path}.max"))
        return 0.5 * (ends[0] + ends[1])
    if isinstance(spec, list):
        return sum(seconds(x, f"{path}[{i}]") for i, x in enumerate(spec)) / len(spec)
    return seconds(spec, path)


def buffer_packets(spec: Any, packet_bytes: float, path: str) -> float:
    """The buffer at ``path`` in packets of ``packet_bytes`` (1,000 if not given)."""
    if spec is None:
        return 1000.0
    if isinstance(spec, dict):
        if "packets" in spec:
            return float(spec["packets"])
        return parse_quantity(spec["bytes"], "bytes", f"{path}.bytes") / packet_bytes
    return float(spec)


def dumps(data: dict[str, Any]) -> str:
    """The scenario text of a parsed scenario (the sweep's canonical TOML)."""
    from satqm.sweep.canonical_toml import dumps

    return dumps(data)


def show(path: Path) -> str:
    """A path relative to the repository when it is inside it."""
    try:
        return path.resolve().relative_to(_REPO).as_posix()
    except ValueError:
        return str(path)
