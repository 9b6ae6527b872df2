"""The search box's language: words and "exact phrases". Every token is quoted here, so no operator,
column filter, `NEAR`, `*` or unbalanced quote a user types ever reaches the FTS engine as syntax."""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_QUERY_CHARS = 2_000
MAX_TERMS = 32
_PHRASE = re.compile(r'"([^"]*)"?')
# What the index's tokenizer (unicode61) keeps: letters and digits; the rest only separates words.
WORD = re.compile(r"[^\W_]+", re.UNICODE)


class QueryError(ValueError):
    """A query with nothing to search for."""


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """Each term is a tuple of words: one word, or a phrase whose words must be adjacent and in order."""

    terms: tuple[tuple[str, ...], ...]

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(word for term in self.terms for word in term)


def parse_query(text: str) -> ParsedQuery:
    """The terms of `text`: quoted parts are phrases (an unclosed quote runs to the end), the rest words."""
    text = text[:MAX_QUERY_CHARS]
    terms: list[tuple[str, ...]] = []
    position = 0
    for match in _PHRASE.finditer(text):
        terms.extend((word,) for word in _words(text[position : match.start()]))
        phrase = _words(match.group(1))
        if phrase:
            terms.append(phrase)
        position = match.end()
    terms.extend((word,) for word in _words(text[position:]))
    if not terms:
        raise QueryError("the query has no words to search for (letters or digits)")
    return ParsedQuery(tuple(dict.fromkeys(terms))[:MAX_TERMS])


def _words(text: str) -> tuple[str, ...]:
    return tuple(WORD.findall(text))


def _quoted(words: tuple[str, ...]) -> str:
    # A token holds only letters and digits, so the doubling never fires; kept so quoting stays safe alone.
    return '"' + " ".join(words).replace('"', '""') + '"'


def fts_match(query: ParsedQuery) -> str:
    """The FTS5 MATCH expression: every term quoted, all required."""
    return " AND ".join(_quoted(term) for term in query.terms)
