"""The Host/Origin guard of the Streamable HTTP server (transports "Security Warning"), without ASGI."""

from __future__ import annotations

import pytest

from mcpkit.protocol.http_rules import DEFAULT_HOSTS, DEFAULT_ORIGINS, HTTPRefusal, guard


def refusal(headers: dict[str, str], hosts: tuple[str, ...] = DEFAULT_HOSTS) -> int | None:
    try:
        guard(headers, hosts, DEFAULT_ORIGINS)
    except HTTPRefusal as refused:
        return refused.status
    return None


@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "127.0.0.1:1", "[::1]:443", "LOCALHOST"])
def test_local_hosts_on_any_port_pass_by_default(host: str) -> None:
    assert refusal({"host": host}) is None


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "", "localhost.evil.example"])
def test_another_or_a_missing_host_is_misdirected(host: str) -> None:
    assert refusal({"host": host}) == 421


def test_a_host_entry_with_a_port_matches_only_that_port_and_a_star_matches_all() -> None:
    assert refusal({"host": "api.example:8443"}, ("api.example:8443",)) is None
    assert refusal({"host": "api.example:9000"}, ("api.example:8443",)) == 421
    assert refusal({"host": "anything.at.all"}, ("*",)) is None


def test_a_foreign_origin_is_forbidden_and_a_missing_one_passes() -> None:
    assert refusal({"host": "localhost", "origin": "https://evil.example"}) == 403
    assert refusal({"host": "localhost", "origin": "http://localhost:5173"}) is None
    assert refusal({"host": "localhost"}) is None


def test_the_host_is_checked_before_the_origin() -> None:
    assert refusal({"host": "evil.example", "origin": "https://evil.example"}) == 421
