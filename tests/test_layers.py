"""The package's rooms depend one way, and importing satqm stays light.

The layers are declared once, in ``[tool.importlinter]`` of pyproject.toml,
and checked by import-linter's ``lint-imports`` (in the ``test`` extra).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import satqm

ROOT = Path(__file__).resolve().parents[1]
#: The folder that holds the satqm these tests import (the source tree or
#: site-packages): the one import-linter is to read.
PACKAGE_PARENT = Path(satqm.__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(PACKAGE_PARENT), os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path)


def _lint_imports() -> str | None:
    beside = Path(sys.executable).with_name("lint-imports")
    return shutil.which("lint-imports") or (str(beside) if beside.is_file() else None)


def test_import_layers_hold():
    exe = _lint_imports()
    if exe is None:
        pytest.skip("import-linter is not installed (pip install 'satqm[test]')")
    r = subprocess.run(
        [exe, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 kept, 0 broken" in r.stdout


def test_import_satqm_does_not_load_matplotlib():
    code = (
        "import sys, satqm; "
        "heavy = [m for m in ('matplotlib', 'distributed', 'scipy') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""
