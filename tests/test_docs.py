"""The docs: the site builds strict and offline, the README is a front door, and no page points at code that
is not there or shows a measured figure without the benchmark that prints it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from markdown.extensions.toc import slugify

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = sorted(DOCS.rglob("*.md"))
BENCHMARK_PAGES = DOCS / "benchmarks"

FENCE = re.compile(r"^```.*?^```[ \t]*$", re.S | re.M)
CODE_SPAN = re.compile(r"`([^`]+)`")
REPO_PATH = re.compile(
    r"(?<![\w./~$-])((?:memory_core|mycel_dashboard|tests|templates|static|docs)/[\w./*-]*)"
)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
BENCHMARK_REF = re.compile(r"`tests/benchmarks/\w+\.py")

# A measured figure on a benchmarks page: a number with a unit of time, size, rate, share or ratio.
FIGURE = re.compile(r"\d[\d,.]*\s?(?:ms|µs|s|min|MB|GB|KB|MiB|GiB|MB/s|req/s|%)(?![\w])|\d×")
# Outside the benchmarks pages, settings and defaults are written in whole seconds ("20 s", "a 120 s
# timeout"); what reads as a measurement is a time in ms, a ratio, a rate, or seconds given as a decimal,
# a range or an approximation.
MEASURED = re.compile(
    r"\d[\d,.]*\s?(?:ms|µs)(?![\w])"
    r"|\d×"
    r"|req/s|MB/s"
    r"|\d+\.\d+\s?s(?![\w])"
    r"|\d[\d,.]*\s?[–-]\s?\d[\d,.]*\s?s(?![\w])"
    r"|~\d[\d,.]*\s?s(?![\w])"
)
# A table cell holding a time or a size.
TABLE_FIGURE = re.compile(r"\d[\d,.]*\s?(?:ms|µs|s|MB|GB|KB|MiB|GiB)(?![\w])")


def _without_fences(text: str) -> str:
    return FENCE.sub("", text)


def repo_paths(text: str) -> set[str]:
    """Every repo path a page names in code: in inline code spans and in fenced blocks."""
    spans = [m.group(1) for m in CODE_SPAN.finditer(_without_fences(text))]
    spans += [m.group(0) for m in FENCE.finditer(text)]
    return {found for span in spans for found in REPO_PATH.findall(span)}


def missing_paths(text: str) -> list[str]:
    missing = []
    for path in sorted(repo_paths(text)):
        hit = any(ROOT.glob(path.rstrip("/"))) if "*" in path else (ROOT / path).exists()
        if not hit:
            missing.append(path)
    return missing


def sections(text: str) -> list[tuple[str, str]]:
    """(heading, body) for each part of a page between two headings; fenced blocks never hold one."""
    found: list[tuple[str, str]] = []
    title, lines, in_fence = "(top)", [], False
    for line in text.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        heading = None if in_fence else HEADING.match(line)
        if heading:
            found.append((title, "\n".join(lines)))
            title, lines = heading.group(2), []
        else:
            lines.append(line)
    found.append((title, "\n".join(lines)))
    return found


def sections_without_benchmark(text: str, *, benchmarks_page: bool) -> list[str]:
    """The headings of sections that show a measured figure but name no `tests/benchmarks/*.py`."""
    missing = []
    for title, body in sections(text):
        prose = _without_fences(body)
        table = "\n".join(line for line in prose.splitlines() if line.lstrip().startswith("|"))
        measured = (
            (benchmarks_page and FIGURE.search(prose)) or MEASURED.search(prose) or TABLE_FIGURE.search(table)
        )
        if measured and not BENCHMARK_REF.search(body):
            missing.append(title)
    return missing


def anchors(page: Path) -> set[str]:
    text = _without_fences(page.read_text())
    return {slugify(m.group(2), "-") for line in text.splitlines() if (m := HEADING.match(line))}


def test_site_builds_strict_with_no_warning_and_nothing_from_the_network(tmp_path: Path) -> None:
    site = tmp_path / "site"
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(site),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = built.stdout + built.stderr
    assert built.returncode == 0, output
    assert [line for line in output.splitlines() if "WARNING" in line] == []
    assert (site / "index.html").exists()
    assert (site / "screenshots" / "thread.png").exists()
    # Offline: no page, stylesheet or script of the built site loads anything from another host.
    off_site = re.compile(
        r"<(?:script|img|iframe)\b[^>]*\bsrc=[\"']?(?:https?:)?//"
        r"|<link\b[^>]*\bhref=[\"']?(?:https?:)?//"
        r"|url\([\"']?(?:https?:)?//"
        r"|@import\s+(?:url\()?[\"']?(?:https?:)?//",
        re.I,
    )
    loads = [
        f"{path.relative_to(site)}: {match.group(0)}"
        for path in site.rglob("*")
        if path.suffix in {".html", ".css", ".js"}
        for match in off_site.finditer(path.read_text(errors="replace"))
    ]
    assert loads == []


def test_every_page_is_in_the_site() -> None:
    config = (ROOT / "mkdocs.yml").read_text()
    assert "strict: true" in config
    assert "docs_dir: docs" in config
    for page in PAGES:
        assert str(page.relative_to(DOCS)) in config, f"{page} is not in mkdocs.yml's nav"


def test_readme_is_a_front_door_with_the_two_commands_first() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 150
    first_block = _first_fenced_block(lines)
    assert any(line.startswith("make run") for line in first_block)
    assert any(line.startswith("make test") for line in first_block)
    text = "\n".join(lines)
    assert "make docs" in text
    assert "PORT=" in text and "HOST=" in text


def _first_fenced_block(lines: list[str]) -> list[str]:
    start = next(i for i, line in enumerate(lines) if line.startswith("```"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))
    assert start < 30, "the commands come first"
    return lines[start + 1 : end]


def test_readme_points_at_every_screen_folder() -> None:
    screens = ROOT / "mycel_dashboard" / "screens"
    folders = {p.name for p in screens.iterdir() if p.is_dir() and (p / "views.py").exists()}
    named = {
        p.split("/")[2] for p in repo_paths(README.read_text()) if p.startswith("mycel_dashboard/screens/")
    }
    assert folders - named == set()


def test_every_relative_link_in_the_readme_resolves() -> None:
    links = [m.group(1) for m in LINK.finditer(_without_fences(README.read_text()))]
    relative = [link for link in links if not re.match(r"[a-z]+:", link) and not link.startswith("#")]
    assert len(relative) >= 10
    for link in relative:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.is_file(), f"README.md links to {link}, which is not a file in the repo"
        if anchor:
            assert anchor in anchors(target), f"README.md links to {link}: no such heading"
    linked = {(ROOT / link.partition("#")[0]).resolve() for link in relative}
    assert (DOCS / "index.md").resolve() in linked


def test_every_code_path_the_readme_and_docs_name_exists() -> None:
    checked = 0
    for page in [README, *PAGES]:
        text = page.read_text()
        checked += len(repo_paths(text))
        assert missing_paths(text) == [], f"{page.relative_to(ROOT)} names paths that are not in the tree"
    assert checked >= 100


def test_every_measured_figure_names_the_benchmark_that_prints_it() -> None:
    pages = [README, *PAGES]
    with_figures = 0
    for page in pages:
        text = page.read_text()
        benchmarks_page = BENCHMARK_PAGES in page.parents
        if benchmarks_page:
            assert BENCHMARK_REF.search(text), f"{page} names no benchmark"
            with_figures += 1
        missing = sections_without_benchmark(text, benchmarks_page=benchmarks_page)
        assert missing == [], f"{page.relative_to(ROOT)}: figures without their benchmark in {missing}"
    assert with_figures >= 4


def test_the_checks_catch_what_they_forbid() -> None:
    # The checks above pass on pages that name nothing; these are what they exist to refuse.
    page = (BENCHMARK_PAGES / "engine-and-stores.md").read_text()
    stripped = re.sub(r"`tests/benchmarks/\w+\.py`", "the benchmark", page)
    assert sections_without_benchmark(page, benchmarks_page=True) == []
    assert "Engine" in sections_without_benchmark(stripped, benchmarks_page=True)
    limits = (DOCS / "known-limits.md").read_text()
    assert "Search" in sections_without_benchmark(
        re.sub(r"`tests/benchmarks/\w+\.py`", "", limits), benchmarks_page=False
    )
    table = "## Load\n\n| run | p95 |\n|---|---|\n| 16 clients | 411 ms |\n"
    assert sections_without_benchmark(table, benchmarks_page=False) == ["Load"]
    assert sections_without_benchmark("## Settings\n\nA page may spend 20 s.\n", benchmarks_page=False) == []
    assert missing_paths("code: `mycel_dashboard/screens/no_such_screen/`") == [
        "mycel_dashboard/screens/no_such_screen/"
    ]
    assert missing_paths("```\nmemory_core/no_such_layer/\n```") == ["memory_core/no_such_layer/"]
    assert missing_paths("`tests/benchmarks/bench_*.py`") == []
