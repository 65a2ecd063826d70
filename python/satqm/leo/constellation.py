"""Satellites to propagate: Walker-delta shells, TLE and OMM element sets.

Every satellite is an ``sgp4.api.Satrec``, so a generated shell and a
catalogue of real element sets propagate through the same library (SGP4 with
the WGS-72 constants its mean elements are defined with).

Walker delta ``i:T/P/F`` (J. G. Walker, "Satellite constellations", JBIS 37,
1984): ``T`` satellites in ``P`` circular planes of ``S = T/P`` satellites,
all at inclination ``i``, with phasing ``F`` in ``0..P-1``. Plane ``p`` (from
0) has right ascension of the ascending node ``RAAN_p = spread * p / P``
(``spread`` = 360 deg for a delta pattern, 180 deg for a star pattern), and
satellite ``s`` (from 0) of that plane has mean anomaly (with the argument of
perigee 0, the argument of latitude)

    M_ps = 360 * s / S + 360 * F * p / T   (degrees, modulo 360),

so each plane is shifted by ``F`` times the smallest in-plane step ``360/T``
from the one before.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
from sgp4 import omm
from sgp4.api import WGS72, Satrec, SatrecArray

from satqm.leo.frames import (
    DAY_S,
    WGS72_MU_KM3_PER_S2,
    WGS72_RADIUS_KM,
    _finite,
    as_utc,
    gmst82_rad,
    julian_date,
    teme_to_ecef_m,
)

#: Julian date of SGP4's element epoch origin, 1949-12-31 00:00 UTC.
_JD_1949_12_31 = 2433281.5
#: Eccentricity given to a Walker shell's "circular" orbits: SGP4 wants e > 0.
WALKER_ECCENTRICITY = 1e-7
#: Propagate at most this many (satellite, time) pairs at once (memory bound:
#: positions and velocities are 48 bytes a pair).
_CHUNK_PAIRS = 400_000


def _integer(value, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class Shell:
    """A Walker shell: ``planes`` x ``per_plane`` satellites in circular orbits.

    ``altitude_km`` is the mean semi-major axis less the WGS-72 equatorial
    radius (6378.135 km); ``phasing`` is Walker's ``F`` in ``0..planes-1``;
    ``raan_spread_deg`` is 360 for a delta pattern, 180 for a star.
    """

    altitude_km: float
    inclination_deg: float
    planes: int
    per_plane: int
    phasing: int
    raan_spread_deg: float = 360.0

    def __post_init__(self) -> None:
        alt = _finite(self.altitude_km, "altitude_km")
        if alt <= 0.0:
            raise ValueError(f"altitude_km must be > 0, got {self.altitude_km!r}")
        inc = _finite(self.inclination_deg, "inclination_deg")
        if not 0.0 <= inc <= 180.0:
            raise ValueError(f"inclination_deg must be in [0, 180], got {self.inclination_deg!r}")
        planes = _integer(self.planes, "planes", 1)
        per_plane = _integer(self.per_plane, "per_plane", 1)
        phasing = _integer(self.phasing, "phasing", 0)
        if phasing > planes - 1:
            raise ValueError(
                f"phasing must be in 0..planes-1 = 0..{planes - 1}, got {self.phasing!r}"
            )
        spread = _finite(self.raan_spread_deg, "raan_spread_deg")
        if not 0.0 < spread <= 360.0:
            raise ValueError(f"raan_spread_deg must be in (0, 360], got {self.raan_spread_deg!r}")
        for name, v in (
            ("altitude_km", alt),
            ("inclination_deg", inc),
            ("planes", planes),
            ("per_plane", per_plane),
            ("phasing", phasing),
            ("raan_spread_deg", spread),
        ):
            object.__setattr__(self, name, v)

    @classmethod
    def from_notation(
        cls, notation: str, altitude_km: float, raan_spread_deg: float = 360.0
    ) -> Shell:
        """A shell from Walker's ``"i:T/P/F"``, e.g. ``"53:1584/72/17"``.

        ``P`` must divide ``T``.
        """
        m = re.fullmatch(
            r"\s*([0-9.]+)\s*(?:deg|°)?\s*:\s*(\d+)\s*/\s*(\d+)\s*/\s*(\d+)\s*", str(notation)
        )
        if m is None:
            raise ValueError(
                f"notation must read 'i:T/P/F' (e.g. '53:1584/72/17'), got {notation!r}"
            )
        inc, total, planes, phasing = float(m[1]), int(m[2]), int(m[3]), int(m[4])
        if planes < 1:
            raise ValueError(f"planes must be >= 1, got {planes} in {notation!r}")
        if total % planes:
            raise ValueError(
                f"planes ({planes}) must divide the number of satellites ({total}) in {notation!r}"
            )
        return cls(altitude_km, inc, planes, total // planes, phasing, raan_spread_deg)

    @property
    def total(self) -> int:
        """The number of satellites, ``T = planes * per_plane``."""
        return self.planes * self.per_plane

    def notation(self) -> str:
        """Walker's ``i:T/P/F``."""
        return f"{self.inclination_deg:g}:{self.total}/{self.planes}/{self.phasing}"

    def raan_deg(self, plane: int) -> float:
        """Right ascension of the ascending node of ``plane``: spread * p / P."""
        return (self.raan_spread_deg * plane / self.planes) % 360.0

    def mean_anomaly_deg(self, plane: int, slot: int) -> float:
        """Mean anomaly of satellite ``slot`` of ``plane``: 360 s/S + 360 F p/T."""
        return (360.0 * slot / self.per_plane + 360.0 * self.phasing * plane / self.total) % 360.0

    def __str__(self) -> str:
        kind = (
            "delta"
            if self.raan_spread_deg == 360.0
            else f"RAAN spread {self.raan_spread_deg:g} deg"
        )
        return f"Walker {kind} {self.notation()} at {self.altitude_km:g} km"


