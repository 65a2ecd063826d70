"""Parameter sweeps: a base scenario, axes of values, many runs, one table.

::

    from satqm.sweep import sweep

    sw = sweep(
        "scenarios/examples/dumbbell-droptail.toml",
        grid={"topology.bottleneck.buffer": [100, 400, 800], "tcp.recovery": ["newreno", "sack"]},
        fixed={"simulation.duration": "30 s"},
        seeds=range(10),
        out="sweeps/buffers",
    )
    sw.aggregate()                                  # mean, std, n, ci95 per metric
    print(sw.table("utilization_mean"))             # Markdown
    sw.plot("queue_mean_packets", x="topology.bottleneck.buffer", hue="tcp.recovery")

A sweep is the cross product of its explicit ``runs`` (each a dict of axis
values), its ``grid`` axes and its ``seeds``, applied on top of the base
scenario with the ``fixed`` values. Axis keys are dotted scenario paths as in
the TOML: ``"topology.bottleneck.buffer"``, ``"aqm[0].max_p"``,
``"traffic[0].tcp.mss"``. Every run's scenario is written out and validated
before anything runs: a key that does not exist or a value of the wrong type
raises :class:`satqm.ConfigError` naming the key.

Each run is stored in its own folder named by a hash of (scenario, seed,
satqm version), written atomically; running the same sweep into the same
folder again does only the runs that are missing or failed. The executor is a
local process pool by default, or a Dask cluster (``scheduler=``,
``scheduler_file=`` or ``client=``); the files are the same whichever ran
them. See ``docs/sweeps.md``.

The package, one module per job: ``spec`` (:class:`Sweep`, the plan, and
:func:`sweep`), ``axes`` and ``keys`` (the arguments checked; key paths into a
scenario), ``canonical_toml`` (the scenario text each run gets, which names
its folder), ``store`` (the folder on disk, and :func:`run_one`), ``executors``
(this process, a local process pool, Dask), ``progress``, ``aggregate``
(:class:`SweepResult`: manifest, mean and confidence interval, tables, plots)
and ``cli`` (``satqm sweep``).
"""

from satqm.sweep.aggregate import SweepResult, load
from satqm.sweep.spec import Sweep, sweep
from satqm.sweep.store import SweepBusy, run_one

__all__ = [
    "Sweep",
    "SweepBusy",
    "SweepResult",
    "load",
    "run_one",
    "sweep",
]
