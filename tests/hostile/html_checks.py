"""Read a rendered page the way a browser would and list anything in it that data could have injected."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from tests.hostile.payloads import MARKUP

_URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "data", "poster"}
_NEVER_OURS = {"iframe", "object", "embed", "svg", "base", "style", "frame", "frameset", "applet"}
_JSON_SCRIPT = re.compile(r'<script id="[^"]*" type="application/json">(.*?)</script>', re.S)


class _Finder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        where = f"<{tag} {' '.join(f'{k}={v!r}' for k, v in values.items())}>"
        if tag in _NEVER_OURS:
            self.found.append(f"element {where}")
        if tag == "script" and "src" not in values and values.get("type") != "application/json":
            self.found.append(f"inline script {where}")
        if tag == "img" and values.get("src") == "x":
            self.found.append(f"planted image {where}")
        if tag == "meta" and values.get("http-equiv", "").lower() == "refresh":
            self.found.append(f"refresh {where}")
        for name, value in values.items():
            if name.startswith("on"):
                self.found.append(f"event handler {where}")
            if name in _URL_ATTRIBUTES and value.strip().lower().startswith(("javascript:", "data:text")):
                self.found.append(f"script URL {where}")
            if name == "style" and "url(" in value:
                self.found.append(f"style with url() {where}")


def injected_markup(body: str) -> list[str]:
    """Elements and attributes no page of ours contains, which only injected data could have made."""
    finder = _Finder()
    finder.feed(body)
    finder.close()
    return finder.found


def raw_payloads(body: str) -> list[str]:
    """Names of the markup payloads that appear unescaped."""
    return [name for name, text in MARKUP.items() if text in body]


def json_script_problems(body: str) -> list[str]:
    """json_script blocks must never hold a '<' (so no '</script>' can close them early)."""
    return [block[:80] for block in _JSON_SCRIPT.findall(body) if "<" in block]


def page_problems(body: str) -> list[str]:
    """Everything the escaping tests forbid on one page."""
    return (
        [f"raw payload {name}" for name in raw_payloads(body)]
        + injected_markup(body)
        + [f"'<' in json_script: {block}" for block in json_script_problems(body)]
    )
