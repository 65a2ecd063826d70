"""Paper reproductions: one module per paper, each with ``reproduce(out, quick=...)``.

``satqm reproduce NAME --out DIR`` runs one; ``satqm reproduce --list`` lists
them. Every reproduction writes its runs, tables beside the paper's numbers,
figures, and a ``REPORT.md`` that says which of the paper's claims hold here.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from satqm.experiments._runner import RunFailed

__all__ = ["REPRODUCTIONS", "RunFailed", "get"]

#: name -> (module, one-line description)
REPRODUCTIONS: dict[str, tuple[str, str]] = {
    "atsp": (
        "satqm.experiments.atsp",
        "Muhammad, Kasmis & De Cola (DLR): ATSP, the rate-based satellite transport with "
        "PI marking; fairness, cross traffic, against TCP Hybla (Section IV, Figs. 2-3)",
    ),
    "avq2001": (
        "satqm.experiments.avq2001",
        "Kunniyur & Srikant, SIGCOMM 2001: AVQ Experiment 1 (Table 1, Figs. 1-2) "
        "and the comparison with RED, REM, PI and GKVQ, marking and dropping",
    ),
    "avqred": (
        "satqm.experiments.avqred",
        "Byun & Baras: AVQRED in the IP-over-satellite gateway with a split-TCP PEP; "
        "RED 1-4, AVQ, AVQRED (Tables 2-4), queue traces, drop clustering, synchronization",
    ),
    "l4s": (
        "satqm.experiments.l4s",
        "Beyond the papers: L4S behind DualPI2 (RFC 9332) on terrestrial and GEO paths; "
        "TCP Prague and DCTCP against CUBIC and Reno, beside PIE and FQ-CoDel",
    ),
    "leo": (
        "satqm.experiments.leo",
        "Beyond the papers: the papers' AQMs and TCP (NewReno, SACK, Hybla, CUBIC, BBR) "
        "on a Starlink-like LEO path whose capacity and delay change every 15 s",
    ),
    "models": (
        "satqm.experiments.models",
        "The papers' models beside packet runs: MGT fluid vs PI and AVQ on the dumbbell, "
        "the AVQRED chapter's ODE vs the gateway (Figs. 14-16), parallel-VQ Fig. 21",
    ),
    "pvq2003": (
        "satqm.experiments.pvq2003",
        "Jou, Tan, Baras, CSHCN TR 2003-18: parallel virtual queues (RED+Tail) vs "
        "Adaptive RED and drop-tail, fixed and dynamic thresholds (Tables III-IV, Figs. 1, 4, 12)",
    ),
}


def get(name: str) -> ModuleType:
    """The module of reproduction ``name``; KeyError lists the known ones."""
    if name not in REPRODUCTIONS:
        known = ", ".join(sorted(REPRODUCTIONS))
        raise KeyError(f"unknown reproduction {name!r} (known: {known})")
    return importlib.import_module(REPRODUCTIONS[name][0])
