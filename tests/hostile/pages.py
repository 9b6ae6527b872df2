"""The app's pages over a hostile home: every GET page and partial, and every POST action, by URL name."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlencode

from django.test import Client
from django.urls import reverse

from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from tests.hostile.payloads import MARKUP, HostileHome

HX = {"HTTP_HX_REQUEST": "true"}


def hx_target(target: str) -> dict[str, str]:
    return {**HX, "HTTP_HX_TARGET": target}


def checkpoint_ids(home: HostileHome, thread_id: str) -> list[str]:
    with sqlite3.connect(home.folder / "leon.db") as db:
        rows = db.execute(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id", (thread_id,)
        ).fetchall()
    db.close()
    return [r[0] for r in rows]


def message_count(thread_id: str) -> int:
    state = MycelReader(resolve_locations()).get_state(thread_id).value
    return len(state.messages) if state else 0


def call_count(thread_id: str) -> int:
    """The thread's model calls: one per AI message of the head."""
    state = MycelReader(resolve_locations()).get_state(thread_id).value
    return sum(1 for m in state.messages if m.type.value == "ai") if state else 0


@dataclass(frozen=True)
class Visit:
    name: str  # the URL name
    url: str
    headers: dict[str, str]


def get_visits(home: HostileHome) -> Iterator[Visit]:
    """Every GET page and partial, per URL name, over every thread of the hostile home."""
    main = home.thread_id
    yield Visit("home", reverse("home"), {})
    threads = reverse("threads")
    for query in ("", f"?{urlencode({'q': MARKUP['script']})}", "?sort=name", "?flag=compacted"):
        yield Visit("threads", threads + query, {})
        yield Visit("threads", threads + query, hx_target("thread-rows"))
    yield Visit("threads_live", reverse("threads_live"), HX)
    search = reverse("search")
    for query in (
        {"q": "cat"},
        {"q": MARKUP["script"]},
        {"q": '"unclosed', "tool": MARKUP["script"]},
        {"q": "a", "thread": main},
    ):
        yield Visit("search", f"{search}?{urlencode(query)}", {})
    for thread_id in home.thread_ids:
        base = reverse("thread", args=[thread_id])
        yield Visit("thread_live", reverse("thread_live", args=[thread_id]), HX)
        for view in ("stored", "sent"):
            yield Visit("thread", f"{base}?view={view}", {})
            yield Visit("thread", f"{base}?view={view}", hx_target("timeline"))
        for panel in ("integrity", "sandbox", "queue", "file-operations", "run-events"):
            url = reverse("panel", args=[thread_id, panel])
            yield Visit("panel", url, {})
            yield Visit("panel", url, hx_target(f"panel-{panel}"))
        for index in range(message_count(thread_id)):
            for view in ("stored", "sent"):
                url = f"{reverse('message_text', args=[thread_id, index])}?view={view}"
                yield Visit("message_text", url, {})
                yield Visit("message_text", url, HX)
        for number in range(1, call_count(thread_id) + 1):
            yield Visit("call", reverse("call", args=[thread_id, number]), {})
        checkpoints = checkpoint_ids(home, thread_id)
        for checkpoint_id in checkpoints[-3:]:
            url = reverse("checkpoint", args=[thread_id, checkpoint_id])
            yield Visit("checkpoint", url, {})
            yield Visit("checkpoint", f"{url}?against={checkpoints[0]}", hx_target("checkpoint-diff"))
            yield Visit("rollback_preview", reverse("rollback_preview", args=[thread_id, checkpoint_id]), {})
        yield Visit("undo_preview", reverse("undo_preview", args=[thread_id]), {})
        dry_run = reverse("dry_run", args=[thread_id])
        yield Visit("dry_run", dry_run, {})
        yield Visit(
            "dry_run", f"{dry_run}?context_limit=2000&keep_recent_tokens=100", hx_target("dry-run-result")
        )
        config = f"{reverse('config')}?{urlencode({'thread': thread_id})}"
        yield Visit("config", config, {})
        yield Visit("config", f"{config}&memory.pruning.soft_trim_chars=100", hx_target("whatif"))
    for spill_id in home.spill_ids:
        yield Visit("spill", reverse("spill", args=[main, spill_id]), {})
    preview = f"{reverse('config_preview')}?{urlencode({'thread': main, 'layer': 'user'})}"
    yield Visit("config_preview", f"{preview}&memory.pruning.soft_trim_chars=1500", {})
    yield Visit("config_preview", f"{preview}&memory.pruning.soft_trim_chars=1500", hx_target("save-panel"))
    # A version that is not kept: the preview says so (a kept one's hostile keys: tests/dashboard/test_way_back.py).
    restore = reverse("config_restore_preview")
    query = urlencode({"thread": main, "layer": "user", "version": "runtime.json.bak-20200101T000000"})
    yield Visit("config_restore_preview", f"{restore}?{query}", {})
    yield Visit("config_restore_preview", f"{restore}?{query}", hx_target("save-panel"))
    yield Visit("storage", reverse("storage"), {})
    yield Visit("storage", f"{reverse('storage')}?{urlencode({'thread': main})}", {})
    retention = reverse("retention")
    for query in ({"keep_last": "1"}, {"heads_only": "on"}, {"idle_days": "0", "keep_last": "2"}):
        yield Visit("retention", f"{retention}?{urlencode(query)}", {})
    yield Visit("retention", f"{retention}?{urlencode({'keep_last': MARKUP['script']})}", {})
    yield Visit("cost", reverse("cost"), {})
    yield Visit("cost", f"{reverse('cost')}?{urlencode({'since': MARKUP['script']})}", {})
    yield Visit("context_calibration", reverse("context_calibration"), {})
    yield Visit(
        "context_calibration",
        f"{reverse('context_calibration')}?{urlencode({'model': MARKUP['script']})}",
        {},
    )
    yield Visit("context_tools", reverse("context_tools"), {})
    yield Visit("context_cache", reverse("context_cache"), {})
    yield Visit("context_cache", f"{reverse('context_cache')}?{urlencode({'thread': main})}", {})
    yield Visit("context_cache", f"{reverse('context_cache')}?{urlencode({'thread': MARKUP['script']})}", {})
    yield Visit("audit", reverse("audit"), {})
    yield Visit(
        "audit", f"{reverse('audit')}?{urlencode({'thread': MARKUP['svg_onload']})}", hx_target("audit-rows")
    )


