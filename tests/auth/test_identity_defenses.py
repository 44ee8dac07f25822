"""The known attacks on an OAuth proxy in front of an identity provider, each refused by mcpkit's
authorization server (the upstream is the real oidc-provider): redirect URIs checked exactly per client,
no open redirect, `state` and PKCE bound to the browser that started the login, a consent that cannot be
skipped, replayed or carried to another client, and a consent form that other sites cannot post."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import identity_harness
import pytest
from identity_harness import (
    CLIENT_REDIRECT,
    ISSUER,
    RESOURCE,
    BrowserSession,
    Request,
    form_fields,
    query_of,
    redeem,
    register,
)

from mcpkit.auth.identity import AuthorizationServer

upstream = identity_harness.upstream
proxy = identity_harness.proxy
browser = identity_harness.browser
pytestmark = pytest.mark.anyio


@pytest.fixture
async def attacker() -> AsyncIterator[BrowserSession]:
    session = BrowserSession("mallory")
    yield session
    await session.aclose()


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "https://evil.example/callback",
        CLIENT_REDIRECT + "/more",
        CLIENT_REDIRECT + "?next=https://evil.example",
        CLIENT_REDIRECT.replace("8976", "8977"),
        CLIENT_REDIRECT.replace("127.0.0.1", "localhost"),
        CLIENT_REDIRECT + "/",
    ],
)
async def test_a_redirect_uri_the_client_did_not_register_exactly_is_refused_without_redirecting(
    proxy: AuthorizationServer, browser: BrowserSession, redirect_uri: str
) -> None:
    client = await register()
    page = await browser.consent_page(Request(client["client_id"], redirect_uri=redirect_uri))
    assert page.status_code == 400 and "location" not in page.headers
    assert "redirect_uri is not one this client registered" in page.text and 'name="consent"' not in page.text


async def test_an_unknown_client_gets_an_error_page_and_no_redirect(
    proxy: AuthorizationServer, browser: BrowserSession
) -> None:
    page = await browser.consent_page(Request("no-such-client", redirect_uri="https://evil.example/cb"))
    assert page.status_code == 400 and "location" not in page.headers and "Unknown application" in page.text


async def test_errors_after_the_redirect_uri_is_known_go_only_to_that_uri(
    proxy: AuthorizationServer, browser: BrowserSession
) -> None:
    client = await register()
    request = Request(client["client_id"])
    plain = await browser.consent_page(request, code_challenge_method="plain")
    missing = await browser.consent_page(request, code_challenge=None, code_challenge_method=None)
    other = await browser.consent_page(request, resource="https://other.example/mcp")
    for answer, error in (
        (plain, "invalid_request"),
        (missing, "invalid_request"),
        (other, "invalid_target"),
    ):
        assert answer.status_code == 302 and answer.headers["location"].startswith(CLIENT_REDIRECT + "?")
        assert query_of(answer.headers["location"])["error"] == error
        assert query_of(answer.headers["location"])["state"] == request.state


async def test_registration_refuses_redirect_uris_that_could_carry_codes_away(
    proxy: AuthorizationServer,
) -> None:
    async with httpx.AsyncClient() as http:
        for uri in ("javascript:alert(1)", "http://evil.example/cb", "https://app.example/cb#frag", "data:x"):
            answer = await http.post(f"{ISSUER}/register", json={"redirect_uris": [uri]})
            assert answer.status_code == 400 and answer.json()["error"] == "invalid_redirect_uri", uri


async def test_a_state_carried_to_another_browser_is_refused_at_the_callback(
    proxy: AuthorizationServer, browser: BrowserSession, attacker: BrowserSession
) -> None:
    """Login CSRF: the attacker's provider answer (its code and state) opened in the victim's browser."""
    client = await register()
    request = Request(client["client_id"])
    callback = await attacker.at_provider(await attacker.to_provider(request))
    await browser.consent_page(Request(client["client_id"]))  # the victim has a session of its own
    refused = await browser.http.get(callback)
    assert refused.status_code == 400 and "location" not in refused.headers
    assert "not started in this browser" in refused.text
    completed = await attacker.http.get(callback)  # the refusal did not spend it for its own browser
    assert completed.status_code == 302 and "code" in query_of(completed.headers["location"])


async def test_a_code_needs_the_verifier_of_its_own_challenge_and_is_spent_by_a_wrong_one(
    proxy: AuthorizationServer, browser: BrowserSession
) -> None:
    client = await register()
    request = Request(client["client_id"])
    code = await browser.sign_in(request)
    wrong = await redeem(request, code, code_verifier=Request("x").verifier)
    again = await redeem(request, code)
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


async def test_a_code_is_refused_to_another_client_and_to_another_redirect_uri(
    proxy: AuthorizationServer, browser: BrowserSession
) -> None:
    mine, theirs = await register(), await register(redirect_uris=[CLIENT_REDIRECT, "http://127.0.0.1:9/cb"])
    request = Request(mine["client_id"])
    stolen = await redeem(request, await browser.sign_in(request), client_id=theirs["client_id"])
    moved = await redeem(request, await browser.sign_in(request), redirect_uri="http://127.0.0.1:9/cb")
    assert stolen.json()["error"] == "invalid_grant" and moved.json()["error"] == "invalid_grant"


async def test_the_callback_cannot_be_reached_without_consent(
    proxy: AuthorizationServer, browser: BrowserSession, upstream: str
) -> None:
    """Skipping the consent page: a provider answer with a state the proxy never sent is refused."""
    client = await register()
    await browser.consent_page(Request(client["client_id"]))  # a page shown, never answered
    forged = await browser.http.get(f"{ISSUER}/callback", params={"code": "x", "state": "made-up"})
    assert forged.status_code == 400 and "location" not in forged.headers


async def test_a_consent_form_answered_twice_is_refused_the_second_time(
    proxy: AuthorizationServer, browser: BrowserSession
) -> None:
    client = await register()
    fields = form_fields(await browser.consent_page(Request(client["client_id"])))
    first = await browser.post_consent({**fields, "decision": "approve"})
    replay = await browser.post_consent({**fields, "decision": "approve"})
    assert first.status_code == 303 and first.headers["location"].startswith(
        proxy.login.upstream.authorization_endpoint
    )
    assert (
        replay.status_code == 400 and "already answered" in replay.text and "location" not in replay.headers
    )


async def test_a_consent_given_to_one_client_is_neither_remembered_nor_usable_for_another(
    proxy: AuthorizationServer, browser: BrowserSession
) -> None:
    first, second = await register(), await register(client_name="Other Client")
    fields = form_fields(await browser.consent_page(Request(first["client_id"])))
    carried = await browser.post_consent({**fields, "client_id": second["client_id"], "decision": "approve"})
    assert carried.status_code == 403 and "location" not in carried.headers
    await browser.sign_in(Request(first["client_id"]))  # consent given to the first client
    page = await browser.consent_page(Request(second["client_id"]))
    assert page.status_code == 200 and "Other Client" in page.text and 'name="consent"' in page.text


async def test_a_consent_form_posted_without_its_csrf_token_from_another_site_or_browser_is_refused(
    proxy: AuthorizationServer, browser: BrowserSession, attacker: BrowserSession
) -> None:
    client = await register()
    fields = form_fields(await browser.consent_page(Request(client["client_id"])))
    approve = {**fields, "decision": "approve"}
    no_csrf = await browser.post_consent({k: v for k, v in approve.items() if k != "csrf"})
    bad_csrf = await browser.post_consent({**approve, "csrf": "A" * 43})
    other_site = await browser.post_consent(approve, origin="https://evil.example")
    await attacker.consent_page(Request(client["client_id"]))
    other_browser = await attacker.post_consent(approve)
    for refused in (no_csrf, bad_csrf, other_site, other_browser):
        assert refused.status_code == 403 and "location" not in refused.headers
    allowed = await browser.post_consent(approve)  # none of them spent the user's own form
    assert allowed.status_code == 303


async def test_denying_consent_sends_access_denied_to_the_client_only(
    proxy: AuthorizationServer, browser: BrowserSession
) -> None:
    client = await register()
    request = Request(client["client_id"])
    denied = await browser.post_consent(
        {**form_fields(await browser.consent_page(request)), "decision": "deny"}
    )
    assert denied.status_code == 303 and denied.headers["location"].startswith(CLIENT_REDIRECT)
    assert query_of(denied.headers["location"]) | {"error_description": ""} == {
        "error": "access_denied",
        "error_description": "",
        "state": request.state,
        "iss": ISSUER,
    }


async def test_the_consent_page_cannot_be_framed_or_cached(
    proxy: AuthorizationServer, browser: BrowserSession
) -> None:
    client = await register()
    page = await browser.consent_page(Request(client["client_id"]))
    assert (
        page.headers["x-frame-options"] == "DENY"
        and "frame-ancestors 'none'" in page.headers["content-security-policy"]
    )
    assert page.headers["cache-control"] == "no-store"
    cookie = page.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie


async def test_the_providers_own_token_does_not_open_the_mcp_server(
    proxy: AuthorizationServer, browser: BrowserSession
) -> None:
    """No token passthrough: only tokens mcpkit issued for this resource are accepted."""
    client = await register()
    request = Request(client["client_id"])
    answer = (await redeem(request, await browser.sign_in(request))).json()
    access = await proxy.verifier.verify(answer["access_token"])
    upstream_token = access.upstream.access_token  # type: ignore[attr-defined]
    async with httpx.AsyncClient() as http:
        refused = await http.post(RESOURCE, headers={"authorization": f"Bearer {upstream_token}"})
    assert refused.status_code == 401 and "invalid_token" in refused.headers["www-authenticate"]


async def test_a_provider_answer_naming_another_issuer_is_refused_as_a_mix_up(
    proxy: AuthorizationServer, browser: BrowserSession
) -> None:
    """RFC 9207: the provider's real code, but the answer says another issuer sent it."""
    client = await register()
    request = Request(client["client_id"])
    callback = await browser.at_provider(await browser.to_provider(request))
    answer = query_of(callback)
    assert answer["iss"] == proxy.login.upstream.issuer  # oidc-provider names itself
    mixed = await browser.http.get(f"{ISSUER}/callback", params={**answer, "iss": "https://evil.example"})
    assert mixed.status_code == 302 and query_of(mixed.headers["location"])["error"] == "access_denied"
