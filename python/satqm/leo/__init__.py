"""LEO constellations and the bent-pipe link schedule they give a satellite link.

Propagate a Walker shell or a catalogue of element sets (TLE, OMM) with SGP4,
find the satellite that relays between a user terminal and a gateway over
time, and write the path's delay and availability as a link schedule (CSV)
for the simulator::

    from datetime import datetime, timezone
    from satqm.leo import Constellation, GroundPoint, Shell, bent_pipe

    shell = Shell(altitude_km=550, inclination_deg=53, planes=72, per_plane=22, phasing=17)
    epoch = datetime(2024, 3, 1, tzinfo=timezone.utc)
    starlink = Constellation.walker(shell, epoch)
    path = bent_pipe(starlink, GroundPoint("terminal", 47.6, -122.3),
                     GroundPoint("gateway", 46.9, -119.3), epoch, duration_s=600)
    path.write_schedule("leo.csv", rate=100e6)

This package uses numpy, pandas and sgp4 only, and nothing else of satqm.
See docs/leo.md for the frames, constants, policies and the schedule format.
"""

from satqm.leo.bentpipe import POLICIES, BentPipePath, bent_pipe
from satqm.leo.constellation import Constellation, Shell
from satqm.leo.frames import C_M_PER_S, GroundPoint
from satqm.leo.starlink import (
    StarlinkLike,
    starlink_schedule,
    starlink_statistics,
    write_starlink_schedule,
)

__all__ = [
    "C_M_PER_S",
    "POLICIES",
    "BentPipePath",
    "Constellation",
    "GroundPoint",
    "Shell",
    "StarlinkLike",
    "bent_pipe",
    "starlink_schedule",
    "starlink_statistics",
    "write_starlink_schedule",
]
