"""Ranked tool search over a catalog: Okapi BM25 on names, titles, descriptions and parameter names.

A few dozen lines beat a dependency here: the corpus is small (thousands of short documents), rebuilt
when a list changes, and queried by a model. Field weights repeat a field's terms: a word in a tool's
name says more about it than the same word deep in its description.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Final

from ...protocol.jsonrpc import JSON

__all__ = ["ToolIndex", "terms"]

_WORD: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_STOP_WORDS = (
    "a an and are as at be by for from has how i in is it its me my of on or the this"
    " to was what when which with you your can do does get"
)
_STOP: Final = frozenset(_STOP_WORDS.split())
# Everyday verbs for the actions tool names spell one way (create/delete/update/search/list/export): a
# query's verb also counts as the name's. Query-side only, so a tool's own words keep their weight.
_VERBS: Final = {
    "create": "add make new open post send upload start write",
    "delete": "remove drop erase destroy discard cancel",
    "update": "change edit modify rename set move assign",
    "search": "find look lookup query",
    "list": "show all which enumerate",
    "export": "download dump",
    "get": "fetch read retrieve",
}
_SYNONYM: Final = {word: verb for verb, words in _VERBS.items() for word in words.split()}
_K1, _B = 1.2, 0.75
_WEIGHTS: Final = {"name": 3, "title": 2, "params": 2, "description": 1, "param_text": 1}


def _stem(word: str) -> str:
    """Plurals only: `issues` finds `issue`, `queries` finds `query`; more would merge unrelated words."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def terms(text: str) -> list[str]:
    """The search terms of `text`: words split at case changes and punctuation, lowercased, stemmed."""
    return [_stem(w.lower()) for w in _WORD.findall(text) if w.lower() not in _STOP]


def _fields(tool: JSON) -> dict[str, str]:
    schema = tool.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    props = props if isinstance(props, dict) else {}
    described = [p.get("description", "") for p in props.values() if isinstance(p, dict)]
    return {
        "name": str(tool.get("name", "")),
        "title": str(tool.get("title") or (tool.get("annotations") or {}).get("title") or ""),
        "description": str(tool.get("description") or ""),
        "params": " ".join(props),
        "param_text": " ".join(d for d in described if isinstance(d, str)),
    }


class ToolIndex:
    """BM25 over tool definitions (`name`, `title`, `description`, `inputSchema` properties)."""

    def __init__(self, tools: Iterable[JSON], *, synonyms: bool = True) -> None:
        self.tools, self.synonyms = list(tools), synonyms
        bags: list[Counter[str]] = []
        for tool in self.tools:
            bag: Counter[str] = Counter()
            for field_name, text in _fields(tool).items():
                for term in terms(text):
                    bag[term] += _WEIGHTS[field_name]
            bags.append(bag)
        average = sum(b.total() for b in bags) / len(bags) if bags else 0.0
        # Each posting carries its BM25 term-frequency factor, so a query only adds idf-weighted numbers.
        self._postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for doc, bag in enumerate(bags):
            norm = _K1 * (1 - _B + _B * bag.total() / average)
            for term, tf in bag.items():
                self._postings[term].append((doc, tf * (_K1 + 1) / (tf + norm)))

    def __len__(self) -> int:
        return len(self.tools)

    def _totals(self, query: str) -> dict[int, float]:
        n = len(self.tools)
        totals: dict[int, float] = defaultdict(float)
        asked = terms(query)
        if self.synonyms:
            asked += [_SYNONYM[t] for t in asked if t in _SYNONYM]
        for term in dict.fromkeys(asked):  # in query order: the same float sums, the same ties, every run
            postings = self._postings.get(term)
            if not postings:
                continue
            idf = math.log(1 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
            for doc, weight in postings:
                totals[doc] += idf * weight
        return totals

    def scores(self, query: str, limit: int | None = None) -> list[tuple[float, int]]:
        """(score, document) for the tools sharing a term with `query` (the `limit` best), best first;
        equal scores keep catalog order."""
        ranked = ((-score, doc) for doc, score in self._totals(query).items())
        best = sorted(ranked) if limit is None else heapq.nsmallest(limit, ranked)
        return [(-negative, doc) for negative, doc in best]

    def search(self, query: str, limit: int = 5) -> list[JSON]:
        """The `limit` best-matching tool definitions for `query`."""
        return [self.tools[doc] for _, doc in self.scores(query, limit)]
