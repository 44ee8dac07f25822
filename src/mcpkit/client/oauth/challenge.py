"""What a 401/403 tells the client: the Bearer challenge of WWW-Authenticate (RFC 6750 §3, RFC 9728 §5.1)."""

from __future__ import annotations

import re
from dataclasses import dataclass

# auth-param = token BWS "=" BWS ( token / quoted-string ), RFC 9110 §11.2
# RFC 9449 §7.1: a DPoP challenge, alone or beside a Bearer one (a scheme, not a parameter named dpop)
_DPOP_SCHEME = re.compile(r"(?i)(?:^|,)\s*dpop(?:\s|,|$)")
_PARAM = re.compile(r'([A-Za-z0-9_\-.]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


@dataclass(frozen=True)
class Challenge:
    """The Bearer challenge's parameters that authorization uses."""

    resource_metadata: str | None = None
    scope: str | None = None
    error: str | None = None
    dpop_offered: bool = False  # the server accepts DPoP-bound tokens

    @property
    def insufficient_scope(self) -> bool:
        return self.error == "insufficient_scope"


def parse_challenge(header: str | None) -> Challenge:
    """The Bearer (or DPoP) challenge in a WWW-Authenticate value; an empty Challenge when there is none."""
    if not header:
        return Challenge()
    start = re.search(r"(?i)\b(?:bearer|dpop)\b", header)  # RFC 9449 §7.1: DPoP too
    if start is None:
        return Challenge()
    rest = header[start.end() :]
    params: dict[str, str] = {}
    for match in _PARAM.finditer(rest):
        quoted, bare = match.group(2), match.group(3)
        value = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else bare
        params.setdefault(match.group(1).lower(), value)
    return Challenge(
        resource_metadata=params.get("resource_metadata"),
        scope=params.get("scope") or None,
        error=params.get("error"),
        dpop_offered=bool(_DPOP_SCHEME.search(header)),
    )
