"""Durations and seeds of the models reproduction (``--quick``, full, tests)."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Settings:
    """Durations (s) and seeds of one reproduction."""

    dumbbell_duration: float
    dumbbell_warmup: float
    dumbbell_seeds: tuple[int, ...]
    gateway_duration: float
    gateway_warmup: float
    gateway_fit_points: int
    gateway_seed: int = 1
    #: ``quick`` argument of the parallel-VQ Fig. 21 function.
    fig21_quick: bool = True

    def __post_init__(self) -> None:
        if not 0 <= self.dumbbell_warmup < self.dumbbell_duration:
            raise ValueError("dumbbell_warmup must be in [0, dumbbell_duration)")
        if not 0 <= self.gateway_warmup < self.gateway_duration:
            raise ValueError("gateway_warmup must be in [0, gateway_duration)")
        if not self.dumbbell_seeds:
            raise ValueError("dumbbell_seeds must not be empty")


#: ``--quick``: one seed; the gateway for 300 s (its 400 connections are all
#: open by 190 s) with the fit over 50 s from 200 s.
QUICK = Settings(150.0, 50.0, (1,), 300.0, 200.0, 500, fig21_quick=True)
#: Full: three seeds; the gateway for 20 minutes as in the chapter.
FULL = Settings(300.0, 50.0, (1, 2, 3), 1400.0, 200.0, 500, fig21_quick=False)


def tiny_settings() -> Settings:
    """Very short runs, for tests."""
    return replace(
        QUICK,
        dumbbell_duration=20.0,
        dumbbell_warmup=5.0,
        gateway_duration=30.0,
        gateway_warmup=10.0,
        gateway_fit_points=100,
    )
