"""The papers' models set beside packet-level runs: ``satqm reproduce models``.

Three comparisons, each with a figure, rows of the agreement table
(``agreement.csv``, ``agreement.md``) and a section of ``REPORT.md``; one
module each:

1. :mod:`.dumbbell`: the **fluid model vs packets on the dumbbell**
   (Misra-Gong-Towsley, :func:`satqm.models.simulate_fluid`) for PI and AVQ,
   with the AQM parameters from the library's design rules.
2. :mod:`.gateway`: **the AVQRED chapter's ODE vs the satellite gateway**
   (§8, Figs. 14-16), with ``d(t)`` and ``ω(t)`` measured in a run of the
   gateway without AQM and fitted with Fourier series.
3. :mod:`.fig21`: **Fig. 21 of the parallel-VQ paper** (queue distribution,
   Markov chain vs simulation), from :mod:`satqm.experiments._pvq_fig21`.

:mod:`.report` writes the agreement table and ``REPORT.md``; :mod:`.settings`
holds the durations and seeds; :mod:`.scenario_values` reads quantities from
scenario tables. Every packet run of parts 1 and 2 goes in one batch through
the sweep's executors (:func:`satqm.experiments._runner.run_all`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from .._runner import run_all
from . import dumbbell, fig21, gateway
from .dumbbell import (
    ALPHA_FRACTION,
    DUMBBELL,
    GAMMA,
    PI_FS,
    Q_REF,
    VQ_PACKETS,
    DumbbellDesign,
    dumbbell_aqm,
    dumbbell_data,
    dumbbell_design,
    dumbbell_scenario,
    fluid_run,
)
from .gateway import (
    GATEWAY_SET,
    default_gateway_scenarios,
    gateway_ode_parameters,
    no_aqm_scenario,
)
from .report import AGREEMENT_COLUMNS, write_report
from .scenario_values import ScenarioSource
from .settings import FULL, QUICK, Settings, tiny_settings

__all__ = [
    "AGREEMENT_COLUMNS",
    "ALPHA_FRACTION",
    "DUMBBELL",
    "FULL",
    "GAMMA",
    "GATEWAY_SET",
    "PI_FS",
    "QUICK",
    "Q_REF",
    "VQ_PACKETS",
    "DumbbellDesign",
    "Settings",
    "default_gateway_scenarios",
    "dumbbell_aqm",
    "dumbbell_data",
    "dumbbell_design",
    "dumbbell_scenario",
    "fluid_run",
    "gateway_ode_parameters",
    "no_aqm_scenario",
    "reproduce",
    "tiny_settings",
]


def reproduce(
    out: Path,
    quick: bool = False,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    *,
    settings: Settings | None = None,
    red_scenario: str | os.PathLike[str] | None = None,
    avqred_scenario: str | os.PathLike[str] | None = None,
    gateway_samples: Any = None,
) -> Path:
    """Run the three comparisons; write figures, ``agreement.csv/.md`` and
    ``REPORT.md``. Returns the path of REPORT.md.

    ``settings`` overrides :data:`QUICK` / :data:`FULL`. ``red_scenario`` and
    ``avqred_scenario`` are gateway scenario files (default: RED 4 and AVQRED
    on the packaged ``scenarios/avqred/chapter.toml``, see
    :func:`default_gateway_scenarios`). ``gateway_samples`` is a measured ``d``/``ω`` source for
    :func:`satqm.models.fit_gateway_series` (CSV path, DataFrame or fitted
    :class:`~satqm.models.GatewaySeries`); by default they are measured in a
    run of the RED scenario without its AQM.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    st = settings or (QUICK if quick else FULL)
    red_default, avqred_default = default_gateway_scenarios()
    red_path: ScenarioSource = red_scenario if red_scenario is not None else red_default
    avqred_path: ScenarioSource = avqred_scenario if avqred_scenario is not None else avqred_default
    for given in (red_scenario, avqred_scenario):
        if given is not None and not Path(given).is_file():
            raise FileNotFoundError(f"gateway scenario not found: {given}")

    # Every packet run of parts 1 and 2, in one batch.
    design = dumbbell_design()
    gw_batch, gw_runs = gateway.runs(st, red_path, avqred_path, gateway_samples is None)
    runs = dumbbell.runs(st) + gw_batch
    folders = run_all(runs, out / "runs", workers=workers, progress=progress)

    rows: list[dict[str, Any]] = []
    sections = [
        dumbbell.compare(out, st, design, folders, rows),
        gateway.compare(out, st, red_path, avqred_path, gateway_samples, folders, gw_runs, rows),
        fig21.compare(out, st.fig21_quick, rows, workers),
    ]
    return write_report(out, rows, sections, design, st, quick)
