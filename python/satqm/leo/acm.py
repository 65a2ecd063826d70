"""DVB-S2 adaptive coding and modulation (ACM): the capacity of a link whose
MODCOD follows its Es/N0, as a link schedule.

The MODCODs and their thresholds are those of ETSI EN 302 307-1 (DVB-S2),
Table 13: for each of the 28 MODCODs, the spectral efficiency (information
bits per transmitted symbol, normal FECFRAME of 64 800 bits, no pilots) and
the ideal Es/N0 at which it is quasi-error-free (packet error rate 1e-7 on an
AWGN channel, no implementation loss).

Selection rule: at each instant, the most efficient MODCOD whose threshold
plus ``margin_db`` is at most the Es/N0; none (the link is down) below the
lowest. With ``hysteresis_db`` the choice is sticky: a MODCOD that no longer
closes is left at once for the best one that does, but a more efficient one
is taken only when the Es/N0 reaches its threshold + margin + hysteresis.

Simplifications: the thresholds are AWGN ones (no phase noise, no amplifier
non-linearity, no implementation loss beyond what ``margin_db`` stands for);
``from_attenuation`` takes Es/N0 = clear-sky Es/N0 - rain attenuation, which
ignores the rise of the sky noise temperature with rain (it adds to the fade
of a downlink); and the MODCOD changes at the sample where the Es/N0 allows
it, with no ACM signalling delay (a real gateway learns the Es/N0 from the
terminal's reports, about one round-trip time late).

``rain_fade`` makes a *synthetic* rain attenuation time series (Maseng and
Bakken's lognormal first-order model) for users without measured traces.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, Union

import numpy as np
import pandas as pd

#: Bits of a normal FECFRAME (the LDPC codeword).
NORMAL_FECFRAME_BITS = 64_800
#: Bits of the BBHEADER, taken from each BBFRAME's K_BCH bits (user bits: K_BCH - 80).
BBHEADER_BITS = 80
#: Symbols of the PLHEADER (one slot), pi/2-BPSK, before each frame.
PLHEADER_SYMBOLS = 90
#: Symbols of a slot; a frame's payload is a whole number of slots.
SLOT_SYMBOLS = 90
#: Symbols of a pilot block, inserted after every 16 slots when pilots are on.
PILOT_BLOCK_SYMBOLS = 36
SLOTS_PER_PILOT_BLOCK = 16

_BITS_PER_SYMBOL = {"QPSK": 2, "8PSK": 3, "16APSK": 4, "32APSK": 5}

#: K_BCH (the BCH code's uncoded block, bits) of a normal FECFRAME by code
#: rate: ETSI EN 302 307-1, Table 5a.
K_BCH_NORMAL = {
    "1/4": 16008,
    "1/3": 21408,
    "2/5": 25728,
    "1/2": 32208,
    "3/5": 38688,
    "2/3": 43040,
    "3/4": 48408,
    "4/5": 51648,
    "5/6": 53840,
    "8/9": 57472,
    "9/10": 58192,
}


class ModCod(NamedTuple):
    """One DVB-S2 MODCOD, a row of ETSI EN 302 307-1 Table 13."""

    #: ``"QPSK 1/4"`` ... ``"32APSK 9/10"``.
    name: str
    #: ``"QPSK"``, ``"8PSK"``, ``"16APSK"`` or ``"32APSK"``.
    modulation: str
    #: The LDPC code rate, ``"1/4"`` ... ``"9/10"``.
    code_rate: str
    #: Spectral efficiency as printed in Table 13 (bit/symbol, normal
    #: FECFRAME, no pilots, 6 decimals).
    table_efficiency: float
    #: Ideal Es/N0 for quasi-error-free operation (PER 1e-7, AWGN), dB.
    esn0_db: float

    @property
    def bits_per_symbol(self) -> int:
        """Bits a symbol of the modulation carries (2 to 5)."""
        return _BITS_PER_SYMBOL[self.modulation]

    @property
    def k_bch_bits(self) -> int:
        """K_BCH of a normal FECFRAME (Table 5a): BBHEADER + data field."""
        return K_BCH_NORMAL[self.code_rate]

    @property
    def user_bits(self) -> int:
        """User bits a frame carries: K_BCH less the 80-bit BBHEADER."""
        return self.k_bch_bits - BBHEADER_BITS

    def plframe_symbols(self, pilots: bool = False) -> int:
        """Symbols of one PLFRAME: PLHEADER, the FECFRAME's slots, pilot blocks.

        The FECFRAME fills ``S = 64800 / bits_per_symbol / 90`` slots; with
        pilots, a 36-symbol block follows every 16 slots except at the
        frame's end: ``(S - 1) // 16`` blocks (22, 14, 11, 8 for QPSK, 8PSK,
        16APSK, 32APSK).
        """
        data = NORMAL_FECFRAME_BITS // self.bits_per_symbol
        blocks = (data // SLOT_SYMBOLS - 1) // SLOTS_PER_PILOT_BLOCK if pilots else 0
        return PLHEADER_SYMBOLS + data + PILOT_BLOCK_SYMBOLS * blocks

    def efficiency(self, pilots: bool = False) -> float:
        """Information bits per symbol: ``user_bits / plframe_symbols(pilots)``.

        Without pilots this reproduces the table's efficiency to its six
        decimals (e.g. QPSK 1/4: (16008 - 80) / (32400 + 90) = 0.4902431...).
        """
        return self.user_bits / self.plframe_symbols(pilots)


def _m(name: str, efficiency: float, esn0_db: float) -> ModCod:
    modulation, rate = name.split(" ")
    return ModCod(name, modulation, rate, efficiency, esn0_db)


#: The 28 MODCODs of ETSI EN 302 307-1 (DVB-S2) Table 13, in the table's
#: order: spectral efficiency (normal FECFRAME, no pilots) and ideal Es/N0
#: (dB) for PER 1e-7 on AWGN.
MODCODS: tuple[ModCod, ...] = (
    _m("QPSK 1/4", 0.490243, -2.35),
    _m("QPSK 1/3", 0.656448, -1.24),
    _m("QPSK 2/5", 0.789412, -0.30),
    _m("QPSK 1/2", 0.988858, 1.00),
    _m("QPSK 3/5", 1.188304, 2.23),
    _m("QPSK 2/3", 1.322253, 3.10),
    _m("QPSK 3/4", 1.487473, 4.03),
    _m("QPSK 4/5", 1.587196, 4.68),
    _m("QPSK 5/6", 1.654663, 5.18),
    _m("QPSK 8/9", 1.766451, 6.20),
    _m("QPSK 9/10", 1.788612, 6.42),
    _m("8PSK 3/5", 1.779991, 5.50),
    _m("8PSK 2/3", 1.980636, 6.62),
    _m("8PSK 3/4", 2.228124, 7.91),
    _m("8PSK 5/6", 2.478562, 9.35),
    _m("8PSK 8/9", 2.646012, 10.69),
    _m("8PSK 9/10", 2.679207, 10.98),
    _m("16APSK 2/3", 2.637201, 8.97),
    _m("16APSK 3/4", 2.966728, 10.21),
    _m("16APSK 4/5", 3.165623, 11.03),
    _m("16APSK 5/6", 3.300184, 11.61),
    _m("16APSK 8/9", 3.523143, 12.89),
    _m("16APSK 9/10", 3.567342, 13.13),
    _m("32APSK 3/4", 3.703295, 12.73),
    _m("32APSK 4/5", 3.951571, 13.64),
    _m("32APSK 5/6", 4.119540, 14.28),
    _m("32APSK 8/9", 4.397854, 15.69),
    _m("32APSK 9/10", 4.453027, 16.05),
)

_BY_NAME = {m.name: i for i, m in enumerate(MODCODS)}

ModCodLike = Union[str, ModCod]


def _key(name: str) -> str:
    """``"qpsk_1/2"``, ``"QPSK-1/2"``, ``" QPSK 1/2 "`` -> ``"QPSK 1/2"``."""
    return " ".join(name.replace("_", " ").replace("-", " ").split()).upper()


def modcod(name: str) -> ModCod:
    """The MODCOD named ``name`` (``"8PSK 3/5"``; case, ``_`` and ``-`` are free)."""
    return MODCODS[_index_of(name, "name")]


def _index_of(item: ModCodLike, param: str) -> int:
    if isinstance(item, ModCod):
        if item in MODCODS:
            return MODCODS.index(item)
        raise ValueError(f"{param}: {item.name!r} is not a row of the DVB-S2 table")
    if not isinstance(item, str):
        raise ValueError(f"{param}: expected a MODCOD name, got {item!r}")
    i = _BY_NAME.get(_key(item))
    if i is None:
        raise ValueError(
            f"{param}: unknown MODCOD {item!r} (known: {', '.join(m.name for m in MODCODS)})"
        )
    return i


def _indices(modcods: Iterable[ModCodLike] | None) -> np.ndarray:
    """The table rows (indices into ``MODCODS``) a selection may use."""
    if modcods is None:
        return np.arange(len(MODCODS))
    if isinstance(modcods, (str, ModCod)):
        modcods = [modcods]
    idx = sorted({_index_of(m, "modcods") for m in modcods})
    if not idx:
        raise ValueError("modcods must name at least one MODCOD")
    return np.array(idx)


def _finite(name: str, value: float) -> float:
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def _symbol_rate(symbol_rate_baud: float) -> float:
    v = float(symbol_rate_baud)
    if not math.isfinite(v) or v <= 0.0:
        raise ValueError(f"symbol_rate_baud must be > 0, got {symbol_rate_baud!r}")
    return v


def _hysteresis(hysteresis_db: float) -> float:
    v = float(hysteresis_db)
    if not math.isfinite(v) or v < 0.0:
        raise ValueError(f"hysteresis_db must be >= 0, got {hysteresis_db!r}")
    return v


def _finite_array(name: str, values) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    bad = np.flatnonzero(~np.isfinite(a.ravel()))
    if bad.size:
        k = bad[0]
        where = f"{name}[{k}]" if a.ndim == 1 else f"{name} (flat index {k})"
        raise ValueError(f"{name} must be finite: {where} is {float(a.ravel()[k])!r}")
    return a


def _best(esn0_db: np.ndarray, offset_db: float, cand: np.ndarray, pilots: bool) -> np.ndarray:
    """Per element, the most efficient candidate (index into ``MODCODS``)
    with ``threshold + offset_db <= esn0_db``; -1 where none is.

    Sorted by threshold, the best MODCOD closing at a given Es/N0 is the
    running maximum of efficiency over the thresholds below it."""
    thr = np.array([MODCODS[i].esn0_db for i in cand])
    eff = np.array([MODCODS[i].efficiency(pilots) for i in cand])
    order = np.argsort(thr, kind="stable")
    thr, eff, ids = thr[order], eff[order], cand[order]
    best = np.empty(len(ids), dtype=np.int64)
    top = 0
    for k in range(len(ids)):
        if eff[k] > eff[top]:
            top = k
        best[k] = ids[top]
    k = np.searchsorted(thr + offset_db, esn0_db, side="right") - 1
    return np.where(k >= 0, best[np.maximum(k, 0)], -1)


def select_modcod(
    esn0_db,
    margin_db: float = 0.0,
    pilots: bool = False,
    modcods: Iterable[ModCodLike] | None = None,
    hysteresis_db: float = 0.0,
) -> np.ndarray:
    """The MODCOD in force at each Es/N0 sample: indices into ``MODCODS``, -1
    where none closes the link.

    Without hysteresis, each element independently: the most efficient of
    ``modcods`` (default: all 28) whose ``esn0_db`` threshold + ``margin_db``
    is at most the sample (``pilots`` decides the efficiencies compared).
    With ``hysteresis_db > 0``, ``esn0_db`` is a 1-D series in time and the
    choice has a state: the MODCOD in force is kept while its threshold +
    margin is still met; when it is not, the best MODCOD that closes is
    taken at once (switch down); a more efficient MODCOD is taken only when
    the Es/N0 reaches *its* threshold + margin + hysteresis (switch up). The
    series starts as from a down link, so the first sample, and the first
    after an outage, is a switch up; a constant Es/N0 thus gives one MODCOD
    whatever came before it.
    """
    margin = _finite("margin_db", margin_db)
    hyst = _hysteresis(hysteresis_db)
    esn0 = _finite_array("esn0_db", esn0_db)
    cand = _indices(modcods)
    plain = _best(esn0, margin, cand, pilots)
    if hyst == 0.0:
        return plain
    if esn0.ndim != 1:
        raise ValueError(
            f"esn0_db must be a 1-D series in time with hysteresis_db > 0, got shape {esn0.shape}"
        )
    upward = _best(esn0, margin + hyst, cand, pilots)
    thr = {i: MODCODS[i].esn0_db + margin for i in cand}
    eff = {i: MODCODS[i].efficiency(pilots) for i in cand}
    eff[-1] = 0.0
    out = np.empty(len(esn0), dtype=np.int64)
    state = -1
    for k, (x, down, up) in enumerate(zip(esn0.tolist(), plain.tolist(), upward.tolist())):
        if state >= 0 and thr[state] > x:
            state = down  # the MODCOD in force no longer closes: down at once
        elif eff[up] > eff[state]:
            state = up
        out[k] = state
    return out


def _efficiencies(pilots: bool) -> np.ndarray:
    """Efficiency by table index, with a trailing 0 for index -1 (link down)."""
    return np.array([m.efficiency(pilots) for m in MODCODS] + [0.0])


def acm_rate(
    esn0_db,
    symbol_rate_baud: float,
    margin_db: float = 0.0,
    pilots: bool = False,
    modcods: Iterable[ModCodLike] | None = None,
    hysteresis_db: float = 0.0,
):
    """The information bit rate (bit/s) ACM gives at each Es/N0 sample.

    ``efficiency(pilots) * symbol_rate_baud`` of the MODCOD ``select_modcod``
    picks; 0.0 where no MODCOD closes the link (it is down). A scalar
    ``esn0_db`` gives a float, an array an array of its shape.
    """
    baud = _symbol_rate(symbol_rate_baud)
    idx = select_modcod(esn0_db, margin_db, pilots, modcods, hysteresis_db)
    rate = _efficiencies(pilots)[idx] * baud
    return float(rate) if np.ndim(esn0_db) == 0 else rate


class FadeTrace(NamedTuple):
    """A fade time series: sample times and one value per sample."""

    #: Seconds, increasing strictly.
    times_s: np.ndarray
    #: Attenuation (dB) or Es/N0 (dB), as ``kind`` says.
    values: np.ndarray
    #: ``"attenuation_db"`` or ``"esn0_db"``.
    kind: str
    #: Where it came from (a file name, or the generator and its parameters).
    source: str


FADE_KINDS = ("attenuation_db", "esn0_db")


def read_fade_trace(path: str | Path, kind: str | None = None) -> FadeTrace:
    """Read a two-column CSV fade trace: time (s), then attenuation or Es/N0 (dB).

    ``#`` lines and blank lines are skipped. The first other line may be a
    header: ``time_s`` (or ``time``), then ``attenuation_db`` or ``esn0_db``,
    which sets ``kind``; without a header, ``kind`` must be given. Times must
    be finite, >= 0 and increase strictly. Errors name the file and line.
    """
    path = Path(path)
    if kind is not None and kind not in FADE_KINDS:
        raise ValueError(f"kind must be one of {FADE_KINDS}, got {kind!r}")
    times: list[float] = []
    values: list[float] = []
    seen_data = False
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != 2:
            raise ValueError(f"{path.name} line {n}: expected 2 cells, got {len(cells)}")
        if not seen_data and not times and _is_header(cells):
            if cells[0] not in ("time_s", "time"):
                raise ValueError(
                    f"{path.name} line {n}: the first column must be time_s, got {cells[0]!r}"
                )
            if cells[1] not in FADE_KINDS:
                raise ValueError(
                    f"{path.name} line {n}: the second column must be attenuation_db or "
                    f"esn0_db, got {cells[1]!r}"
                )
            if kind is not None and kind != cells[1]:
                raise ValueError(
                    f"{path.name} line {n}: the header says {cells[1]}, kind says {kind}"
                )
            kind = cells[1]
            seen_data = True
            continue
        seen_data = True
        try:
            t, v = float(cells[0]), float(cells[1])
        except ValueError:
            raise ValueError(f"{path.name} line {n}: {line!r} is not two numbers") from None
        if not (math.isfinite(t) and math.isfinite(v)):
            raise ValueError(f"{path.name} line {n}: {line!r} is not two finite numbers")
        if t < 0.0:
            raise ValueError(f"{path.name} line {n}: time {t} s is negative")
        if times and t <= times[-1]:
            raise ValueError(
                f"{path.name} line {n}: time {t} s does not increase "
                f"(the row before is at {times[-1]} s)"
            )
        times.append(t)
        values.append(v)
    if kind is None:
        raise ValueError(
            f"{path.name}: has no header (time_s,attenuation_db or time_s,esn0_db); "
            "give kind= to say what the second column is"
        )
    if not times:
        raise ValueError(f"{path.name}: has no rows")
    return FadeTrace(np.array(times), np.array(values), kind, path.name)


def _is_header(cells: Sequence[str]) -> bool:
    try:
        float(cells[0])
    except ValueError:
        return True
    return False


#: At most this many samples in a synthetic fade.
MAX_SAMPLES = 10_000_000


def rain_fade(
    duration_s: float,
    step_s: float,
    median_db: float,
    sigma_ln: float,
    beta_per_s: float = 2e-4,
    seed: int = 0,
) -> FadeTrace:
    """A **synthetic** rain attenuation time series (dB), Maseng-Bakken style.

    T. Maseng and P. M. Bakken, "A stochastic dynamic model of rain
    attenuation", IEEE Trans. Commun. 29(5), 1981: the attenuation is
    lognormal, ``A(t) = median_db * exp(sigma_ln * X(t))``, with ``X`` a
    stationary Ornstein-Uhlenbeck process of unit variance,
    ``dX = -beta X dt + sqrt(2 beta) dW``. So ``ln A`` has mean
    ``ln(median_db)`` and standard deviation ``sigma_ln`` at every instant,
    and its autocorrelation is ``exp(-beta_per_s * lag)``. ``beta_per_s``
    defaults to 2e-4 /s, the value ITU-R P.1853 takes.

    Sampled at ``0, step_s, ...`` up to ``duration_s`` (inclusive when a step
    lands on it) by the exact recursion ``X[k+1] = a X[k] + sqrt(1 - a^2) N``,
    ``a = exp(-beta step)``, from ``X[0] ~ N(0, 1)``, with
    ``numpy.random.default_rng(seed)``: the same arguments give the same
    series (with one numpy version; numpy does not promise a Generator's
    stream across versions).

    This is attenuation *while it rains*: it is never 0, and the dry spells
    ITU-R P.1853 makes by subtracting an offset are not modelled.
    """
    duration = _finite("duration_s", duration_s)
    step = _finite("step_s", step_s)
    if duration < 0.0:
        raise ValueError(f"duration_s must be >= 0, got {duration_s!r}")
    if step <= 0.0:
        raise ValueError(f"step_s must be > 0, got {step_s!r}")
    median = _finite("median_db", median_db)
    if median <= 0.0:
        raise ValueError(f"median_db must be > 0, got {median_db!r}")
    sigma = _finite("sigma_ln", sigma_ln)
    if sigma < 0.0:
        raise ValueError(f"sigma_ln must be >= 0, got {sigma_ln!r}")
    beta = _finite("beta_per_s", beta_per_s)
    if beta <= 0.0:
        raise ValueError(f"beta_per_s must be > 0, got {beta_per_s!r}")
    n = math.floor(duration / step * (1 + 1e-12)) + 1
    if n > MAX_SAMPLES:
        raise ValueError(f"step_s is too small for duration_s: more than {MAX_SAMPLES} samples")
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal(n).tolist()
    a = math.exp(-beta * step)
    b = math.sqrt(-math.expm1(-2.0 * beta * step))
    x = np.empty(n)
    state = noise[0]
    x[0] = state
    for k in range(1, n):
        state = a * state + b * noise[k]
        x[k] = state
    times = np.arange(n) * step
    source = (
        f"synthetic rain fade (Maseng-Bakken lognormal: median {median:g} dB, "
        f"sigma_ln {sigma:g}, beta {beta:g} /s, step {step:g} s, seed {seed})"
    )
    return FadeTrace(times, median * np.exp(sigma * x), "attenuation_db", source)


def _times(times_s, n: int | None = None) -> np.ndarray:
    t = _finite_array("times_s", times_s)
    if t.ndim != 1 or t.size == 0:
        raise ValueError(f"times_s must be a non-empty 1-D series, got shape {t.shape}")
    if n is not None and t.size != n:
        raise ValueError(f"times_s has {t.size} samples, the values {n}")
    if t[0] < 0.0:
        raise ValueError(f"times_s must be >= 0 (s from the run's start): times_s[0] is {t[0]}")
    back = np.flatnonzero(np.diff(t) <= 0.0)
    if back.size:
        k = back[0] + 1
        raise ValueError(
            f"times_s must increase strictly: times_s[{k}] = {t[k]} after "
            f"times_s[{k - 1}] = {t[k - 1]}"
        )
    return t


def _fmt_time(t: float) -> str:
    return format(round(t, 9), ".15g")


@dataclass
class AcmSchedule:
    """The MODCOD and capacity of an ACM link over time, and its link schedule.

    ``table`` has one row per sample: ``time`` (s), ``esn0_db``, ``modcod``
    (its name, None when down), ``efficiency`` (bit/symbol, 0 when down),
    ``rate_bps`` (0 when down) and ``up`` (1/0); ``from_attenuation`` adds
    ``attenuation_db``. Each sample holds until the next (steps).
    """

    table: pd.DataFrame
    symbol_rate_baud: float
    margin_db: float
    pilots: bool
    hysteresis_db: float
    modcods: tuple[str, ...]
    source: str | None = None
    #: ``clear_sky_esn0_db`` of ``from_attenuation``, else None.
    clear_sky_esn0_db: float | None = field(default=None)

    @classmethod
    def from_esn0(
        cls,
        times_s,
        esn0_db,
        symbol_rate_baud: float,
        margin_db: float = 0.0,
        pilots: bool = False,
        hysteresis_db: float = 0.0,
        modcods: Iterable[ModCodLike] | None = None,
        source: str | None = None,
    ) -> AcmSchedule:
        """The schedule of an Es/N0 series (dB) sampled at ``times_s`` (s, >= 0,
        increasing strictly), by ``select_modcod``'s rule."""
        esn0 = _finite_array("esn0_db", esn0_db)
        if esn0.ndim != 1:
            raise ValueError(f"esn0_db must be a 1-D series, got shape {esn0.shape}")
        t = _times(times_s, esn0.size)
        baud = _symbol_rate(symbol_rate_baud)
        cand = _indices(modcods)
        idx = select_modcod(esn0, margin_db, pilots, modcods, hysteresis_db)
        eff = _efficiencies(pilots)[idx]
        names = np.array([m.name for m in MODCODS] + [None], dtype=object)[idx]
        table = pd.DataFrame(
            {
                "time": t,
                "esn0_db": esn0,
                "modcod": pd.Series(names, dtype=object),
                "efficiency": eff,
                "rate_bps": eff * baud,
                "up": (idx >= 0).astype(np.int64),
            }
        )
        return cls(
            table,
            baud,
            float(margin_db),
            bool(pilots),
            float(hysteresis_db),
            tuple(MODCODS[i].name for i in cand),
            source,
        )

    @classmethod
    def from_attenuation(
        cls,
        times_s,
        attenuation_db,
        clear_sky_esn0_db: float,
        symbol_rate_baud: float,
        margin_db: float = 0.0,
        pilots: bool = False,
        hysteresis_db: float = 0.0,
        modcods: Iterable[ModCodLike] | None = None,
        source: str | None = None,
    ) -> AcmSchedule:
        """The schedule of a rain attenuation series (dB): Es/N0 is
        ``clear_sky_esn0_db - attenuation_db``.

        A simplification: rain also raises the sky noise temperature seen by
        a receiving ground antenna (up to about 10 log10 of the system noise
        temperature's relative rise), which this ignores, so a downlink's
        Es/N0 in rain is somewhat optimistic here; give a Es/N0 series to
        ``from_esn0`` to account for it.
        """
        clear = _finite("clear_sky_esn0_db", clear_sky_esn0_db)
        att = _finite_array("attenuation_db", attenuation_db)
        if att.ndim != 1:
            raise ValueError(f"attenuation_db must be a 1-D series, got shape {att.shape}")
        sched = cls.from_esn0(
            times_s,
            clear - att,
            symbol_rate_baud,
            margin_db,
            pilots,
            hysteresis_db,
            modcods,
            source,
        )
        sched.table.insert(1, "attenuation_db", att)
        sched.clear_sky_esn0_db = clear
        return sched

    def summary(self) -> dict[str, float | int]:
        """Time-weighted over ``[first time, last time]`` (each sample holding
        until the next): ``availability`` (fraction up), ``mean_rate_bps``
        (0 while down), ``modcod_changes`` (including to and from down),
        ``outages`` and the ``min_rate_bps``/``max_rate_bps`` while up."""
        tab = self.table
        t = tab["time"].to_numpy()
        hold = np.diff(t)
        span = t[-1] - t[0]
        up = tab["up"].to_numpy()
        rate = tab["rate_bps"].to_numpy()
        names = tab["modcod"].to_numpy()
        changes = int(sum(a != b for a, b in zip(names[:-1], names[1:])))
        outages = int(np.sum((up[1:] == 0) & (up[:-1] == 1)) + (up[0] == 0))
        if span > 0:
            availability = float(np.sum(hold * up[:-1]) / span)
            mean_rate = float(np.sum(hold * rate[:-1]) / span)
        else:
            availability, mean_rate = float(up[0]), float(rate[0])
        served = rate[up == 1]
        return {
            "availability": availability,
            "mean_rate_bps": mean_rate,
            "modcod_changes": changes,
            "outages": outages,
            "min_rate_bps": float(served.min()) if served.size else 0.0,
            "max_rate_bps": float(served.max()) if served.size else 0.0,
        }

    def schedule_rows(self) -> list[tuple[float, int | None, int]]:
        """The schedule as ``(time_s, rate_bps or None, up)`` rows: the first
        sample, then only the samples where the MODCOD (or up) changes. The
        rate is whole bit/s (the simulator rounds to them), None while down."""
        tab = self.table
        rows: list[tuple[float, int | None, int]] = []
        last = object()
        for t, name, rate, up in zip(
            tab["time"].tolist(), tab["modcod"].tolist(), tab["rate_bps"].tolist(), tab["up"]
        ):
            if name == last:
                continue
            last = name
            if up and round(rate) < 1:
                raise ValueError(f"rate {rate} bit/s at {t} s is below 1 bit/s")
            rows.append((float(t), round(rate) if up else None, int(up)))
        return rows

    def header_lines(self) -> list[str]:
        """The ``#`` comment lines that open the schedule file."""
        pilots = "on" if self.pilots else "off"
        used = (
            f"all {len(MODCODS)}" if len(self.modcods) == len(MODCODS) else ", ".join(self.modcods)
        )
        lines = [
            "# link schedule: DVB-S2 ACM capacity (satqm.leo.acm)",
            "# MODCODs: ETSI EN 302 307-1 Table 13 (ideal Es/N0, PER 1e-7, AWGN), "
            f"normal FECFRAME, pilots {pilots}; {used}",
            f"# symbol rate {self.symbol_rate_baud:.12g} baud; margin {self.margin_db:g} dB; "
            f"hysteresis {self.hysteresis_db:g} dB (down at once, up at threshold + margin "
            "+ hysteresis)",
        ]
        if self.clear_sky_esn0_db is not None:
            lines.append(
                f"# Es/N0 = clear sky {self.clear_sky_esn0_db:g} dB - rain attenuation "
                "(sky noise rise ignored)"
            )
        if self.source:
            lines.append(f"# source: {self.source}")
        lines += [
            "# rate: information bit/s of the MODCOD in force; up: 0 when no MODCOD closes "
            "(rate left unchanged)",
            '# interpolate = "step"; one row per change',
        ]
        return lines

    def write_schedule(self, path: str | Path, delay_s: float | None = None) -> Path:
        """Write the schedule (CSV) for ``interpolate = "step"`` and return its path.

        Columns ``time,rate,up`` (and ``delay``, the same on every row, in s,
        when given): a row at the first sample and at every change of
        MODCOD; ``up`` is 0 while no MODCOD closes the link, with the rate
        cell empty (unchanged). Times are s from the run's start.
        """
        if delay_s is not None:
            delay_s = float(delay_s)
            if not math.isfinite(delay_s) or delay_s < 0.0:
                raise ValueError(f"delay_s must be >= 0 (s), got {delay_s!r}")
        path = Path(path)
        cols = ["time", "rate", "up"] + (["delay"] if delay_s is not None else [])
        lines = [*self.header_lines(), ",".join(cols)]
        for t, rate, up in self.schedule_rows():
            cells = [_fmt_time(t), "" if rate is None else str(rate), str(up)]
            if delay_s is not None:
                cells.append(format(delay_s, ".12g"))
            lines.append(",".join(cells))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path
