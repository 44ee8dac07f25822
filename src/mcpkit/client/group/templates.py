"""Whether a URI is one a resource template describes (RFC 6570 expressions, matched loosely).

Only routing needs this: which server to ask for a URI that no server listed. `{var}` matches one
path segment, `{+var}` and `{#var}` anything, `{?a,b}` / `{&a}` an optional query part.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["template_matches"]

_EXPRESSION = re.compile(r"\{([+#./;?&]?)[^}]*\}")
_PATTERN_OF = {
    "": "[^/?#]+",
    "+": ".+",
    "#": "(#.*)?",
    ".": r"(\..*)?",
    "/": "(/.*)?",
    ";": "(;.*)?",
    "?": r"(\?.*)?",
    "&": "(&.*)?",
}


@lru_cache(maxsize=1024)
def _compiled(template: str) -> re.Pattern[str]:
    parts, end = [], 0
    for m in _EXPRESSION.finditer(template):
        parts.append(re.escape(template[end : m.start()]))
        parts.append(_PATTERN_OF[m.group(1)])
        end = m.end()
    parts.append(re.escape(template[end:]))
    return re.compile("".join(parts))


def template_matches(template: str, uri: str) -> bool:
    return _compiled(template).fullmatch(uri) is not None
