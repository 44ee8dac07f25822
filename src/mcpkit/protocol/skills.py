"""Skills (the extension `io.modelcontextprotocol/skills`, SEP-2640): skill entries, digests, SKILL.md
frontmatter and the checks a host makes on what it reads. No I/O here.

A skill is a directory served file by file as resources (`skill://<skill-path>/<file-path>`); its
entry (skills/list, skills/get) carries the SKILL.md frontmatter verbatim and every file's digest and
size. A host verifies each file it reads against the entry it holds ("Integrity and Verification").
"""

from __future__ import annotations

import datetime
import hashlib
import re
from typing import Any, Final

from .._extras import require
from .jsonrpc import JSON

__all__ = [
    "DIRECTORY_MIME",
    "MAX_RESOURCES",
    "MAX_TOTAL_SIZE",
    "SKILLS_EXTENSION",
    "SkillVerificationError",
    "check_entry",
    "digest",
    "frontmatter",
    "valid_name",
    "verify_file",
]

SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"
DIRECTORY_MIME: Final = "inode/directory"
MAX_RESOURCES: Final = 512  # "Limits": entries per skill, SKILL.md included
MAX_TOTAL_SIZE: Final = 16 * 1024 * 1024  # "Limits": bytes summed over a skill's resources
_NAME: Final = re.compile(r"(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")  # Agent Skills naming rules
_FRONTMATTER: Final = re.compile(r"---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)
_DIGEST: Final = re.compile(r"sha256:[0-9a-f]{64}")


class SkillVerificationError(Exception):
    """What a host read is not what the entry it holds describes: the content MUST NOT be used."""


def digest(data: bytes) -> str:
    """`sha256:{hex}` of a file's raw bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def valid_name(name: str) -> bool:
    """1-64 lowercase letters, digits and hyphens; no leading, trailing or doubled hyphen."""
    return _NAME.fullmatch(name) is not None


def _plain(value: Any) -> Any:
    """YAML values as JSON ones (a date becomes its ISO text)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, datetime.date):
        return value.isoformat()
    return value


def frontmatter(text: str) -> JSON | None:
    """The YAML frontmatter a SKILL.md begins with, as a JSON object; None when there is none or it
    is not a mapping. Needs PyYAML (the `skills` extra)."""
    # only a skills server or host parses frontmatter, so PyYAML is an extra
    yaml = require("yaml", "skills", "skills (SKILL.md frontmatter)", "PyYAML")

    found = _FRONTMATTER.match(text.removeprefix("\ufeff"))
    if found is None:
        return None
    try:
        parsed = yaml.safe_load(found.group(1))
    except yaml.YAMLError:
        return None
    return _plain(parsed) if isinstance(parsed, dict) else None


def check_entry(entry: Any) -> JSON:
    """`entry` if it is a skill entry a host may load; SkillVerificationError says why not."""
    if not isinstance(entry, dict) or not isinstance(entry.get("uri"), str):
        raise SkillVerificationError("a skill entry needs a string uri")
    matter = entry.get("frontmatter")
    if not isinstance(matter, dict) or not all(
        isinstance(matter.get(k), str) for k in ("name", "description")
    ):
        raise SkillVerificationError(f"{entry['uri']}: frontmatter needs a name and a description")
    resources = entry.get("resources")
    if resources == "dynamic":
        return entry
    if not isinstance(resources, list) or not all(_file_entry(r) for r in resources):
        raise SkillVerificationError(f"{entry['uri']}: resources must be 'dynamic' or a list of files")
    if len(resources) > MAX_RESOURCES or sum(r["size"] for r in resources) > MAX_TOTAL_SIZE:
        raise SkillVerificationError(f"{entry['uri']}: the skill exceeds the extension's limits")
    return entry


def _file_entry(resource: Any) -> bool:
    return (
        isinstance(resource, dict)
        and isinstance(resource.get("uri"), str)
        and isinstance(resource.get("digest"), str)
        and _DIGEST.fullmatch(resource["digest"]) is not None
        and isinstance(resource.get("size"), int)
        and resource["size"] >= 0
    )


def verify_file(entry: JSON, uri: str, data: bytes) -> None:
    """Check a file read for the skill `entry`: listed, of the listed size and digest; and for its
    SKILL.md, frontmatter equal to the entry's. SkillVerificationError on any mismatch."""
    resources = entry.get("resources")
    if isinstance(resources, list):
        listed = next((r for r in resources if r.get("uri") == uri), None)
        if listed is None:
            raise SkillVerificationError(f"{uri} is not a file of the skill {entry.get('uri')}")
        if len(data) != listed["size"]:
            raise SkillVerificationError(f"{uri}: {len(data)} bytes, the entry says {listed['size']}")
        if digest(data) != listed["digest"]:
            raise SkillVerificationError(f"{uri}: the content does not match the entry's digest")
    if uri == entry.get("uri"):
        found = frontmatter(data.decode("utf-8", errors="replace"))
        if found != entry.get("frontmatter"):
            raise SkillVerificationError(f"{uri}: its frontmatter differs from the entry's")
