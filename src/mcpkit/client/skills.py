"""A host's side of the skills extension (`io.modelcontextprotocol/skills`, SEP-2640).

    skills = Skills(client)
    entries = await skills.list()              # entries only: no file is fetched ahead of need
    text = await skills.load(entries[0])       # SKILL.md, checked against the entry
    data = await skills.read(entries[0], "references/FORMS.md")

Every file read is checked against the entry held for its skill (size, digest, and for SKILL.md the
frontmatter); a mismatch raises SkillVerificationError and the content is not returned.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any

from ..protocol.errors import CapabilityError
from ..protocol.jsonrpc import JSON
from ..protocol.skills import SKILLS_EXTENSION, SkillVerificationError, check_entry, verify_file
from .extensions import call_extension, server_extension

if TYPE_CHECKING:
    from .client import Client

__all__ = ["SkillVerificationError", "Skills"]

_MAX_PAGES = 1000  # skills/list pages followed at most (a server repeating cursors ends the listing)


class Skills:
    """The skills one server serves, read and verified through `client`."""

    def __init__(self, client: Client) -> None:
        self.client = client

    @property
    def offered(self) -> bool:
        return server_extension(self.client, SKILLS_EXTENSION) is not None

    async def list(self) -> list[JSON]:
        """Every entry of skills/list (all pages); an entry a host may not load is left out."""
        entries: list[JSON] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            params = {"cursor": cursor} if cursor else {}
            result = await call_extension(self.client, SKILLS_EXTENSION, "skills/list", params)
            listed = result.get("skills")
            entries += [e for e in listed if _loadable(e)] if isinstance(listed, list) else []
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                break
        return entries

    async def get(self, uri: str) -> JSON:
        """The entry for the skill whose SKILL.md is at `uri` (skills/get), checked."""
        result = await call_extension(self.client, SKILLS_EXTENSION, "skills/get", {"uri": uri})
        return check_entry(result.get("skill"))

    async def load(self, entry: JSON) -> str:
        """The skill's SKILL.md, verified against `entry`."""
        return (await self.read(entry, "SKILL.md")).decode("utf-8")

    async def read(self, entry: JSON, path: str) -> bytes:
        """The file at `path` (relative to the skill's root, or a full URI), verified against `entry`."""
        check_entry(entry)
        root = entry["uri"].removesuffix("/SKILL.md")
        uri = path if "://" in path else f"{root}/{path.lstrip('/')}"
        if isinstance(entry["resources"], list) and uri not in {r["uri"] for r in entry["resources"]}:
            raise SkillVerificationError(f"{uri} is not a file of the skill {entry['uri']}")
        result = await self.client.read_resource(uri)
        data = _bytes_of(result.get("contents"), uri)
        verify_file(entry, uri, data)
        return data

    async def read_directory(self, uri: str, cursor: str | None = None) -> JSON:
        """resources/directory/read: only against a server that declared `directoryRead: true`."""
        settings = server_extension(self.client, SKILLS_EXTENSION) or {}
        if settings.get("directoryRead") is not True:
            raise CapabilityError("the server did not declare the skills extension's directoryRead")
        params = {"uri": uri, **({"cursor": cursor} if cursor else {})}
        return await call_extension(self.client, SKILLS_EXTENSION, "resources/directory/read", params)


def _loadable(entry: Any) -> bool:
    try:
        check_entry(entry)
    except SkillVerificationError:
        return False
    return True


def _bytes_of(contents: Any, uri: str) -> bytes:
    for item in contents if isinstance(contents, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("uri") == uri and isinstance(item.get("text"), str):
            return str(item["text"]).encode("utf-8")
        if item.get("uri") == uri and isinstance(item.get("blob"), str):
            try:
                return base64.b64decode(item["blob"], validate=True)
            except binascii.Error as exc:
                raise SkillVerificationError(f"{uri}: the blob is not base64") from exc
    raise SkillVerificationError(f"resources/read of {uri} returned no content for it")
