"""A stdio server whose tool can return an integer orjson cannot encode, for test_unencodable_results."""

from __future__ import annotations

from mcpkit import Server

server = Server("overflow")


@server.tool()
def add(a: int, b: int) -> int:
    return a + b


if __name__ == "__main__":
    server.run()
