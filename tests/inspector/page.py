"""Page actions for the browser tests: wait for a selector, click it, fill it, wait for text."""

from __future__ import annotations

import json

from inspector.cdp import Browser
from inspector.harness import Inspector


def q(selector: str) -> str:
    return f"document.querySelector({json.dumps(selector)})"


def click(page: Browser, selector: str) -> None:
    page.wait_for(f"{q(selector)} !== null")
    page.evaluate(f"{q(selector)}.click()")


def fill(page: Browser, selector: str, value: str) -> None:
    page.wait_for(f"{q(selector)} !== null")
    events = "for (const t of ['input', 'change']) e.dispatchEvent(new Event(t, {bubbles: true}))"
    page.evaluate(f"(() => {{ const e = {q(selector)}; e.value = {json.dumps(value)}; {events}; }})()")


def shows(page: Browser, text: str, timeout: float = 15.0) -> None:
    page.wait_for(f"document.body.innerText.includes({json.dumps(text)})", timeout)


def open_page(page: Browser, found: Inspector) -> None:
    page.emulate(1280, 900)
    page.goto(found.url)
    page.wait_for("document.getElementById('status').textContent.startsWith('connected')")
