"""Every `satqm.…(` a page of the docs tells users to call exists, as a user
would reach it: import the module the name is in, then follow the dotted
name from `satqm`."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CALL = re.compile(r"`(satqm(?:\.[A-Za-z_]\w*)+)\(")


def _calls() -> list[tuple[str, str]]:
    return sorted(
        {(p.name, m.group(1)) for p in PAGES for m in CALL.finditer(p.read_text("utf-8"))}
    )


@pytest.mark.parametrize(("page", "name"), _calls())
def test_documented_call_exists(page, name):
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            importlib.import_module(".".join(parts[:i]))
            break
        except ImportError:
            continue
    obj = importlib.import_module("satqm")
    for part in parts[1:]:
        assert hasattr(obj, part), f"{page}: {name} does not exist ({part!r} missing)"
        obj = getattr(obj, part)
    assert callable(obj), f"{page}: {name} is not callable"


@pytest.mark.parametrize("page", ["README.md", "docs/looking.md"])
def test_reading_a_results_folder_back_is_documented(page):
    """The README's Use section and the page on looking at results say how
    to read a results folder back."""
    text = (ROOT / page).read_text("utf-8")
    if page == "README.md":
        text = text.split("## Use", 1)[1].split("\n## ", 1)[0]
    assert "`satqm.Results.load(" in text or 'satqm.Results.load("' in text
