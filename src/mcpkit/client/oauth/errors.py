"""Why authorization did not end with a token."""

from __future__ import annotations


class OAuthError(Exception):
    """Authorization failed: discovery, registration, the authorization response or the token endpoint.

    `error` is the OAuth error code when a server sent one (RFC 6749 §5.2), else a short local reason.
    """

    def __init__(self, error: str, description: str = "") -> None:
        super().__init__(f"{error}: {description}" if description else error)
        self.error = error
        self.description = description
