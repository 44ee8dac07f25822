"""The skills extension follows the visibility hook: a skill's files are resources, and what skills/list,
skills/get and resources/directory/read answer a principal, in both eras, is answer for answer what a
server holding only the skill files it sees answers (a hidden skill is unknown, a hidden file absent)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from tenancy_world import Caller, Principal, http_to, protected

from mcpkit import Server
from mcpkit.auth import AccessToken
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = pytest.mark.anyio

PRINCIPALS = [
    Principal("ann", "acme", frozenset({"admin"})),
    Principal("amy", "acme", frozenset({"staff"})),
    Principal("bob", "globex", frozenset({"admin"})),
]
FILES = {"SKILL.md": None, "templates/daily.md": "# Daily\n", "admin/keys.md": "# Keys\n"}


def sees(auth: AccessToken | None, kind: str, item: Any) -> bool:
    uri = getattr(item, "uri", "")
    return kind != "resources" or not uri.startswith("skill://") or sees_file(auth, uri)


def sees_file(auth: AccessToken | None, uri: str) -> bool:
    """skill://<tenant>/notes/...: the tenant's; under admin/, its admins' only."""
    tenant, _, folder = uri.removeprefix("skill://").split("/", 3)[:3]
    claims = auth.claims if auth is not None else {}
    return tenant == claims.get("tenant") and (folder != "admin" or "admin" in claims.get("roles", ()))


def skill_dirs(root: Path) -> dict[str, Path]:
    """Each tenant's skill "notes", by tenant."""
    made = {}
    for tenant in ("acme", "globex"):
        folder = root / tenant / "notes"
        for path, text in FILES.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            manifest = f"---\nname: notes\ndescription: {tenant}'s notes\n---\n\n# Notes\n"
            (folder / path).write_text(text or manifest)
        made[tenant] = folder
    return made


def only_what_is_seen(principal: Principal, dirs: dict[str, Path], root: Path) -> Server:
    """A server (no hook) holding the skill files `principal` sees, as the same skills."""
    server = Server("skills")
    for tenant, folder in dirs.items():
        kept = root / principal.subject / tenant / "notes"
        for path in FILES:
            if sees_file(principal.access(), f"skill://{tenant}/notes/{path}"):
                (kept / path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(folder / path, kept / path)
        if (kept / "SKILL.md").exists():
            server.skill(kept, prefix=tenant)
    return server


ASKED = [
    ("skills/list", {}),
    *[("skills/get", {"uri": f"skill://{t}/notes/SKILL.md"}) for t in ("acme", "globex", "initech")],
    *[
        ("resources/directory/read", {"uri": f"skill://{t}/notes{d}"})
        for t in ("acme", "globex")
        for d in ("", "/admin", "/templates")
    ],
]


async def answers(app: Any, principal: Principal, modern: bool) -> list[dict[str, Any]]:
    async with http_to(app) as client:
        caller = Caller(client(), principal.token, modern)
        await caller.open()
        return [await caller.answer(method, params) for method, params in ASKED]


@pytest.mark.parametrize("modern", [False, True], ids=["handshake", "modern"])
async def test_each_principal_gets_of_the_skills_only_the_files_it_sees(modern: bool, tmp_path: Path) -> None:
    dirs = skill_dirs(tmp_path / "served")
    shared = Server("skills", visible=sees)
    for tenant, folder in dirs.items():
        shared.skill(folder, prefix=tenant)
    app = protected(StreamableHTTPApp(shared), PRINCIPALS)
    for principal in PRINCIPALS:
        alone = protected(StreamableHTTPApp(only_what_is_seen(principal, dirs, tmp_path)), PRINCIPALS)
        got, wanted = await answers(app, principal, modern), await answers(alone, principal, modern)
        assert got == wanted, principal.subject
    listed = (await answers(app, PRINCIPALS[1], modern))[0]["result"]["skills"]  # amy: acme, no admin/
    assert [r["uri"] for s in listed for r in s["resources"]] == [
        "skill://acme/notes/SKILL.md",
        "skill://acme/notes/templates/daily.md",
    ]
