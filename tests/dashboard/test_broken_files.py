"""Every screen over broken data homes: never a 500, a clear message naming the file, the rest still works.

Each case breaks one file of a copy of the real sample home (missing, empty, cut mid-page, not SQLite, an
older or Postgres-style LangGraph layout, locked by another process, or a damaged side database while
leon.db is fine) and opens every page, partial and panel about a thread that exists.
"""

from __future__ import annotations

import html
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.dashboard import broken_homes as broken
from tests.dashboard.broken_homes import THREAD, Screen, every_screen, exclusively_locked

# Screens that read leon.db, and must say what is wrong with it.
LEON_SCREENS = frozenset(
    {
        "home",
        "threads",
        "thread",
        "message_text",
        "checkpoint",
        "rollback_preview",
        "undo_preview",
        "dry_run",
        "config",
        "config_preview",
    }
)


@dataclass(frozen=True)
class Case:
    file: str
    damage: Callable[[Path], None]
    says: str  # the message, as the page shows it
    named_on: frozenset[str]  # screen names that must show it (full pages; partials may rely on the page)


CASES = {
    "leon.db missing": Case("leon.db", broken.missing, "leon.db does not exist", LEON_SCREENS - {"home"}),
    "leon.db empty (0 bytes)": Case("leon.db", broken.empty, "leon.db is empty", LEON_SCREENS),
    "leon.db truncated at 1.5 pages": Case(
        "leon.db",
        broken.truncated,
        "leon.db is damaged or not SQLite (database disk image is malformed)",
        LEON_SCREENS,
    ),
    "leon.db random bytes": Case(
        "leon.db", broken.random_bytes, "leon.db is not an SQLite database", LEON_SCREENS
    ),
    "leon.db a text file": Case(
        "leon.db", broken.text_file, "leon.db is not an SQLite database", LEON_SCREENS
    ),
    "leon.db thread_ts layout": Case(
        "leon.db",
        broken.thread_ts_layout,
        "leon.db has an older LangGraph checkpoints layout (thread_ts instead of checkpoint_id)",
        LEON_SCREENS,
    ),
    "leon.db without checkpoint_ns": Case(
        "leon.db",
        broken.no_namespace_layout,
        "leon.db has an older LangGraph checkpoints layout: no checkpoint_ns column",
        LEON_SCREENS,
    ),
    "leon.db Postgres-style layout": Case(
        "leon.db", broken.postgres_layout, "leon.db has LangGraph's Postgres-style layout", LEON_SCREENS
    ),
    "summary.db damaged pages": Case(
        "summary.db",
        broken.corrupt_pages,
        "summary.db is damaged or not SQLite",
        frozenset({"threads", "thread", "rollback_preview"}),
    ),
    "summary.db not SQLite": Case(
        "summary.db",
        broken.text_file,
        "summary.db is not an SQLite database",
        frozenset({"home", "threads", "thread", "rollback_preview"}),
    ),
    "queue.db damaged pages": Case(
        "queue.db",
        broken.corrupt_pages,
        "queue.db is damaged or not SQLite",
        frozenset({"threads", "thread", "panel", "rollback_preview"}),
    ),
    "queue.db truncated": Case(
        "queue.db",
        broken.truncated,
        "queue.db is damaged or not SQLite",
        frozenset({"home", "threads", "thread", "panel", "rollback_preview"}),
    ),
    "sandbox.db damaged pages": Case(
        "sandbox.db",
        broken.corrupt_pages,
        "sandbox.db is damaged or not SQLite",
        frozenset({"home", "threads", "thread", "panel"}),
    ),
    "sandbox.db empty": Case(
        "sandbox.db", broken.empty, "sandbox.db is empty", frozenset({"home", "threads", "thread", "panel"})
    ),
}

# Side databases a rollback must read to be safe (summaries to deactivate, "is the agent running?").
ROLLBACK_READS = {"summary.db", "queue.db"}


@dataclass
class Visited:
    screen: Screen
    status: int
    body: str
    seconds: float


def visit_all(client) -> list[Visited]:
    out = []
    for screen in every_screen():
        started = time.perf_counter()
        response = client.get(screen.url, **screen.headers)
        out.append(
            Visited(
                screen,
                response.status_code,
                html.unescape(response.content.decode()),
                time.perf_counter() - started,
            )
        )
    return out


def panel_named(visits: list[Visited], name: str) -> Visited:
    return next(
        v
        for v in visits
        if v.screen.name == "panel" and f"/panels/{name}/" in v.screen.url and not v.screen.headers
    )


def assert_never_a_server_error(visits: list[Visited]) -> None:
    bad = [f"{v.status} {v.screen}" for v in visits if v.status != 200]
    assert not bad, "every screen of a known thread must render (200):\n" + "\n".join(bad)
    for visit in visits:
        assert "Traceback" not in visit.body and "Server Error" not in visit.body, str(visit.screen)


def assert_message_named(visits: list[Visited], case: Case) -> None:
    missing = [
        str(v.screen)
        for v in visits
        if v.screen.name in case.named_on and not v.screen.headers and case.says not in v.body
    ]
    if "panel" in case.named_on:
        store = case.file.removesuffix(".db")
        panel = panel_named(visits, store)
        missing = [m for m in missing if not m.startswith("panel ")]
        if case.says not in panel.body:
            missing.append(str(panel.screen))
    assert not missing, f"{case.says!r} is not on:\n" + "\n".join(missing)


