"""The inspector's page against servers nobody here wrote: the TypeScript reference server-everything
(npm, stdio) and an official-Python-SDK server, in each era they speak, the era switched in the page."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from inspector.cdp import Browser
from inspector.harness import ROOT, inspector
from inspector.page import click, fill, open_page, q, shows

pytestmark = pytest.mark.interop

DEFAULT = ROOT / ".interop/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
EVERYTHING_TS = Path(os.environ.get("MCPKIT_EVERYTHING_SERVER", DEFAULT))
SDK_SERVER = ROOT / "tests" / "interop" / "sdk_server.py"


def test_the_reference_server_everything_in_the_page(browser: Browser, shots: Path) -> None:
    if not EVERYTHING_TS.is_file() or shutil.which("node") is None:
        pytest.skip(
            f"server-everything is not installed at {EVERYTHING_TS} (scripts/setup-peers installs it)"
        )
    with inspector(f"node {EVERYTHING_TS} stdio") as found:
        open_page(browser, found)
        assert found.result("state")["stateless"] is False  # it speaks the handshake era only
        click(browser, "[data-tab=tools]")
        click(browser, "[data-tool=echo]")
        fill(browser, "input[aria-label=message]", "hello from the page")
        click(browser, "form.tool button[type=submit]")
        shows(browser, "Echo: hello from the page")
        click(browser, "[data-tool=get-sum]")
        fill(browser, "input[aria-label=a]", "2")
        fill(browser, "input[aria-label=b]", "3")
        click(browser, "form.tool button[type=submit]")
        shows(browser, "5")
        click(browser, "[data-tab=resources]")
        browser.wait_for(f"{q('[data-uri]')} !== null")
        click(browser, "[data-uri]")
        browser.wait_for(f"{q('.outcome .result')} !== null")
        browser.screenshot(shots / "server-everything.png")


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_an_official_sdk_server_in_both_eras_switched_in_the_page(browser: Browser, era: str) -> None:
    with inspector(f"{sys.executable} {SDK_SERVER}", "--era", era) as found:
        open_page(browser, found)
        protocol = "2026-07-28" if era == "modern" else "2025-11-25"
        browser.wait_for(f"document.getElementById('status').textContent.includes('{protocol}')")
        click(browser, "[data-tab=tools]")
        click(browser, "[data-tool=echo]")
        fill(browser, "input[aria-label=text]", "sdk says hi")
        click(browser, "form.tool button[type=submit]")
        shows(browser, "sdk says hi")
        other = "handshake" if era == "modern" else "modern"
        fill(browser, "#era", other)
        click(browser, "#connect-button")
        other_protocol = "2025-11-25" if era == "modern" else "2026-07-28"
        browser.wait_for(f"document.getElementById('status').textContent.includes('{other_protocol}')")
        assert found.result("state")["stateless"] is (other == "modern")
