"""Allow/deny lists of globs on what a group shows: tool and prompt names, resource URIs (and templates).

An item is shown when no allow list is given or one of its globs matches, and no deny glob matches.
A server's filters match its own names; the group's match the names the catalog gives (`server.tool`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

__all__ = ["KINDS", "Filters", "Rule"]

KINDS = ("tools", "prompts", "resources")


@dataclass(frozen=True)
class Rule:
    """One kind's globs (case-sensitive, as tool names are)."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    def admits(self, name: str) -> bool:
        if self.allow and not any(fnmatchcase(name, glob) for glob in self.allow):
            return False
        return not any(fnmatchcase(name, glob) for glob in self.deny)


@dataclass(frozen=True)
class Filters:
    """A Rule per kind; `tools`, `prompts` and `resources` (which covers resource templates)."""

    tools: Rule = field(default_factory=Rule)
    prompts: Rule = field(default_factory=Rule)
    resources: Rule = field(default_factory=Rule)

    def admits(self, kind: str, name: str) -> bool:
        rule: Rule = getattr(self, kind)
        return rule.admits(name)

    @classmethod
    def of(cls, **rules: dict[str, list[str]] | Rule) -> Filters:
        """`Filters.of(tools={"deny": ["*delete*"]})`, from code."""
        built = {k: v if isinstance(v, Rule) else _rule(v, k) for k, v in rules.items()}
        return cls(**built)

    @classmethod
    def from_config(cls, entry: dict[str, Any], where: str) -> Filters:
        """The `tools` / `prompts` / `resources` keys of a config entry (ValueError naming `where`)."""
        return cls(
            **{kind: _rule(entry[kind], f"{where}: {kind}") for kind in KINDS if entry.get(kind) is not None}
        )


def _rule(value: Any, where: str) -> Rule:
    if not isinstance(value, dict) or set(value) - {"allow", "deny"}:
        raise ValueError(f"{where} takes {{'allow': [globs], 'deny': [globs]}}")
    lists = {}
    for key in ("allow", "deny"):
        globs = value.get(key) or []
        if not isinstance(globs, list) or not all(isinstance(g, str) for g in globs):
            raise ValueError(f"{where}: {key} is a list of glob strings")
        lists[key] = tuple(globs)
    return Rule(**lists)