def body_of(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode("utf-8")
    return response.content.decode("utf-8")


def fingerprint_of(client: Client, url: str) -> str:
    found = re.search(r'name="fingerprint" value="([0-9a-f]{16})"', client.get(url).content.decode())
    assert found is not None, url
    return found.group(1)


def act_with_hostile_strings(client: Client, home: HostileHome) -> list[tuple[str, int, str]]:
    """Every POST endpoint, with data that makes the audit log record hostile strings."""
    out: list[tuple[str, int, str]] = []

    def post(name: str, url: str, data: dict[str, str], **headers: str) -> None:
        response = client.post(url, data, **headers)
        out.append((name, response.status_code, body_of(response)))

    for thread_id in (*home.formula_thread_ids, home.odd_id_thread_id, home.thread_id):
        target = checkpoint_ids(home, thread_id)[0]
        preview = reverse("rollback_preview", args=[thread_id, target])
        fingerprint = fingerprint_of(client, preview)
        post(
            "rollback_apply",
            reverse("rollback_apply", args=[thread_id, target]),
            {"fingerprint": fingerprint},
        )
    undo = reverse("undo_preview", args=[home.thread_id])
    post(
        "undo_apply",
        reverse("undo_apply", args=[home.thread_id]),
        {"fingerprint": fingerprint_of(client, undo)},
    )
    post(
        "dry_run_generate",
        reverse("dry_run_generate", args=[home.thread_id]),
        {"context_limit": "2000"},
        **hx_target("dry-run-result"),
    )
    sha = re.search(
        r'name="sha256" value="([0-9a-f]*)"',
        client.get(
            f"{reverse('config_preview')}?{urlencode({'thread': home.thread_id, 'layer': 'user'})}"
            "&memory.pruning.soft_trim_chars=1500"
        ).content.decode(),
    )
    assert sha is not None
    save = {
        "thread": home.thread_id,
        "layer": "user",
        "sha256": sha.group(1),
        "memory.pruning.soft_trim_chars": "1500",
    }
    post("config_save", reverse("config_save"), save, **hx_target("save-panel"))
    post("config_save", reverse("config_save"), save, **hx_target("save-panel"))  # stale: refused
    post(
        "config_restore",
        reverse("config_restore"),
        {"layer": "user", "version": MARKUP["svg_onload"], "thread": home.thread_id},
        **hx_target("save-panel"),
    )
    post(
        "retention_export", reverse("retention_export"), {"keep_last": "1", "engine_store": MARKUP["script"]}
    )
    post("retention_export", reverse("retention_export"), {"heads_only": "on"})
    post("logout", reverse("logout"), {})
    return out
