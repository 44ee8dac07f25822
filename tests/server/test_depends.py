"""Dependency injection into handlers, in both eras: `Depends(factory)` (sync and async functions,
generators, context managers; taking the Context, the lifespan's value or further dependencies), made
per call, once per call, closed after it; the lifespan's value by its type; none of it in the schema."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

import pytest

from mcpkit import Context, Server
from mcpkit.server import Depends
from mcpkit.testing import connect

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]
JSON = dict[str, Any]
ERAS = [{"protocol_version": "2025-11-25"}, {"era": "modern"}]


@dataclass
class Pool:
    """What the lifespan yields: handlers take it by this type."""

    log: list[str] = field(default_factory=list)
    opened: int = 0


@dataclass
class Session:
    number: int
    closed: bool = False


async def open_session(pool: Pool) -> AsyncIterator[Session]:  # the lifespan's value, by type
    pool.opened += 1
    session = Session(pool.opened)
    pool.log.append(f"open {session.number}")
    try:
        yield session
    except ValueError:
        pool.log.append(f"rollback {session.number}")
        raise
    finally:
        session.closed = True
        pool.log.append(f"close {session.number}")


def user_of(ctx: Context) -> str:  # a sync factory taking the Context
    return str(ctx.client_info.get("name"))


async def greeting(user: Annotated[str, Depends(user_of)], session: Session = Depends(open_session)) -> str:
    return f"{user}@{session.number}"


def build() -> tuple[Server, Pool]:
    pool = Pool()

    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[Pool]:
        yield pool

    server = Server("di", lifespan=lifespan)

    @server.tool()
    async def stock(
        sku: str,
        pool: Pool,  # the lifespan's value, by its type
        db: Session = Depends(open_session),
        again: Annotated[Session, Depends(open_session)] = None,  # type: ignore[assignment]
        hello: str = Depends(greeting),
    ) -> JSON:
        assert db is again and not db.closed  # one session per call, open during it
        pool.log.append(f"stock {sku} on {db.number}")
        return {"sku": sku, "session": db.number, "hello": hello}

    @server.tool()
    def fails(db: Session = Depends(open_session)) -> str:  # a sync tool: on a worker thread
        raise ValueError("no stock")

    @server.tool()
    def fresh(
        a: Session = Depends(open_session, cache=False), b: Session = Depends(open_session, cache=False)
    ) -> list[int]:
        return [a.number, b.number]

    @server.prompt()
    def brief(topic: str, hello: str = Depends(greeting)) -> str:
        return f"{hello}: {topic}"

    @server.resource("stock://{sku}")
    def level(sku: str, db: Session = Depends(open_session)) -> str:
        return f"{sku} via {db.number}"

    return server, pool


@pytest.mark.parametrize("era", ERAS, ids=["handshake", "stateless"])
async def test_dependencies_are_made_per_call_once_and_closed_after_it(era: JSON) -> None:
    server, pool = build()
    async with connect(server, name="ada", **era) as client:
        first = await client.call_tool("stock", {"sku": "A1"})
        second = await client.call_tool("stock", {"sku": "B2"})
    assert first["structuredContent"] == {"sku": "A1", "session": 1, "hello": "ada@1"}
    assert second["structuredContent"] == {"sku": "B2", "session": 2, "hello": "ada@2"}
    assert pool.log == ["open 1", "stock A1 on 1", "close 1", "open 2", "stock B2 on 2", "close 2"]


@pytest.mark.parametrize("era", ERAS, ids=["handshake", "stateless"])
async def test_a_failing_call_closes_its_dependencies_which_see_the_error(era: JSON) -> None:
    server, pool = build()
    async with connect(server, **era) as client:
        result = await client.call_tool("fails")
        fresh = await client.call_tool("fresh")
    assert result["isError"] is True and "no stock" in result["content"][0]["text"]
    assert pool.log[:3] == ["open 1", "rollback 1", "close 1"]
    assert fresh["structuredContent"] == {"result": [2, 3]}  # cache=False: one per parameter


@pytest.mark.parametrize("era", ERAS, ids=["handshake", "stateless"])
async def test_injected_parameters_are_not_in_any_schema(era: JSON) -> None:
    server, _ = build()
    async with connect(server, **era) as client:
        tools = {tool["name"]: tool for tool in await client.list_all_tools()}
        prompts = {prompt["name"]: prompt for prompt in await client.list_all_prompts()}
    assert tools["stock"]["inputSchema"] == {
        "type": "object",
        "properties": {"sku": {"type": "string"}},
        "required": ["sku"],
    }
    assert tools["fails"]["inputSchema"]["properties"] == {}
    assert prompts["brief"]["arguments"] == [{"name": "topic", "required": True}]


@pytest.mark.parametrize("era", ERAS, ids=["handshake", "stateless"])
async def test_prompts_and_resources_take_dependencies_too(era: JSON) -> None:
    server, pool = build()
    async with connect(server, name="bob", **era) as client:
        prompt = await client.get_prompt("brief", {"topic": "stock"})
        read = await client.read_resource("stock://C3")
    assert prompt["messages"][0]["content"]["text"] == "bob@1: stock"
    assert read["contents"][0]["text"] == "C3 via 2"
    assert pool.log == ["open 1", "close 1", "open 2", "close 2"]


def test_a_factory_parameter_that_cannot_be_injected_is_refused_at_registration() -> None:
    def needs(count: int) -> int:
        return count

    def tool(value: int = Depends(needs)) -> int:
        return value

    with pytest.raises(TypeError, match="'count' is neither"):
        Server("x").add_tool(tool)


def test_a_builtin_lifespan_type_names_arguments_not_the_lifespan() -> None:
    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
        yield {}

    server = Server("x", lifespan=lifespan)

    @server.tool()
    def takes(options: dict[str, Any]) -> int:
        return len(options)

    assert server.lifespan.value_type is None
    assert "options" in server.tools["takes"].input_schema["properties"]


LOG: list[str] = []


def numbers() -> Iterator[int]:
    LOG.append("enter numbers")
    yield 7
    LOG.append("exit numbers")


@asynccontextmanager
async def connection() -> AsyncIterator[str]:
    LOG.append("enter connection")
    yield "conn"
    LOG.append("exit connection")


class Resource:
    def __init__(self, ctx: Context) -> None:
        self.client = ctx.client_info.get("name")

    async def __aenter__(self) -> Resource:
        LOG.append("enter resource")
        return self

    async def __aexit__(self, *exc: object) -> None:
        LOG.append("exit resource")


class Shared:
    """A context manager a factory hands out but did not open for the call: never entered or closed."""

    def __enter__(self) -> Shared:
        raise AssertionError("entered")

    def __exit__(self, *exc: object) -> None:
        raise AssertionError("closed")


SHARED = Shared()


async def test_generators_context_manager_functions_and_classes_are_entered_and_left() -> None:
    LOG.clear()
    server = Server("x")

    @server.tool()
    async def both(
        n: int = Depends(numbers),
        conn: str = Depends(connection),
        res: Resource = Depends(Resource),
        shared: Shared = Depends(lambda: SHARED),
    ) -> str:
        LOG.append("call")
        assert shared is SHARED
        return f"{conn} {n} {res.client}"

    assert server.tools["both"].input_schema["properties"] == {}
    async with connect(server, name="cy") as client:
        result = await client.call_tool("both")
    assert result["content"][0]["text"] == "conn 7 cy"
    # made in order, closed in reverse
    assert LOG == [
        "enter numbers",
        "enter connection",
        "enter resource",
        "call",
        "exit resource",
        "exit connection",
        "exit numbers",
    ]
