"""The ns-3 reference: a dumbbell written for ns-3.44 (``dumbbell.cc``), how to
build it against the ``ns3`` PyPI wheel (:mod:`.build`) and how to run it
(:mod:`.run`). ns-3 is optional: ``pip install 'satqm[ns3]'``.

The names below are loaded on first use, so that ``python -m
satqm.validation.ns3.build`` and ``... .run`` run their modules cleanly.
"""

from __future__ import annotations

import importlib
from typing import Any

_NAMES = {
    "INSTALL_HINT": "build",
    "Ns3NotFound": "build",
    "available": "build",
    "ensure_binary": "build",
    "find_ns3": "build",
    "info": "build",
    "PARAMS": "run",
    "command_line": "run",
    "run_ns3": "run",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str) -> Any:
    mod = _NAMES.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{mod}"), name)
