"""OAuth 2.1 authorization for MCP HTTP clients: `connect_http(url, auth=OAuthClient(url, ...))`."""

from .authorize import UserAgent
from .discovery import ResourceMetadata, ServerMetadata
from .dpop import DPoP
from .errors import OAuthError
from .provider import OAuthClient
from .registration import ClientMetadata
from .store import ClientCredentials, InMemoryTokenStore, Tokens, TokenStore

__all__ = [
    "ClientCredentials",
    "ClientMetadata",
    "DPoP",
    "InMemoryTokenStore",
    "OAuthClient",
    "OAuthError",
    "ResourceMetadata",
    "ServerMetadata",
    "TokenStore",
    "Tokens",
    "UserAgent",
]
