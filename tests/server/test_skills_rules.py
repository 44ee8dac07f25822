"""The skills extension's (SEP-2640) MUSTs that tests/server/test_skills.py does not already pin: what a
server declaring the extension serves, an entry's complete manifest, the results' shape in 2026-07-28,
the directoryRead gate on the client, and the per-skill limits and entry validity a host checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import requirement
from mcpkit import Server
from mcpkit.client.extensions import call_extension
from mcpkit.client.skills import Skills, SkillVerificationError
from mcpkit.protocol.errors import CapabilityError
from mcpkit.protocol.skills import MAX_RESOURCES, MAX_TOTAL_SIZE, SKILLS_EXTENSION, check_entry, digest
from mcpkit.testing import connect

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]
JSON = dict[str, Any]
ERAS = ["modern", "handshake"]
FILES = {
    "SKILL.md": b"---\nname: atlas\ndescription: Maps\nlicense: MIT\n---\n# Atlas\n",
    "refs/GUIDE.md": b"# Guide\n",
    "refs/deep/data.bin": b"\x00\x01\x02",
}


def make_skill(root: Path) -> Path:
    for path, data in FILES.items():
        (root / "atlas" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "atlas" / path).write_bytes(data)
    return root / "atlas"


@requirement("skills-server-methods")
@pytest.mark.parametrize("era", ERAS)
async def test_a_server_declaring_skills_serves_its_methods_and_the_resources_capability(
    era: str, tmp_path: Path
) -> None:
    server = Server("skills")
    server.skill(make_skill(tmp_path))
    async with connect(server, era=era) as client:
        assert client.server_capabilities["extensions"][SKILLS_EXTENSION] == {"directoryRead": True}
        assert "resources" in client.server_capabilities
        listed = await call_extension(client, SKILLS_EXTENSION, "skills/list", {})
        got = await call_extension(client, SKILLS_EXTENSION, "skills/get", {"uri": "skill://atlas/SKILL.md"})
        folder = await call_extension(
            client, SKILLS_EXTENSION, "resources/directory/read", {"uri": "skill://atlas"}
        )
        assert got["skill"] == listed["skills"][0]
        assert {c["name"] for c in folder["resources"]} == {"SKILL.md", "refs"}
        if era == "modern":  # CacheableResult: resultType complete, ttlMs and cacheScope required
            for result in (listed, got, folder):
                assert result["resultType"] == "complete"
            for result in (listed, got):
                assert isinstance(result["ttlMs"], int) and result["cacheScope"] in ("public", "private")


@requirement("skills-entry-complete")
async def test_an_entry_lists_every_file_once_with_its_digest_and_size(tmp_path: Path) -> None:
    server = Server("skills")
    server.skill(make_skill(tmp_path), prefix="maps")
    async with connect(server, era="modern") as client:
        [entry] = await Skills(client).list()
    assert entry["uri"] == "skill://maps/atlas/SKILL.md"
    assert entry["frontmatter"] == {"name": "atlas", "description": "Maps", "license": "MIT"}
    expected = {f"skill://maps/atlas/{p}": {"digest": digest(d), "size": len(d)} for p, d in FILES.items()}
    listed = {r["uri"]: {"digest": r["digest"], "size": r["size"]} for r in entry["resources"]}
    assert listed == expected and len(entry["resources"]) == len(FILES)


@requirement("skills-directory-read-gate")
async def test_a_client_does_not_read_directories_unless_the_server_declared_directory_read() -> None:
    server = Server("skills-without-directories")
    server.extension(SKILLS_EXTENSION)  # declared with no settings: directoryRead defaults to false
    async with connect(server, era="modern") as client:
        with pytest.raises(CapabilityError):
            await Skills(client).read_directory("skill://atlas")


def entry_of(sizes: list[int]) -> JSON:
    resources = [{"uri": f"skill://big/f{i}", "digest": digest(b""), "size": s} for i, s in enumerate(sizes)]
    return {
        "uri": "skill://big/SKILL.md",
        "frontmatter": {"name": "big", "description": "d"},
        "resources": resources,
    }


@requirement("skills-limits")
def test_hosts_accept_skills_up_to_the_limits_and_servers_do_not_serve_larger_ones(tmp_path: Path) -> None:
    check_entry(entry_of([0] * MAX_RESOURCES))
    check_entry(entry_of([MAX_TOTAL_SIZE - 1, 1]))
    for too_big in (entry_of([0] * (MAX_RESOURCES + 1)), entry_of([MAX_TOTAL_SIZE, 1])):
        with pytest.raises(SkillVerificationError):
            check_entry(too_big)
    folder = tmp_path / "big"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: big\ndescription: d\n---\n")
    for i in range(MAX_RESOURCES):
        (folder / f"f{i}.txt").write_text("x")
    with pytest.raises(ValueError):
        Server("x").skill(folder)


@requirement("skills-entry-invalid")
def test_an_entry_without_a_valid_resources_value_is_not_loaded() -> None:
    assert check_entry({**entry_of([]), "resources": "dynamic"})["resources"] == "dynamic"
    without = {k: v for k, v in entry_of([1]).items() if k != "resources"}
    bad_digest = entry_of([1])
    bad_digest["resources"][0]["digest"] = "md5:00"
    for bad in (
        without,
        {**entry_of([]), "resources": "static"},
        {**entry_of([]), "resources": 3},
        bad_digest,
    ):
        with pytest.raises(SkillVerificationError):
            check_entry(bad)
