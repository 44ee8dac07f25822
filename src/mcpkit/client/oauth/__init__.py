"""OAuth 2.1 authorization for MCP HTTP clients: `connect_http(url, auth=OAuthClient(url, ...))`."""

from .authorize import UserAgent
from .discovery import ResourceMetadata, ServerMetadata
from .errors import OAuthError
from .provider import OAuthClient
from .registration import ClientMetadata
from .store import ClientCredentials, InMemoryTokenStore, Tokens, TokenStore

__all__ = [
    "ClientCredentials",
    "ClientMetadata",
    "InMemoryTokenStore",
    "OAuthClient",
    "OAuthError",
    "ResourceMetadata",
    "ServerMetadata",
    "TokenStore",
    "Tokens",
    "UserAgent",
]
