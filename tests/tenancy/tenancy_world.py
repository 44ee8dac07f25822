"""Tenants, principals and their items for the tenancy tests: each principal an API key (mcpkit.auth's
APIKeyVerifier, its tenant and roles as the key's claims), raw JSON-RPC callers over Streamable HTTP
driven in this process (both eras), and the servers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx

from in_process import ORIGIN, Driver
from mcpkit import Server
from mcpkit.auth import AccessToken, APIKey, APIKeyVerifier, protect
from raw_caller import RawCaller

RESOURCE = ORIGIN + "/mcp"
KINDS = ("tools", "resources", "resourceTemplates", "prompts")
JSON = dict[str, Any]


@dataclass(frozen=True)
class Principal:
    subject: str
    tenant: str
    roles: frozenset[str]

    @property
    def token(self) -> str:
        return f"key-{self.subject}-0123456789abcdef"

    def claims(self) -> dict[str, Any]:
        return {"tenant": self.tenant, "roles": sorted(self.roles)}

    def key(self) -> APIKey:
        return APIKey.of(self.token, self.subject, ["mcp"], claims=self.claims())

    def access(self) -> AccessToken:
        """What its key's AccessToken says of its tenant and roles (all the visibility hook reads)."""
        return AccessToken(self.subject, None, frozenset({"mcp"}), None, (RESOURCE,), self.claims())


@dataclass(frozen=True)
class Item:
    """One item of one kind, for `tenant` (None: everyone's) and, within it, `role` (None: all)."""

    kind: str
    key: str
    tenant: str | None
    role: str | None

    def seen_by(self, auth: AccessToken | None) -> bool:
        if auth is None:
            return self.tenant is None and self.role is None
        roles = auth.claims.get("roles", ())
        return self.tenant in (None, auth.claims.get("tenant")) and (self.role is None or self.role in roles)


@dataclass
class World:
    principals: list[Principal]
    items: list[Item] = field(default_factory=list)

    def audience(self) -> Callable[[AccessToken | None, str, Any], bool]:
        """The visibility hook: an item is seen by its tenant's principals holding its role."""
        by_key = {(item.kind, item.key): item for item in self.items}

        def visible(auth: AccessToken | None, kind: str, item: Any) -> bool:
            return by_key[(kind, key_of(kind, item))].seen_by(auth)

        return visible

    def server(self, items: list[Item], *, visible: bool) -> Server:
        server = Server("world", page_size=2, visible=self.audience() if visible else None)
        for item in items:
            register(server, item)
        return server


def key_of(kind: str, item: Any) -> str:
    if kind == "resources":
        return str(item.uri)
    if kind == "resourceTemplates":
        return str(item.template.template)
    return str(item.name)


def register(server: Server, item: Item) -> None:
    """`item` on `server`: what it answers names it and its tenant, so an answer shows whose it is."""
    owner = f"{item.key} of {item.tenant}"
    if item.kind == "tools":
        server.add_tool(lambda: owner, name=item.key, description=owner)
    elif item.kind == "prompts":
        server.add_prompt(lambda topic="": f"{owner}: {topic}", name=item.key, description=owner)
        server.completion(prompt=item.key, argument="topic")(lambda value, _args: [owner, value])
    elif item.kind == "resources":
        server.add_resource(item.key, lambda: owner, description=owner)
    else:
        server.add_resource(item.key, lambda id: f"{owner}: {id}", description=owner)
        server.completion(template=item.key, argument="id")(lambda value, _args: [owner, value])


def protected(app: Any, principals: list[Principal], resource: str = RESOURCE) -> Any:
    """`app` behind the principals' API keys."""
    keys = APIKeyVerifier([p.key() for p in principals], audience=resource)
    return protect(app, verifier=keys, resource=resource, authorization_servers=[])


@asynccontextmanager
async def http_to(app: Any) -> AsyncIterator[Callable[[], httpx.AsyncClient]]:
    """Make httpx clients whose requests reach `app` in this process (each its own headers)."""
    async with anyio.create_task_group() as tg:
        opened: list[httpx.AsyncClient] = []

        def client() -> httpx.AsyncClient:
            made = httpx.AsyncClient(transport=Driver(app, tg), base_url=ORIGIN, timeout=10)
            opened.append(made)
            return made

        try:
            yield client
        finally:
            for made in opened:
                await made.aclose()
            tg.cancel_scope.cancel()


class Caller(RawCaller):
    """Raw JSON-RPC over Streamable HTTP for one principal (None: no token), in one era, to the app
    reached in this process (`http_to`)."""

    def __init__(self, http: httpx.AsyncClient, token: str | None, modern: bool) -> None:
        super().__init__(http, token, modern, RESOURCE)

    async def every_page(self, method: str) -> list[JSON]:
        """Every page of a list, following nextCursor (the answers as they came)."""
        pages: list[JSON] = []
        params: JSON = {}
        while True:
            answer = await self.answer(method, params)
            pages.append(answer)
            cursor = answer.get("result", {}).get("nextCursor")
            if cursor is None:
                return pages
            params = {"cursor": cursor}


LISTS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")


def requests_naming(items: list[Item]) -> list[tuple[str, JSON]]:
    """A request naming each item of the world (and a name nobody has) by every method that names one."""
    asked: list[tuple[str, JSON]] = []
    for item in [
        *items,
        Item("tools", "nobody_tool", None, None),
        Item("resources", "nobody://x", None, None),
    ]:
        if item.kind == "tools":
            asked.append(("tools/call", {"name": item.key, "arguments": {}}))
        elif item.kind == "prompts":
            asked.append(("prompts/get", {"name": item.key, "arguments": {"topic": "x"}}))
            ref = {"type": "ref/prompt", "name": item.key}
            asked.append(("completion/complete", {"ref": ref, "argument": {"name": "topic", "value": "a"}}))
        else:
            uri = item.key.replace("{id}", "7")
            asked.append(("resources/read", {"uri": uri}))
            asked.append(("resources/subscribe", {"uri": uri}))
            asked.append(("resources/unsubscribe", {"uri": uri}))
        if item.kind == "resourceTemplates":
            ref = {"type": "ref/resource", "uri": item.key}
            asked.append(("completion/complete", {"ref": ref, "argument": {"name": "id", "value": "a"}}))
    return asked


async def everything_seen(caller: Caller, items: list[Item]) -> list[JSON]:
    """The answers to every list (each page) and every request naming an item, in order."""
    answers = [page for method in LISTS for page in await caller.every_page(method)]
    for method, params in requests_naming(items):
        answers.append(await caller.answer(method, params))
    return answers
