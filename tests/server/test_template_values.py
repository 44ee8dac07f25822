"""Resource template values: traversal is refused by default (opt-out per template), and a value
that does not fit the reader's parameter type is resource-not-found in the era's terms."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import RemoteError, Server
from mcpkit.testing import connect

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]


def file_server(**options: Any) -> tuple[Server, list[Any]]:
    server = Server("files")
    handed: list[Any] = []

    @server.resource("file:///{+path}", **options)
    def read_file(path: str) -> str:
        handed.append(path)
        return f"read {path}"

    @server.resource("notes://{name}", **options)
    def note(name: str) -> str:
        handed.append(name)
        return f"note {name}"

    @server.resource("demo://notes/{id}")
    def numbered(id: int) -> str:
        handed.append(id)
        return f"note #{id}"

    return server, handed


HOSTILE = [
    "file:///../../etc/passwd",
    "file:///docs/../../etc/passwd",
    "file:///%2E%2E/etc/passwd",
    "file:////etc/passwd",
    "file:///C:/Windows/win.ini",
    "file:///docs%00.txt",
    "notes://..%2F..%2Fetc%2Fpasswd",
    "notes://%2Fetc%2Fpasswd",
    "notes://..",
]


@pytest.mark.parametrize("era", ["handshake", "modern"])
@pytest.mark.parametrize("uri", HOSTILE)
async def test_a_traversing_template_value_is_not_found_and_never_reaches_the_reader(
    uri: str, era: str
) -> None:
    server, handed = file_server()
    async with connect(server, era=era) as client:
        with pytest.raises(RemoteError) as info:
            await client.read_resource(uri)
        assert info.value.code == (-32002 if era == "handshake" else -32602)
        assert (await client.read_resource("file:///docs/a..b/ok.txt"))["contents"][0]["text"] == (
            "read docs/a..b/ok.txt"
        )
    assert handed == ["docs/a..b/ok.txt"]


async def test_allow_traversal_hands_such_values_to_the_reader() -> None:
    server, handed = file_server(allow_traversal=True)
    async with connect(server, era="handshake") as client:
        read = await client.read_resource("file:///../../etc/passwd")
        await client.read_resource("notes://..%2F..%2Fetc")
    assert read["contents"][0]["text"] == "read ../../etc/passwd"
    assert handed == ["../../etc/passwd", "../../etc"]


def test_allow_traversal_is_refused_on_a_plain_resource() -> None:
    with pytest.raises(TypeError):
        Server("s").add_resource("file:///etc/motd", lambda: "x", allow_traversal=True)


async def test_subscribing_to_a_traversing_uri_is_not_found() -> None:
    server, _ = file_server()
    async with connect(server, era="handshake") as client:
        with pytest.raises(RemoteError) as info:
            await client.subscribe("file:///../../etc/passwd")
    assert info.value.code == -32002


@pytest.mark.parametrize(("era", "code"), [("handshake", -32002), ("modern", -32602)])
async def test_a_value_that_breaks_the_parameter_type_is_resource_not_found(era: str, code: int) -> None:
    server, handed = file_server()
    async with connect(server, era=era) as client:
        with pytest.raises(RemoteError) as info:
            await client.read_resource("demo://notes/abc")
        assert info.value.code == code
        assert (await client.read_resource("demo://notes/7"))["contents"][0]["text"] == "note #7"
    assert handed == [7]


@pytest.mark.parametrize(
    ("values", "refused"),
    [
        ({"p": "a/b/c.txt"}, False),
        ({"p": "a..b"}, False),
        ({"p": ".hidden/x"}, False),
        ({"p": "a/../b"}, True),
        ({"p": "a\\..\\b"}, True),
        ({"p": "/etc"}, True),
        ({"p": "\\\\server\\share"}, True),
        ({"p": "c:\\x"}, True),
        ({"p": "x\x00y"}, True),
        ({"p": ["ok", ".."]}, True),
    ],
)
def test_escapes_names_values_that_leave_their_path(values: dict[str, Any], refused: bool) -> None:
    from mcpkit.server.uri_template import escapes

    assert (escapes(values) is not None) is refused
