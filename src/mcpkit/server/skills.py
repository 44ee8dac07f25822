"""Skills served from directories (the extension `io.modelcontextprotocol/skills`, SEP-2640).

`server.skill("skills/pdf-processing")` reads the directory once: its SKILL.md frontmatter names the
skill, every file becomes a resource `skill://<prefix/><name>/<path>`, and the extension's methods
answer from that snapshot: skills/list, skills/get and resources/directory/read (`directoryRead`).
With a visibility hook (server/visibility.py) they answer from the files the caller sees, as
resources: a skill whose SKILL.md it does not see is unknown to it, and a file it does not see is
absent from the skill's entry and its directories.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Protocol

from ..protocol.errors import InvalidParams
from ..protocol.jsonrpc import JSON
from ..protocol.pagination import page
from ..protocol.skills import (
    DIRECTORY_MIME,
    MAX_RESOURCES,
    MAX_TOTAL_SIZE,
    SKILLS_EXTENSION,
    digest,
    frontmatter,
    valid_name,
)
from ..protocol.versions import is_stateless
from .extensions import Extension, string_param
from .registry import Registry, Shows
from .request import RequestContext
from .resources import resource_from

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Skill", "SkillCatalog", "add_skill"]

Sees = Callable[[str], bool]  # whether the caller sees the resource at a URI


def _everything(_uri: str) -> bool:
    return True


class _Method(Protocol):
    """One of the extension's methods: what the caller `sees` (everything unless told) decides."""

    def __call__(self, params: JSON, ctx: RequestContext, sees: Sees = _everything) -> JSON: ...


class Skill:
    """One skill directory, read once: its frontmatter and its files' bytes."""

    def __init__(self, root: Path, prefix: str = "") -> None:
        files = dict(_files(root))
        manifest = files.get("SKILL.md")
        matter = frontmatter(manifest.decode("utf-8")) if manifest is not None else None
        if matter is None or not all(isinstance(matter.get(k), str) for k in ("name", "description")):
            raise ValueError(f"{root}: SKILL.md must begin with frontmatter naming name and description")
        name = matter["name"]
        if not valid_name(name) or name != root.name:
            raise ValueError(f"{root}: the skill name {name!r} must be a valid name equal to the folder's")
        if len(files) > MAX_RESOURCES or sum(map(len, files.values())) > MAX_TOTAL_SIZE:
            raise ValueError(f"{root}: more than the extension's 512 files or 16 MiB")
        self.frontmatter, self.files = matter, files
        self.root = "skill://" + "/".join(p for p in (prefix.strip("/"), name) if p)
        self.uri = f"{self.root}/SKILL.md"

    def entry(self, sees: Sees = _everything) -> JSON:
        """The skill's entry: its frontmatter verbatim and the digest and size of every file `sees`."""
        resources = [
            {"uri": uri, "digest": digest(d), "size": len(d)}
            for p, d in self.files.items()
            if sees(uri := f"{self.root}/{p}")
        ]
        return {"uri": self.uri, "frontmatter": self.frontmatter, "resources": resources}

    def children(self, uri: str, sees: Sees = _everything) -> list[JSON] | None:
        """The direct children of directory `uri` of this skill (those holding a file `sees`), or None
        if it is not one."""
        if uri != self.root and not uri.startswith(self.root + "/"):
            return None
        # pathlib and mimetypes are imported where used: ~3 ms of the start of every server otherwise
        from pathlib import PurePosixPath

        below = uri[len(self.root) + 1 :]
        folder = PurePosixPath(below) if below else None
        found: dict[str, JSON] = {}
        for path in self.files:
            parts = PurePosixPath(path).parts
            depth = len(folder.parts) if folder else 0
            if len(parts) <= depth or (folder and PurePosixPath(*parts[:depth]) != folder):
                continue
            if not sees(f"{self.root}/{path}"):
                continue
            child = f"{uri}/{parts[depth]}"
            leaf = len(parts) == depth + 1
            mime = _mime(parts[depth]) if leaf else DIRECTORY_MIME
            found.setdefault(child, {"uri": child, "name": parts[depth], "mimeType": mime})
        return list(found.values()) if found else None