def _kozai_mean_motion_rad_per_min(
    altitude_km: float, inclination_rad: float, epoch_days: float
) -> float:
    """The SGP4 (Kozai) mean motion whose mean semi-major axis is R + h.

    SGP4 takes the Kozai mean motion and recovers Brouwer's, whose semi-major
    axis differs from Kepler's by a J2 term (~0.3 km at 550 km). Start from
    Kepler's n = sqrt(mu / a^3) and correct n by (a_sgp4 / a)^(3/2) until
    ``Satrec.a`` is R + h (three rounds reach well under a millimetre).
    """
    a_km = WGS72_RADIUS_KM + altitude_km
    n = math.sqrt(WGS72_MU_KM3_PER_S2 / a_km**3) * 60.0
    probe = Satrec()
    for _ in range(4):
        probe.sgp4init(
            WGS72, "i", 1, epoch_days, 0.0, 0.0, 0.0, WALKER_ECCENTRICITY,
            0.0, inclination_rad, 0.0, n, 0.0,
        )  # fmt: skip
        n *= (probe.a * WGS72_RADIUS_KM / a_km) ** 1.5
    return n


def _tle_checksum(line: str) -> int:
    """TLE checksum: the digits of columns 1-68 summed, each '-' counting 1, mod 10."""
    return sum(int(c) if c.isdigit() else (c == "-") for c in line[:68]) % 10


def _check_tle_line(line: str, number: int, lineno: int) -> None:
    if len(line) < 69:
        raise ValueError(
            f"TLE line {lineno}: line {number} of an element set must have 69 columns, "
            f"has {len(line)}"
        )
    if not line[68].isdigit() or _tle_checksum(line) != int(line[68]):
        raise ValueError(
            f"TLE line {lineno}: bad checksum (column 69 is {line[68]!r}, "
            f"the columns sum to {_tle_checksum(line)})"
        )


def _read_source(path_or_text, name: str) -> tuple[str, str]:
    """(text, label): read a file, or take a string holding newlines as the text."""
    if isinstance(path_or_text, Path) or (
        isinstance(path_or_text, str) and "\n" not in path_or_text
    ):
        path = Path(path_or_text)
        try:
            return path.read_text(encoding="utf-8"), str(path)
        except OSError as e:
            raise ValueError(f"{name}: cannot read {str(path)!r} ({e.strerror})") from None
    if isinstance(path_or_text, str):
        return path_or_text, "<text>"
    raise ValueError(f"{name} must be a path or a string, got {type(path_or_text).__name__}")