def messages_in(body: str) -> int:
    return len(re.findall(r'<li class="msg (?:human|ai|tool)', body))


# -- the cases --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CASES, ids=list(CASES))
def test_every_screen_renders_and_names_the_broken_file(
    name: str, operator_client, sample_home: Path
) -> None:
    case = CASES[name]
    case.damage(sample_home / case.file)
    visits = visit_all(operator_client)
    assert_never_a_server_error(visits)
    assert_message_named(visits, case)
    by_name = {v.screen.name: v for v in visits if not v.screen.headers}
    # The rest of each page still works.
    assert 'name="memory.pruning.soft_trim_chars"' in by_name["config"].body, "the config editor still works"
    assert "Audit log" in by_name["audit"].body
    if case.file == "leon.db":
        assert "lease-" in panel_named(visits, "sandbox").body, "sandbox.db is fine, so its panel still shows"
        assert "No pending items" in panel_named(visits, "queue").body
    else:
        assert messages_in(by_name["thread"].body) > 10, "leon.db is fine, so the timeline still shows"
        assert 'id="fill-figure"' in by_name["thread"].body, "and the context-fill chart"
        assert messages_in(by_name["checkpoint"].body) > 10, "and the head checkpoint's messages"
    if case.file in ROLLBACK_READS:
        # A rollback previewed without the summaries or the queue would be a guess: it is refused, and says why.
        preview = by_name["rollback_preview"].body
        assert f"Cannot check the {case.file.removesuffix('.db')} store" in preview
        assert case.says in preview


def test_locked_leon_db_says_locked_within_the_busy_timeout(
    operator_client, sample_home: Path, settings
) -> None:
    """Another process holds an EXCLUSIVE lock for longer than the dashboard's busy timeout."""
    settings.DASHBOARD_STORE_TIMEOUT_MS = 100
    case = Case("leon.db", lambda _: None, "leon.db is locked by another process", LEON_SCREENS)
    with exclusively_locked(sample_home / "leon.db"):
        visits = visit_all(operator_client)
    assert_never_a_server_error(visits)
    assert_message_named(visits, case)
    slowest = max(visits, key=lambda v: v.seconds)
    assert slowest.seconds < 3.0, f"{slowest.screen} waited {slowest.seconds:.1f} s on the lock"
    assert "lease-" in panel_named(visits, "sandbox").body
    # Once the lock is gone, the same pages read the thread again (nothing cached the failure).
    after = operator_client.get(f"/threads/{THREAD}/")
    assert messages_in(after.content.decode()) > 10
    assert "locked" not in after.content.decode()


@pytest.mark.parametrize(
    "layout", ["writes without task_path (Mycel's)", "writes with task_path (newer saver)"]
)
def test_both_writes_layouts_read_cleanly(layout: str, operator_client, sample_home: Path) -> None:
    if "with task_path" in layout:
        broken.task_path_layout(sample_home / "leon.db")
    visits = visit_all(operator_client)
    assert_never_a_server_error(visits)
    by_name = {v.screen.name: v for v in visits if not v.screen.headers}
    for name in ("threads", "thread", "checkpoint"):
        assert 'class="problem' not in by_name[name].body, f"{name}: a clean file shows no problem"
    assert messages_in(by_name["thread"].body) > 10
    note = "writes has task_path" if "with task_path" in layout else "writes without task_path"
    assert note in by_name["home"].body


def test_unknown_ids_in_a_broken_home_are_not_a_500(viewer_client, sample_home: Path) -> None:
    """With leon.db unreadable nobody can tell an unknown thread from a known one: the page says why."""
    broken.text_file(sample_home / "leon.db")
    for url in ("/threads/nobody-1/", "/threads/nobody-1/checkpoints/nope/", "/threads/nobody-1/dry-run/"):
        response = viewer_client.get(url)
        assert response.status_code == 200, url
        assert "leon.db is not an SQLite database" in html.unescape(response.content.decode()), url
    # A panel reads its own store (queue.db is fine); the thread page around it names leon.db.
    assert viewer_client.get("/threads/nobody-1/panels/queue/").status_code in (200, 404)


@pytest.mark.parametrize(
    ("damage", "says"),
    [(broken.missing, "leon.db does not exist"), (broken.random_bytes, "leon.db is not an SQLite database")],
)
def test_the_whatif_partial_itself_says_what_is_wrong_with_leon_db(
    operator_client, sample_home: Path, damage: Callable[[Path], None], says: str
) -> None:
    """A slider move replaces only the what-if card, so the card must say why it has no threads."""
    damage(sample_home / "leon.db")
    url = f"/config/?thread={THREAD}&memory.pruning.soft_trim_chars=100"
    partial = operator_client.get(url, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="whatif")
    assert partial.status_code == 200
    assert html.unescape(partial.content.decode()).count(says) == 1
    page = html.unescape(operator_client.get(url).content.decode())
    assert page.count(says) == 1, "the full page says it once, at its top"