def _files(root: Path) -> Iterator[tuple[str, bytes]]:
    """Every regular file under `root` (no dot-files, no links out), by its `/` path from `root`."""
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and not path.is_symlink() and not any(p.startswith(".") for p in relative.parts):
            yield relative.as_posix(), path.read_bytes()


def _mime(name: str) -> str:
    import mimetypes

    return "text/markdown" if name.endswith(".md") else mimetypes.guess_type(name)[0] or "text/plain"


class SkillCatalog(Extension):
    """The skills extension of one server: the skills it serves and the extension's three methods."""

    def __init__(self, registry: Registry) -> None:
        super().__init__(SKILLS_EXTENSION, {"directoryRead": True})
        self.registry = registry  # the one serving the skills: its page size and cache hint
        self.skills: dict[str, Skill] = {}
        self.methods: dict[str, _Method] = {
            "skills/list": self.list_skills,
            "skills/get": self.get_skill,
            "resources/directory/read": self.read_directory,
        }
        for name, fn in self.methods.items():
            self.add_method(name, fn)

    def answer(self, method: str, params: JSON, ctx: RequestContext, shows: Shows | None) -> JSON:
        """What the caller sees, as resources/read would serve it (hidden is unknown)."""
        sees = _everything if shows is None else functools.partial(self.registry.knows, shows=shows)
        return self.methods[method](params, ctx, sees)

    def list_skills(self, params: JSON, ctx: RequestContext, sees: Sees = _everything) -> JSON:
        skills = [s for s in self.skills.values() if sees(s.uri)]
        start, stop, next_cursor = page(len(skills), params.get("cursor"), self.registry.page_size)
        result: JSON = {"skills": [s.entry(sees) for s in skills[start:stop]]}
        return self._finish(result, next_cursor, ctx)

    def get_skill(self, params: JSON, ctx: RequestContext, sees: Sees = _everything) -> JSON:
        uri = string_param(params, "uri", "skills/get")
        skill = self.skills.get(uri)
        if skill is None or not sees(uri):
            raise InvalidParams(f"No skill is served at {uri}")
        return self._finish({"skill": skill.entry(sees)}, None, ctx)

    def read_directory(self, params: JSON, ctx: RequestContext, sees: Sees = _everything) -> JSON:
        uri = string_param(params, "uri", "resources/directory/read")
        shown = (s for s in self.skills.values() if sees(s.uri))
        children = next((c for s in shown if (c := s.children(uri, sees)) is not None), None)
        if children is None:
            raise InvalidParams(f"{uri} is not a directory resource")
        start, stop, next_cursor = page(len(children), params.get("cursor"), self.registry.page_size)
        return self._finish({"resources": children[start:stop]}, next_cursor, ctx)

    def _finish(self, result: JSON, next_cursor: str | None, ctx: RequestContext) -> JSON:
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        if is_stateless(ctx.negotiated.version):
            result.update(self.registry.cache.fields())
        return result


def add_skill(registry: Registry, root: str | os.PathLike[str], *, prefix: str = "") -> Skill:
    """Serve the skill at directory `root` (under `skill://<prefix>/`): its files as resources, its
    entry in skills/list. ValueError for a folder that is not a valid skill."""
    from pathlib import Path, PurePosixPath

    skill = Skill(Path(root), prefix)
    catalog = registry.extensions.get(SKILLS_EXTENSION)
    if not isinstance(catalog, SkillCatalog):
        catalog = SkillCatalog(registry)
        registry.add_extension(catalog)
    for path, data in skill.files.items():
        leaf = PurePosixPath(path).name
        content: str | bytes = data
        with contextlib.suppress(UnicodeDecodeError):
            content = data.decode("utf-8")
        described = {"name": skill.frontmatter["name"], "description": skill.frontmatter["description"]}
        named = described if path == "SKILL.md" else {"name": leaf}
        uri = f"{skill.root}/{path}"
        registry.add_resource(resource_from(uri, content=content, mime_type=_mime(leaf), **named))
    catalog.skills[skill.uri] = skill
    return skill
