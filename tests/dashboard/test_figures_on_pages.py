"""Every number on every page of Mycel's sample home goes through the formatting layer
(memory_core/figures.py): no page shows a whole number above 9,999 without thousands separators, a number
of a thousand or more with a fraction and no separators ("1159.06", "4632.0"), or a fraction with more
digits than the layer writes (two: "$0.96", "0.50", "2.73 MB"; "$0.959389", "0.48236" are not).

Text Mycel stored is shown as it was written (a tool output's "indexed 12408 documents" is the agent's,
not ours), so the check reads what the pages themselves write: it leaves out <pre>, <code>, scripts and
form fields, and the elements that show stored text or ids (messages, previews, snippets, arguments,
monospace ids and paths, the panels' rows of Mycel's side tables as stored). The checker's own test shows
it catches what the pages used to show (and run over the code before the layer, this file failed on the
Cost, Calibration, prompt-cache and Config pages)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader

# Elements whose text is Mycel's (or an id, a path, a hash): removed with everything inside them.
_STORED = re.compile(
    r"<(?P<tag>pre|code|script|style|textarea|select|kbd|samp)\b[^>]*>.*?</(?P=tag)>"
    r"|<(?P<tag2>\w+)\b[^>]*\bclass=\"[^\"]*\b(?:text|preview|snippet|args|full-text|scroll|mono|diff|panel)\b[^\"]*\"[^>]*>",
    re.S,
)
_TAG = re.compile(r"<[^>]+>")

# A whole number of five digits or more with no separators, standing alone (not inside an id, a time,
# a date, a version, a path or a hex digest).
_BARE_INTEGER = re.compile(r"(?<![\w.,:/#\-+])\d{5,}(?![\w,:/\-]|\.\d)")
# A number of a thousand or more with a fraction and no separators: 1159.06, 4632.0.
_BARE_DECIMAL = re.compile(r"(?<![\w.,:/#\-])\d{4,}\.\d+(?![\w.])")
# A fraction with three digits or more: 0.48236, $0.959389.
_LONG_FRACTION = re.compile(r"(?<![\w.:/#\-])\d+\.\d{3,}(?![\w.])")


def _remove_stored(page: str) -> str:
    """The page without the elements showing stored text: each element named by _STORED is cut to its
    matching close tag (nested same-name tags counted)."""
    out: list[str] = []
    at = 0
    while (found := _STORED.search(page, at)) is not None:
        out.append(page[at : found.start()])
        tag = found.group("tag2")
        if tag is None:  # a <pre>, <code>…: the pattern matched it whole
            at = found.end()
            continue
        depth, cursor = 1, found.end()
        opener, closer = re.compile(rf"<{tag}\b"), f"</{tag}>"
        while depth and cursor < len(page):
            close = page.find(closer, cursor)
            if close < 0:
                cursor = len(page)
                break
            depth += len(opener.findall(page, cursor, close)) - 1
            cursor = close + len(closer)
        at = cursor
    out.append(page[at:])
    return "".join(out)


def visible_figures_text(page: str) -> str:
    """What a reader sees of the page's own words and figures."""
    body = re.split(r"<body\b[^>]*>", page, maxsplit=1)[-1]
    return " ".join(html.unescape(_TAG.sub(" ", _remove_stored(body))).split())


# A JSON example in the page's words ("context_limit": 50000) is JSON, which has no thousands separators.
_JSON_VALUE = re.compile(r'"[\w.]+":\s*-?\d[\d.]*')


def unformatted(text: str) -> list[str]:
    """Every number in `text` that did not go through the formatting layer, with a little context."""
    text = _JSON_VALUE.sub('"…": …', text)
    found: list[str] = []
    for pattern in (_BARE_INTEGER, _BARE_DECIMAL, _LONG_FRACTION):
        for match in pattern.finditer(text):
            found.append(text[max(0, match.start() - 40) : match.end() + 20])
    return found


def test_the_checker_catches_what_the_pages_used_to_show() -> None:
    # The figures, as the pages wrote them before the formatting layer.
    for before in (
        "Projected after 50 more turns each 936194673",
        "0 = look the model up (fallback 128000).",
        "Cost $0.959389",
        "Overhead 1159.06",
        "Estimate 4632.0",
        "Rate 0.48236",
        "p50 13.043",
    ):
        assert unformatted(before), before
    for after in (
        "Projection: after 50 more turns of each 936 MB projected",
        "Cost $0.96",
        "Overhead 1,159",
        "Estimate 4,632",
        "Rate 0.48",
        "p50 13.04 · 111.6 % · 2026-11-30 10:12 · 2.73 MB · call 12 · 9,999 · <$0.01",
        'keys (e.g. "context_limit": 50000 at the top of runtime.json) are ignored',
    ):
        assert unformatted(after) == [], after
    # Stored text and ids are not the pages' figures.
    page = (
        '<body><p class="text">indexed 12408 documents in 3.9s</p><span class="mono">1f1eca68-bdc9</span>'
        "<pre>0.48236</pre><p>Rate 0.48</p></body>"
    )
    assert visible_figures_text(page) == "Rate 0.48"


def _pages(client: Client, threads: list[tuple[str, str | None, int]]) -> Iterator[str]:
    yield from (
        "/",
        reverse("threads"),
        f"{reverse('search')}?q=the",
        f"{reverse('search')}?q=Bash",
        reverse("storage"),
        f"{reverse('retention')}?keep_last=2",
        reverse("cost"),
        "/context/",
        reverse("context_calibration"),
        reverse("context_tools"),
        reverse("context_cache"),
        reverse("config"),
        reverse("audit"),
    )
    for thread_id, head, calls in threads:
        page = client.get(reverse("thread", args=[thread_id]))
        yield reverse("thread", args=[thread_id])
        yield from sorted(set(re.findall(r'hx-get="(/threads/[^"]*/panels/[^"]*)"', page.content.decode())))
        for number in sorted({1, calls} - {0}):
            yield reverse("call", args=[thread_id, number])
        if head is not None:
            yield reverse("checkpoint", args=[thread_id, head])
        yield reverse("dry_run", args=[thread_id])
        yield f"{reverse('storage')}?thread={thread_id}"
        yield f"{reverse('context_cache')}?thread={thread_id}"
        yield f"{reverse('config')}?thread={thread_id}"


@pytest.fixture
def threads(sample_home: Path) -> list[tuple[str, str | None, int]]:
    reader = MycelReader(resolve_locations())
    rows = reader.list_threads().value
    calls = {
        row.thread_id: sum(
            1
            for m in reader.get_state(row.thread_id, row.head_checkpoint_id).value.messages
            if m.type == "ai"
        )
        for row in rows
        if row.head_checkpoint_id
    }
    return [(row.thread_id, row.head_checkpoint_id, calls.get(row.thread_id, 0)) for row in rows]


def test_every_number_on_every_page_goes_through_the_layer(
    operator_client: Client, threads: list[tuple[str, str | None, int]]
) -> None:
    problems: dict[str, list[str]] = {}
    seen = 0
    for url in _pages(operator_client, threads):
        response = operator_client.get(url, follow=True)
        assert response.status_code == 200, url
        text = visible_figures_text(response.content.decode())
        assert text, url
        seen += 1
        if found := unformatted(text):
            problems[url] = found
    assert seen >= 50
    assert problems == {}
