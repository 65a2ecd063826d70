"""LEO constellations: SGP4 propagation, Earth-fixed frames and ground look angles.

Propagate a Walker shell or a catalogue of element sets (TLE, OMM) with SGP4
and look at the satellites from fixed ground points::

    from datetime import datetime, timezone
    from satqm.leo import Constellation, Shell

    shell = Shell(altitude_km=550, inclination_deg=53, planes=72, per_plane=22, phasing=17)
    starlink = Constellation.walker(shell, datetime(2024, 3, 1, tzinfo=timezone.utc))

This package uses numpy, pandas and sgp4 only, and nothing else of satqm.
See docs/leo.md for the frames, constants, policies and the schedule format.
"""

from satqm.leo.constellation import Constellation, Shell
from satqm.leo.frames import C_M_PER_S, GroundPoint

__all__ = [
    "C_M_PER_S",
    "Constellation",
    "GroundPoint",
    "Shell",
]
