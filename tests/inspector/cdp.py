"""Just enough of the Chrome DevTools Protocol to drive Debian's chromium headless over
--remote-debugging-pipe (NUL-separated JSON on fds 3 and 4): no websocket, no Playwright download."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

__all__ = ["Browser", "chromium"]


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _high(pair: tuple[int, int]) -> tuple[int, int]:
    """The pipe's ends moved above 10, so the shell's moves onto fds 3 and 4 cannot overwrite them."""
    moved = tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in pair)
    for fd in pair:
        os.close(fd)
    return moved[0], moved[1]


class Browser:
    """One headless chromium with one page; `evaluate` runs JavaScript in it and returns the value."""

    def __init__(self, binary: str, width: int = 1280, height: int = 900) -> None:
        self.profile = tempfile.TemporaryDirectory(prefix="mcpkit-chromium-")
        to_browser, self._write = _high(os.pipe())
        self._read, from_browser = _high(os.pipe())
        args = [
            "--headless=new",
            "--remote-debugging-pipe",
            "--no-sandbox",  # a container's root has no user namespaces for the sandbox
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            f"--user-data-dir={self.profile.name}",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        # bash (dash takes one-digit fds only) moves the pipe ends onto fds 3 and 4, where chromium reads
        script = f'exec "$0" "$@" 3<&{to_browser} 4>&{from_browser} {to_browser}<&- {from_browser}>&-'
        self.process = subprocess.Popen(
            ["bash", "-c", script, binary, *args],
            pass_fds=(to_browser, from_browser),
            stdout=subprocess.DEVNULL,
            stderr=None if os.environ.get("MCPKIT_CDP_DEBUG") else subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._ids = 0
        self.events: list[dict[str, Any]] = []
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime"):
            self.send(f"{domain}.enable", session=self.session)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        self._ids += 1
        message: dict[str, Any] = {"id": self._ids, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, orjson.dumps(message) + b"\0")
        while True:
            got = self._next()
            if got.get("id") == self._ids:
                if "error" in got:
                    raise RuntimeError(f"{method}: {got['error']}")
                return got.get("result", {})
            self.events.append(got)

    def _next(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._read, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        parsed: dict[str, Any] = orjson.loads(raw)
        return parsed

    def page(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return self.send(method, params, self.session)

    def goto(self, url: str) -> None:
        self.page("Page.navigate", {"url": url})

    def evaluate(self, expression: str) -> Any:
        found = self.page(
            "Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True}
        )
        if "exceptionDetails" in found:
            raise RuntimeError(f"{expression}: {found['exceptionDetails']}")
        return found.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 15.0) -> Any:
        """Polls `expression` until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.evaluate(expression)
            except RuntimeError:
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {expression}")
            time.sleep(0.1)

    def screenshot(self, path: Path) -> None:
        data = self.page("Page.captureScreenshot", {"format": "png"})["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def emulate(self, width: int, height: int, dark: bool = False, mobile: bool = False) -> None:
        self.page(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
        )
        scheme = [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]
        self.page("Emulation.setEmulatedMedia", {"features": scheme})

    def errors(self) -> list[Any]:
        """Exceptions thrown in the page and console errors so far."""
        self.evaluate("0")  # drain what arrived
        found = [e["params"] for e in self.events if e.get("method") == "Runtime.exceptionThrown"]
        consoles = [e["params"] for e in self.events if e.get("method") == "Runtime.consoleAPICalled"]
        return found + [c for c in consoles if c.get("type") == "error"]

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, OSError):
            self.send("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)
        os.close(self._read)
        os.close(self._write)
        self.profile.cleanup()
