"""The OAuthClient the conformance client uses for the suite's auth/* scenarios.

The harness's mock authorization servers approve at once: the "user agent" here GETs the
authorization URL without following the redirect and hands back its Location. The scenario's
context (MCP_CONFORMANCE_CONTEXT) decides the grant: pre-registered secrets, a private key for
client_credentials, an IdP's ID token for the cross-app (ID-JAG) flow, a workload JWT.
"""

from __future__ import annotations

from typing import Any

import httpx

from mcpkit.client.oauth import ClientCredentials, ClientMetadata, OAuthClient, OAuthError, ServerMetadata

JSON = dict[str, Any]
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"


async def follow_once(url: str) -> str:
    """The redirect an auto-approving authorization endpoint answers with."""
    async with httpx.AsyncClient(follow_redirects=False, timeout=10) as http:
        response = await http.get(url)
    location = response.headers.get("Location")
    if response.status_code not in (301, 302, 303, 307, 308) or not location:
        raise OAuthError(
            "authorization_failed", f"HTTP {response.status_code} from the authorization endpoint"
        )
    return location


def id_jag_source(context: JSON) -> Any:
    """SEP-990: trade the IdP's ID token for an ID-JAG (RFC 8693) naming the server's AS and resource."""

    async def assertion(metadata: ServerMetadata, resource: str) -> str:
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": context["idp_id_token"],
            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "audience": metadata.issuer,
            "resource": resource,
            "client_id": context.get("idp_client_id", ""),
        }
        async with httpx.AsyncClient(timeout=10) as http:
            response = await http.post(context["idp_token_endpoint"], data=form)
        body = response.json()
        if response.status_code != 200 or "access_token" not in body:
            raise OAuthError(str(body.get("error") or "token_exchange_failed"), str(body))
        return str(body["access_token"])

    return assertion


def oauth_client(url: str, scenario: str, context: JSON) -> OAuthClient:
    metadata = ClientMetadata(
        client_name="mcpkit-conformance-client", redirect_uris=["http://localhost:3030/callback"]
    )
    common: JSON = {"client_metadata": metadata, "user_agent": follow_once}
    client_id = context.get("client_id")
    if "idp_id_token" in context:
        client = ClientCredentials(client_id, context.get("client_secret"))
        return OAuthClient(url, grant="jwt_bearer", assertion=id_jag_source(context), client=client, **common)
    if "valid_jwt" in context:

        async def workload_jwt(metadata: ServerMetadata, resource: str) -> str:
            return str(context["valid_jwt"])

        client = ClientCredentials(client_id, token_endpoint_auth_method="none")
        return OAuthClient(url, grant="jwt_bearer", assertion=workload_jwt, client=client, **common)
    if "private_key_pem" in context:
        client = ClientCredentials(
            client_id,
            token_endpoint_auth_method="private_key_jwt",
            private_key_pem=context["private_key_pem"],
            signing_algorithm=context.get("signing_algorithm", "RS256"),
        )
        return OAuthClient(url, grant="client_credentials", client=client, **common)
    if client_id and "client-credentials" in scenario:
        client = ClientCredentials(client_id, context.get("client_secret"))
        return OAuthClient(url, grant="client_credentials", client=client, **common)
    if client_id:
        client = ClientCredentials(client_id, context.get("client_secret"))
        return OAuthClient(url, client=client, client_issuer=context.get("issuer"), **common)
    return OAuthClient(url, client_metadata_url=CLIENT_METADATA_URL, **common)
