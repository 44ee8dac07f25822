"""The page's files as shipped: every module they import exists, and no script turns text into HTML."""

from __future__ import annotations

import re
from importlib import resources

import pytest

STATIC = resources.files("mcpkit.inspector").joinpath("static")
SCRIPTS = sorted(item.name for item in STATIC.iterdir() if item.name.endswith(".js"))
# The ways a string becomes markup or code; the page builds every element with createElement and text.
HTML_SINKS = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function\(")


@pytest.mark.parametrize("name", SCRIPTS)
def test_no_script_parses_strings_as_html_or_code(name: str) -> None:
    assert HTML_SINKS.findall(STATIC.joinpath(name).read_text()) == []


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_imported_module_is_shipped(name: str) -> None:
    imported = re.findall(r'from "\./([\w.-]+)"', STATIC.joinpath(name).read_text())
    assert [module for module in imported if module not in SCRIPTS] == []


def test_the_page_loads_only_its_own_files_and_has_no_inline_script() -> None:
    page = STATIC.joinpath("index.html").read_text()
    assert re.findall(r'(?:src|href)="([^"]+)"', page) == ["/static/style.css", "/static/app.js"]
    assert re.findall(r"<script(?![^>]*\bsrc=)", page) == []
    assert " on" not in re.sub(r"<script[^>]*>|\s+", " ", page).lower().replace(" one", "")
