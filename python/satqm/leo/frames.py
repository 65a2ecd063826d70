"""Time, Earth-fixed frames and look angles for the LEO generator.

Everything here is plain numpy, written out so that each step can be read
against its reference:

* **Time.** Instants are UTC :class:`datetime.datetime` values (a naive one is
  taken as UTC). SGP4 wants a Julian date split in two floats, a whole part
  ending in .5 and a day fraction, so that microseconds survive
  (:func:`julian_date`).
* **TEME to Earth-fixed.** SGP4 returns positions in the True Equator, Mean
  Equinox (TEME) frame. Rotating about z by the Greenwich Mean Sidereal Time
  of 1982 (:func:`gmst82_rad`, Vallado et al., AIAA 2006-6753, Appendix C)
  gives the pseudo-Earth-fixed frame (PEF); polar motion (at most ~15 m at
  the surface) is left out, so PEF is used as ECEF (:func:`teme_to_ecef_m`).
  GMST is a function of UT1; UT1 - UTC (``dut1_s``, |DUT1| < 0.9 s, IERS
  Bulletin A) defaults to 0, which turns the Earth by up to 0.9 s x 7.29e-5
  rad/s: about 450 m of a LEO satellite's Earth-fixed position.
* **Ground points.** Geodetic latitude, longitude and height on the WGS-84
  ellipsoid (:func:`geodetic_to_ecef_m`). SGP4's own constants are WGS-72, as
  its mean elements are defined; mixing them with WGS-84 ground points is
  the common practice (Skyfield does the same).
* **Look angles.** Elevation is the angle between the line of sight and the
  plane normal to the geodetic vertical; the slant range is the straight-line
  (geometric) distance, without light-time or refraction
  (:func:`look_angles`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np
from sgp4.api import jday

#: Speed of light in vacuum, m/s (exact, SI).
C_M_PER_S = 299_792_458.0
#: WGS-84 semi-major axis, m, and flattening.
WGS84_A_M = 6_378_137.0
WGS84_F = 1.0 / 298.257223563
#: WGS-72 equatorial radius, km, and gravitational parameter, km^3/s^2: the
#: constants SGP4 is run with (``sgp4.api.WGS72``).
WGS72_RADIUS_KM = 6378.135
WGS72_MU_KM3_PER_S2 = 398600.8
#: Seconds in a day.
DAY_S = 86400.0
#: Julian date of J2000.0 (2000-01-01 12:00 TT, used as UT1 in GMST 1982).
_JD_J2000 = 2451545.0


def as_utc(when: datetime, name: str = "start") -> datetime:
    """``when`` as an aware UTC datetime; a naive one is taken as UTC."""
    if not isinstance(when, datetime):
        raise ValueError(f"{name} must be a datetime (UTC), got {type(when).__name__}")
    if when.tzinfo is None:
        return when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc)


def julian_date(when: datetime) -> tuple[float, float]:
    """The UTC instant ``when`` as a Julian date split ``(jd, fraction)``.

    ``jd`` ends in .5 (the midnight that starts the day) and ``fraction`` is
    the part of the day elapsed, in [0, 1): the split SGP4 takes
    (``sgp4.api.jday``).
    """
    t = as_utc(when, "when")
    seconds = t.second + t.microsecond * 1e-6
    return jday(t.year, t.month, t.day, t.hour, t.minute, seconds)


def gmst82_rad(jd_ut1: float | np.ndarray, fraction_ut1: float | np.ndarray) -> np.ndarray:
    """Greenwich Mean Sidereal Time (IAU 1982), radians in [0, 2*pi).

    GMST_s = 67310.54841 + (876600 h + 8640184.812866) T + 0.093104 T^2
    - 6.2e-6 T^3, with T the Julian centuries of UT1 from J2000.0
    (AIAA 2006-6753, Appendix C; the angle SGP4's TEME frame is defined by).
    The 876600 h term is a whole number of turns per day plus the day's
    fraction, so it is added as ``jd % 1 + fraction`` to keep precision.
    """
    jd_ut1 = np.asarray(jd_ut1, dtype=float)
    fraction_ut1 = np.asarray(fraction_ut1, dtype=float)
    t = (jd_ut1 - _JD_J2000 + fraction_ut1) / 36525.0
    g_s = 67310.54841 + (8640184.812866 + (0.093104 + (-6.2e-6) * t) * t) * t
    turns = (jd_ut1 % 1.0 + fraction_ut1 + (g_s / DAY_S) % 1.0) % 1.0
    return turns * 2.0 * math.pi


def teme_to_ecef_m(r_teme_km: np.ndarray, gmst_rad: np.ndarray) -> np.ndarray:
    """Rotate TEME positions (km, ``(..., n_times, 3)``) to ECEF (m).

    ``gmst_rad`` has one angle per time (``(n_times,)``): the rotation is
    R_z(GMST), ``x' = cos(g) x + sin(g) y``, ``y' = -sin(g) x + cos(g) y``,
    ``z' = z``. Polar motion is neglected (see the module's docstring).
    """
    c = np.cos(gmst_rad)
    s = np.sin(gmst_rad)
    x = r_teme_km[..., 0]
    y = r_teme_km[..., 1]
    out = np.empty(r_teme_km.shape, dtype=float)
    out[..., 0] = (c * x + s * y) * 1000.0
    out[..., 1] = (-s * x + c * y) * 1000.0
    out[..., 2] = r_teme_km[..., 2] * 1000.0
    return out


def geodetic_to_ecef_m(lat_deg: float, lon_deg: float, alt_m: float) -> np.ndarray:
    """A WGS-84 geodetic point as ECEF coordinates, m.

    With e^2 = f (2 - f) and the prime-vertical radius
    N = a / sqrt(1 - e^2 sin^2(lat)):
    x = (N + h) cos(lat) cos(lon), y = (N + h) cos(lat) sin(lon),
    z = (N (1 - e^2) + h) sin(lat).
    """
    lat = math.radians(lat_deg)
    lon = math.radians(lon_deg)
    e2 = WGS84_F * (2.0 - WGS84_F)
    n_m = WGS84_A_M / math.sqrt(1.0 - e2 * math.sin(lat) ** 2)
    return np.array(
        [
            (n_m + alt_m) * math.cos(lat) * math.cos(lon),
            (n_m + alt_m) * math.cos(lat) * math.sin(lon),
            (n_m * (1.0 - e2) + alt_m) * math.sin(lat),
        ]
    )


def up_vector(lat_deg: float, lon_deg: float) -> np.ndarray:
    """The unit geodetic vertical (ellipsoid normal) at a point, ECEF."""
    lat = math.radians(lat_deg)
    lon = math.radians(lon_deg)
    return np.array([math.cos(lat) * math.cos(lon), math.cos(lat) * math.sin(lon), math.sin(lat)])


def _finite(value: float, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


@dataclass(frozen=True)
class GroundPoint:
    """A fixed point on the Earth: a user terminal or a gateway.

    ``lat_deg`` and ``lon_deg`` are geodetic (WGS-84), ``alt_m`` is the height
    above the ellipsoid in metres.
    """

    name: str
    lat_deg: float
    lon_deg: float
    alt_m: float = 0.0

    def __post_init__(self) -> None:
        lat = _finite(self.lat_deg, "lat_deg")
        lon = _finite(self.lon_deg, "lon_deg")
        alt = _finite(self.alt_m, "alt_m")
        if not -90.0 <= lat <= 90.0:
            raise ValueError(f"lat_deg must be in [-90, 90], got {self.lat_deg!r}")
        if not -180.0 <= lon <= 360.0:
            raise ValueError(f"lon_deg must be in [-180, 360], got {self.lon_deg!r}")
        if alt < -12_000.0:
            raise ValueError(f"alt_m must be >= -12000 (m), got {self.alt_m!r}")
        object.__setattr__(self, "lat_deg", lat)
        object.__setattr__(self, "lon_deg", lon)
        object.__setattr__(self, "alt_m", alt)

    @property
    def ecef_m(self) -> np.ndarray:
        """The point in ECEF, m."""
        return geodetic_to_ecef_m(self.lat_deg, self.lon_deg, self.alt_m)

    def __str__(self) -> str:
        return f"{self.name} ({self.lat_deg:.4f}, {self.lon_deg:.4f}, {self.alt_m:g} m)"


def look_angles(sat_ecef_m: np.ndarray, point: GroundPoint) -> tuple[np.ndarray, np.ndarray]:
    """Elevation (deg) and slant range (m) of ECEF positions seen from ``point``.

    ``sat_ecef_m`` is ``(..., 3)``; the results have its leading shape.
    Elevation is asin(rho . up / |rho|) with rho the line of sight from the
    point to the satellite and ``up`` the geodetic vertical.
    """
    rho = sat_ecef_m - point.ecef_m
    range_m = np.sqrt(np.einsum("...i,...i->...", rho, rho))
    sin_el = np.einsum("...i,i->...", rho, up_vector(point.lat_deg, point.lon_deg)) / range_m
    elevation_deg = np.degrees(np.arcsin(np.clip(sin_el, -1.0, 1.0)))
    return elevation_deg, range_m
