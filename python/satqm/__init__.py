"""satqm: active queue management and transport research on satellite links.

Load a scenario, run it, look at the results::

    import satqm

    res = satqm.run("scenarios/examples/dumbbell-droptail.toml", seed=2, duration=60)
    print(res.summary()["utilization_mean"])
    res.timeseries            # pandas DataFrame, one row per link per sample
    res.save("out/droptail")  # Parquet, JSON, the scenario and a plot

A bad scenario raises :class:`ConfigError` naming the key
(``topology.bottleneck.rate: must be > 0``); a run that fails raises
:class:`SimulationError`.
"""

from satqm._core import ConfigError, SimulationError, __version__
from satqm.emulation import Emulation, EmulationLate, EmulationUnavailable
from satqm.results import Results
from satqm.scenario import Scenario, load
from satqm.simulation import DropLogFull, Simulation, run
from satqm.sweep import Sweep, SweepResult, sweep

# The compiled module names its exceptions `_core.X`, which pickle cannot
# import: give them their public home so they cross process boundaries
# (multiprocessing sweeps) with their `path` and `rule` attributes.
ConfigError.__module__ = "satqm"
SimulationError.__module__ = "satqm"

__all__ = [
    "ConfigError",
    "DropLogFull",
    "Emulation",
    "EmulationLate",
    "EmulationUnavailable",
    "Results",
    "Scenario",
    "Simulation",
    "SimulationError",
    "Sweep",
    "SweepResult",
    "__version__",
    "load",
    "run",
    "sweep",
]
