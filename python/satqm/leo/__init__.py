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

``satqm.leo.acm`` gives the other side of a satellite link's capacity: the
DVB-S2 MODCOD that adaptive coding and modulation picks as the Es/N0 fades,
and the bit rate it carries, as a link schedule::

    from satqm.leo import AcmSchedule, rain_fade

    fade = rain_fade(duration_s=600, step_s=1, median_db=2.0, sigma_ln=1.0, seed=7)
    acm = AcmSchedule.from_attenuation(fade.times_s, fade.values, clear_sky_esn0_db=12.0,
                                       symbol_rate_baud=30e6, margin_db=1.0,
                                       hysteresis_db=0.5, source=fade.source)
    acm.write_schedule("geo-acm.csv", delay_s=0.26)

This package uses numpy, pandas and sgp4 only, and nothing else of satqm.
See docs/leo.md for the frames, constants, policies and the schedule format.
"""

from satqm.leo.acm import (
    MODCODS,
    AcmSchedule,
    FadeTrace,
    ModCod,
    acm_rate,
    modcod,
    rain_fade,
    read_fade_trace,
    select_modcod,
)
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
    "MODCODS",
    "AcmSchedule",
    "FadeTrace",
    "ModCod",
    "acm_rate",
    "modcod",
    "rain_fade",
    "read_fade_trace",
    "select_modcod",
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
