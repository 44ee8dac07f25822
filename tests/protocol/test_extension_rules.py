"""Extension methods in the sans-I/O core (SEP-2133): a method an extension adds passes the method
table only where that side knows its rule, and only to a server that declared the extension."""

from __future__ import annotations

from typing import Any

import orjson

from conftest import requirement
from mcpkit.protocol import events as ev
from mcpkit.protocol.capabilities import Role
from mcpkit.protocol.connection import Connection
from mcpkit.protocol.extensions import extension_rule, settings_of, with_extensions

EXT = "io.example/search"
REQUEST: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": "search/run", "params": {}}


def ready_server(capabilities: dict[str, Any], known: bool) -> Connection:
    server = Connection(Role.SERVER, info={"name": "s", "version": "1"}, capabilities=capabilities)
    if known:
        server.extension_rules["search/run"] = extension_rule(EXT)
    server.assume("2025-11-25")
    return server


def answer(server: Connection) -> list[ev.Event]:
    return server.receive_data(orjson.dumps(REQUEST))


def error_code(events: list[ev.Event]) -> int | None:
    messages = [e.message for e in events if isinstance(e, ev.SendMessage)]
    return int(messages[0]["error"]["code"]) if messages else None


def test_an_extension_method_reaches_the_server_that_declared_it() -> None:
    declared = with_extensions({}, {EXT: {}})
    [received] = answer(ready_server(declared, known=True))
    assert isinstance(received, ev.RequestReceived) and received.method == "search/run"


@requirement("ext-undeclared-method")
def test_it_is_not_a_method_where_the_rule_is_unknown_or_the_extension_undeclared() -> None:
    assert error_code(answer(ready_server(with_extensions({}, {EXT: {}}), known=False))) == -32601
    assert error_code(answer(ready_server({}, known=True))) == -32601


@requirement("ext-settings-object")
def test_settings_must_be_an_object_to_declare_an_extension() -> None:
    assert settings_of({"extensions": {EXT: {"x": 1}}}, EXT) == {"x": 1}
    assert settings_of({"extensions": {EXT: True}}, EXT) is None
    assert settings_of({"extensions": []}, EXT) is None
