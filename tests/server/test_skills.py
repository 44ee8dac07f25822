"""The skills extension (SEP-2640): mcpkit's Server serving a skill directory and mcpkit's Client
listing, loading and verifying it, in memory in both eras; the host-side checks on tampered content."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import requirement
from mcpkit import Server
from mcpkit.client.skills import Skills, SkillVerificationError
from mcpkit.protocol.errors import RemoteError
from mcpkit.protocol.skills import digest, frontmatter, verify_file
from mcpkit.testing import connect

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]
JSON = dict[str, Any]
ERAS = ["modern", "handshake"]
SKILL_MD = "---\nname: notes\ndescription: Keep notes tidy\nmetadata:\n  version: '1'\n---\n\n# Notes\n"


def make_skill(root: Path) -> Path:
    folder = root / "notes"
    (folder / "templates" / "deep").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD)
    (folder / "templates" / "daily.md").write_text("# Daily\n")
    (folder / "templates" / "deep" / "x.bin").write_bytes(b"\xff\x00\x01")
    return folder


@requirement("skills-held-entry")
@pytest.mark.parametrize("era", ERAS)
async def test_a_served_skill_is_listed_loaded_and_verified(era: str, tmp_path: Path) -> None:
    server = Server("skills")
    server.skill(make_skill(tmp_path), prefix="team")
    async with connect(server, era=era) as client:
        skills = Skills(client)
        assert skills.offered
        [entry] = await skills.list()
        assert entry["uri"] == "skill://team/notes/SKILL.md"
        assert entry["frontmatter"] == {
            "name": "notes",
            "description": "Keep notes tidy",
            "metadata": {"version": "1"},
        }
        uris = {r["uri"]: r for r in entry["resources"]}
        assert uris["skill://team/notes/SKILL.md"]["digest"] == digest(SKILL_MD.encode())
        assert await skills.get(entry["uri"]) == entry
        assert (await skills.load(entry)).startswith("---\nname: notes")
        assert await skills.read(entry, "templates/deep/x.bin") == b"\xff\x00\x01"
        listing = await skills.read_directory("skill://team/notes/templates")
        assert {(c["name"], c["mimeType"]) for c in listing["resources"]} == {
            ("daily.md", "text/markdown"),
            ("deep", "inode/directory"),
        }
        with pytest.raises(SkillVerificationError):  # not in the held entry: never read
            await skills.read(entry, "templates/other.md")


@requirement("skills-invalid-params")
@pytest.mark.parametrize("era", ERAS)
async def test_unknown_skills_and_non_directories_are_invalid_params(era: str, tmp_path: Path) -> None:
    server = Server("skills")
    server.skill(make_skill(tmp_path))
    async with connect(server, era=era) as client:
        skills = Skills(client)
        for call in (skills.get("skill://nope/SKILL.md"), skills.read_directory("skill://notes/SKILL.md")):
            with pytest.raises(RemoteError) as refused:
                await call
            assert refused.value.code == -32602


@requirement("skills-verify-read")
def test_a_host_refuses_content_that_differs_from_the_entry() -> None:
    data = SKILL_MD.encode()
    meta = frontmatter(SKILL_MD)
    assert meta is not None
    entry: JSON = {
        "uri": "skill://notes/SKILL.md",
        "frontmatter": meta,
        "resources": [{"uri": "skill://notes/SKILL.md", "digest": digest(data), "size": len(data)}],
    }
    verify_file(entry, "skill://notes/SKILL.md", data)
    tampered = data.replace(b"Keep", b"Leak")
    for bad in (tampered, data + b"x"):
        with pytest.raises(SkillVerificationError):
            verify_file(entry, "skill://notes/SKILL.md", bad)
    relisted = {**entry, "resources": [{**entry["resources"][0], "digest": digest(tampered)}]}
    with pytest.raises(SkillVerificationError):  # digest and size agree, the frontmatter does not
        verify_file(relisted, "skill://notes/SKILL.md", tampered)


@requirement("skills-format")
def test_a_folder_that_is_not_a_valid_skill_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "Bad_Name"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: Bad_Name\ndescription: d\n---\n")
    with pytest.raises(ValueError):
        Server("x").skill(folder)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError):
        Server("x").skill(tmp_path / "empty")