class Constellation:
    """Named satellites, each an ``sgp4.api.Satrec``, propagated together.

    Build one with :meth:`walker`, :meth:`from_tle` or :meth:`from_omm`;
    join several with ``+`` (names must stay unique).
    """

    def __init__(
        self, names: Sequence[str], satrecs: Sequence[Satrec], description: str, epoch: datetime
    ) -> None:
        if len(names) != len(satrecs):
            raise ValueError("names and satrecs must have the same length")
        if not names:
            raise ValueError("a constellation must hold at least one satellite")
        self.names: list[str] = list(names)
        self.satrecs: list[Satrec] = list(satrecs)
        #: One line saying what the constellation is (written into schedules).
        self.description = description
        #: The epoch the elements are given at (the newest one for a catalogue).
        self.epoch = as_utc(epoch, "epoch")
        self._array = SatrecArray(self.satrecs)

    def __len__(self) -> int:
        return len(self.satrecs)

    def __repr__(self) -> str:
        return f"<Constellation: {self.description}>"

    def __add__(self, other: Constellation) -> Constellation:
        names = self.names + other.names
        if len(set(names)) != len(names):
            raise ValueError("names must be unique across the joined constellations")
        return Constellation(
            names,
            self.satrecs + other.satrecs,
            f"{self.description} + {other.description}",
            max(self.epoch, other.epoch),
        )

    # -- builders -----------------------------------------------------------

    @classmethod
    def walker(cls, shell: Shell, epoch: datetime, prefix: str = "") -> Constellation:
        """The satellites of a Walker shell, at their mean elements at ``epoch``.

        Satellite ``s`` of plane ``p`` is named ``f"{prefix}P{p:02d}S{s:02d}"``
        (e.g. ``"P03S17"``; more digits when needed) and initialised with
        ``Satrec.sgp4init`` (WGS-72, B* = 0 so no drag, e = 1e-7, argument of
        perigee 0, RAAN and mean anomaly from :class:`Shell`).
        """
        if not isinstance(shell, Shell):
            raise ValueError(f"shell must be a Shell, got {type(shell).__name__}")
        epoch = as_utc(epoch, "epoch")
        jd, fr = julian_date(epoch)
        epoch_days = (jd - _JD_1949_12_31) + fr
        inc_rad = math.radians(shell.inclination_deg)
        n = _kozai_mean_motion_rad_per_min(shell.altitude_km, inc_rad, epoch_days)
        wp = max(2, len(str(shell.planes - 1)))
        ws = max(2, len(str(shell.per_plane - 1)))
        names, sats = [], []
        for p in range(shell.planes):
            raan = math.radians(shell.raan_deg(p))
            for s in range(shell.per_plane):
                sat = Satrec()
                sat.sgp4init(
                    WGS72, "i", len(sats) + 1, epoch_days, 0.0, 0.0, 0.0, WALKER_ECCENTRICITY,
                    0.0, inc_rad, math.radians(shell.mean_anomaly_deg(p, s)), n, raan,
                )  # fmt: skip
                names.append(f"{prefix}P{p:0{wp}d}S{s:0{ws}d}")
                sats.append(sat)
        return cls(names, sats, f"{shell}, epoch {_iso(epoch)}", epoch)

    @classmethod
    def from_tle(cls, path_or_text: str | Path) -> Constellation:
        """Satellites from two-line element sets (a file, or the text itself).

        Accepts 2-line sets and 3-line sets (a name line before line 1, with
        or without CelesTrak's leading ``"0 "``); blank lines are skipped.
        A set without a name is named ``"SAT<catalog number>"``. Each line 1
        and 2 is checked for its 69 columns, its checksum and a catalog
        number that agrees between the two; a bad line raises ``ValueError``
        naming its line number.
        """
        text, label = _read_source(path_or_text, "path_or_text")
        lines = [(i + 1, ln.rstrip()) for i, ln in enumerate(text.splitlines())]
        lines = [(i, ln) for i, ln in lines if ln.strip()]
        names, sats = [], []
        name: tuple[int, str] | None = None
        k = 0
        while k < len(lines):
            lineno, line = lines[k]
            if line.startswith("1 "):
                if k + 1 >= len(lines) or not lines[k + 1][1].startswith("2 "):
                    raise ValueError(f"TLE line {lineno}: line 1 is not followed by a line 2")
                lineno2, line2 = lines[k + 1]
                _check_tle_line(line, 1, lineno)
                _check_tle_line(line2, 2, lineno2)
                if line[2:7] != line2[2:7]:
                    raise ValueError(
                        f"TLE line {lineno2}: catalog number {line2[2:7].strip()!r} differs "
                        f"from line {lineno}'s {line[2:7].strip()!r}"
                    )
                try:
                    sat = Satrec.twoline2rv(line, line2, WGS72)
                except Exception as e:  # sgp4 raises ValueError/IndexError on bad fields
                    raise ValueError(f"TLE line {lineno}: unreadable element set ({e})") from None
                if sat.error:
                    raise ValueError(
                        f"TLE line {lineno}: SGP4 rejects the element set (error {sat.error})"
                    )
                names.append(name[1] if name else f"SAT{sat.satnum}")
                sats.append(sat)
                name = None
                k += 2
            elif line.startswith("2 "):
                raise ValueError(f"TLE line {lineno}: line 2 without a line 1 before it")
            else:
                if name is not None:
                    raise ValueError(
                        f"TLE line {lineno}: expected line 1 of an element set after the "
                        f"name on line {name[0]}, got {line[:30]!r}"
                    )
                title = line[2:] if line.startswith("0 ") else line
                name = (lineno, title.strip())
                k += 1
        if name is not None:
            raise ValueError(f"TLE line {name[0]}: a name without an element set after it")
        if not sats:
            raise ValueError(f"path_or_text: no element sets in {label}")
        return cls._from_catalogue(names, sats, "TLE", label)

    @classmethod
    def from_omm(cls, path: str | Path) -> Constellation:
        """Satellites from an OMM file as CelesTrak serves it: CSV, JSON or XML.

        The format is told by the first character (``[`` or ``{``: JSON,
        ``<``: XML, otherwise CSV with a header line); the fields are read by
        ``sgp4.omm.initialize`` (WGS-72). A record missing a field or with a
        bad value raises ``ValueError`` naming the record (from 1).
        """
        text, label = _read_source(Path(path), "path")
        head = text.lstrip()[:1]
        try:
            if head in ("[", "{"):
                data = json.loads(text)
                records = [data] if isinstance(data, dict) else list(data)
            elif head == "<":
                records = list(omm.parse_xml(io.StringIO(text)))
            else:
                records = list(omm.parse_csv(io.StringIO(text)))
        except Exception as e:
            raise ValueError(f"path: {label} is not readable OMM ({e})") from None
        names, sats = [], []
        for i, fields in enumerate(records, start=1):
            if not isinstance(fields, dict):
                raise ValueError(f"path: {label}: record {i} is not an object")
            fields = {k: v for k, v in fields.items()}
            epoch = str(fields.get("EPOCH", ""))
            if epoch and "." not in epoch:
                fields["EPOCH"] = epoch + ".0"
            sat = Satrec()
            try:
                omm.initialize(sat, fields)
            except KeyError as e:
                raise ValueError(f"path: {label}: record {i} has no field {e.args[0]}") from None
            except (TypeError, ValueError) as e:
                raise ValueError(f"path: {label}: record {i}: {e}") from None
            if sat.error:
                raise ValueError(
                    f"path: {label}: record {i}: SGP4 rejects the elements (error {sat.error})"
                )
            names.append(str(fields.get("OBJECT_NAME") or f"SAT{sat.satnum}").strip())
            sats.append(sat)
        if not sats:
            raise ValueError(f"path: no records in {label}")
        return cls._from_catalogue(names, sats, "OMM", label)

    @classmethod
    def _from_catalogue(
        cls, names: list[str], sats: list[Satrec], kind: str, label: str
    ) -> Constellation:
        epochs = [_satrec_epoch(s) for s in sats]
        first, last = min(epochs), max(epochs)
        span = f"epoch {_iso(first)}" if first == last else f"epochs {_iso(first)} to {_iso(last)}"
        count = f"{len(sats)} satellite{'s' if len(sats) > 1 else ''}"
        return cls(names, sats, f"{count} from {kind} {label}, {span}", last)

    # -- propagation ---------------------------------------------------------

    def teme_km(
        self, start: datetime, offsets_s: np.ndarray, indices: Iterable[int] | None = None
    ) -> np.ndarray:
        """TEME positions, km, ``(n_satellites, n_times, 3)``.

        ``offsets_s`` are seconds after ``start`` (UTC). Where SGP4 reports
        an error (a decayed orbit, say) the position is NaN.
        """
        jd, fr = julian_date(start)
        offsets_s = np.asarray(offsets_s, dtype=float)
        arr = self._array if indices is None else SatrecArray([self.satrecs[i] for i in indices])
        err, r, _v = arr.sgp4(np.full(offsets_s.shape, jd), fr + offsets_s / DAY_S)
        r[err != 0] = np.nan
        return r

    def ecef_m(
        self,
        start: datetime,
        offsets_s: np.ndarray,
        dut1_s: float = 0.0,
        indices: Iterable[int] | None = None,
    ) -> np.ndarray:
        """Earth-fixed positions, m, ``(n_satellites, n_times, 3)``.

        TEME rotated by GMST 1982 at UT1 = UTC + ``dut1_s``
        (:func:`satqm.leo.frames.teme_to_ecef_m`).
        """
        jd, fr = julian_date(start)
        offsets_s = np.asarray(offsets_s, dtype=float)
        theta = gmst82_rad(jd, fr + (offsets_s + dut1_s) / DAY_S)
        return teme_to_ecef_m(self.teme_km(start, offsets_s, indices), theta)

    def chunk_times(self, n_times: int) -> int:
        """How many times to propagate at once so a chunk stays bounded."""
        return max(1, min(n_times, _CHUNK_PAIRS // len(self)))


def _satrec_epoch(sat: Satrec) -> datetime:
    days = (sat.jdsatepoch - _JD_1949_12_31) + sat.jdsatepochF
    return datetime(1949, 12, 31, tzinfo=timezone.utc) + timedelta(days=days)


def _iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
