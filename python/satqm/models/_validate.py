"""Input validation shared by the analytical models.

Every public function of :mod:`satqm.models` validates its inputs with these
helpers, so that a bad value raises :class:`ValueError` naming the offending
parameter instead of silently propagating ``nan``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "as_float_array",
    "check_finite",
    "check_positive",
    "check_nonnegative",
    "check_probability",
    "check_in_range",
    "check_int",
    "scalar_or_array",
]


def as_float_array(name: str, value: ArrayLike) -> NDArray[np.float64]:
    """Convert ``value`` to a float array, rejecting NaN.

    Parameters
    ----------
    name : str
        Parameter name used in the error message.
    value : array_like
        Scalar or array.

    Returns
    -------
    numpy.ndarray
        ``value`` as a float64 array (0-d for scalars).
    """
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a real number or an array of real numbers") from exc
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not be NaN")
    return arr


def check_finite(name: str, value: ArrayLike) -> NDArray[np.float64]:
    """Return ``value`` as a float array; raise if any element is NaN or infinite."""
    arr = as_float_array(name, value)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite, got {value!r}")
    return arr


def check_positive(name: str, value: ArrayLike, *, allow_inf: bool = False) -> NDArray[np.float64]:
    """Return ``value`` as a float array; raise unless every element is > 0."""
    arr = as_float_array(name, value) if allow_inf else check_finite(name, value)
    if (arr <= 0).any():
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return arr


def check_nonnegative(
    name: str, value: ArrayLike, *, allow_inf: bool = False
) -> NDArray[np.float64]:
    """Return ``value`` as a float array; raise unless every element is >= 0."""
    arr = as_float_array(name, value) if allow_inf else check_finite(name, value)
    if (arr < 0).any():
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return arr


def check_in_range(
    name: str,
    value: ArrayLike,
    low: float,
    high: float,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> NDArray[np.float64]:
    """Return ``value`` as a float array; raise unless it lies in the interval.

    The interval is ``[low, high]`` with either end made open by
    ``low_open`` / ``high_open``.
    """
    arr = as_float_array(name, value)
    bad_low = (arr <= low) if low_open else (arr < low)
    bad_high = (arr >= high) if high_open else (arr > high)
    if bad_low.any() or bad_high.any():
        lb = "(" if low_open else "["
        hb = ")" if high_open else "]"
        raise ValueError(f"{name} must be in {lb}{low}, {high}{hb}, got {value!r}")
    return arr


def check_probability(
    name: str, value: ArrayLike, *, allow_zero: bool = True, allow_one: bool = True
) -> NDArray[np.float64]:
    """Return ``value`` as a float array; raise unless it is a probability."""
    return check_in_range(name, value, 0.0, 1.0, low_open=not allow_zero, high_open=not allow_one)


def check_int(name: str, value: object, *, minimum: int | None = None) -> int:
    """Return ``value`` as ``int``; raise unless it is integral (and >= ``minimum``)."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    try:
        as_float = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an integer, got {value!r}") from exc
    if not np.isfinite(as_float) or as_float != int(as_float):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    out = int(as_float)
    if minimum is not None and out < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return out


def scalar_or_array(arr: NDArray[np.float64]) -> float | NDArray[np.float64]:
    """Return a Python float for 0-d arrays, the array otherwise."""
    if arr.ndim == 0:
        return float(arr)
    return arr
