"""Cross-validation of satqm against other simulators.

:mod:`satqm.validation.scenarios` describes each validation scenario once, as a
Python dict, and turns it into a satqm scenario (TOML) and the ns-3 program's
arguments; :mod:`satqm.validation.compare` runs both, measures the same figures
from both and writes the report. :mod:`satqm.validation.ns3` builds and runs the
ns-3 program. ``satqm validate ns3 [--quick]`` drives it all; see
``docs/validation.md``.
"""
