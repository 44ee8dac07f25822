"""A client's JSON config, read and replaced by `mcpkit install` without being led elsewhere.

The config may sit in a working tree someone else controls (.mcp.json, .vscode/mcp.json), so the names
mcpkit picks itself are never followed as links: the new file and the backup are made exclusively under
random names (mkstemp: O_CREAT | O_EXCL) and renamed into place, and a rename replaces a link, never what
it points to. A config at its default place that is a link is refused; one named with --config-path is
followed, as its owner asked. Both files keep the original's mode (a 0600 file holding API keys stays 0600).
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from .errors import UsageError

__all__ = ["read_config", "target_file", "write_config"]

_NEW_FILE_MODE = 0o644


def target_file(path: Path, explicit: bool) -> Path:
    """The file to change: a link at a default place is refused, an explicit one followed."""
    if explicit:
        return path.resolve()
    for place in (path.parent, path):
        if place.is_symlink():
            target = place.resolve()
            raise UsageError(
                f"{place} is a link to {target}; nothing was changed (to change that file, pass "
                f"--config-path {target / path.name if place == path.parent else target})"
            )
    return path


def read_config(path: Path, key: str) -> dict[str, Any]:
    """The config as it stands ({} when there is none); anything but a JSON object with `key` an object
    is refused, so a file mcpkit cannot read is never overwritten."""
    if not path.exists():
        return {}
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text; nothing was changed") from None
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{path} is not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg}); fix it or move it "
            "away, nothing was changed"
        ) from None
    if not isinstance(config, dict) or not isinstance(config.get(key, {}), dict):
        raise UsageError(f"{path}: expected a JSON object with {key!r} an object; nothing was changed")
    return config


def _replace(path: Path, data: bytes, mode: int) -> None:
    """Write `data` to a fresh file beside `path` and rename it over `path` (or over a link there)."""
    fd, fresh = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".mcpkit-new")
    try:
        with os.fdopen(fd, "wb") as out:
            if hasattr(os, "fchmod"):
                os.fchmod(out.fileno(), mode)
            out.write(data)
        os.replace(fresh, path)
    except BaseException:
        Path(fresh).unlink(missing_ok=True)
        raise


def write_config(path: Path, config: dict[str, Any]) -> Path | None:
    """Replace the file at once, after copying the old one to FILE.bak; returns the backup's path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = (json.dumps(config, indent=2, ensure_ascii=False) + "\n").encode()
    try:
        old = path.read_bytes()
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        _replace(path, text, _NEW_FILE_MODE & ~umask)
        return None
    backup = path.with_name(path.name + ".bak")
    _replace(backup, old, mode)
    _replace(path, text, mode)
    return backup
