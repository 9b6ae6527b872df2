"""Nothing the dashboard or the CLI reads changes a byte of Mycel's files; an audited write changes only its own.

Every file of a copied sample home and of a demo home is hashed (sha256; SQLite's -wal/-shm side files
excluded, as they are not data), then every page, partial and panel of every thread, the CLI read
commands, dry-runs, config what-ifs and previews, rollback and undo PREVIEWS and refused writes run over
it: every hash is unchanged and no file appeared or vanished. Then one rollback is applied: exactly
leon.db changes, and summary.db too when the rollback deactivated a summary.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.urls import reverse

from memory_core.cli import main as cli_main
from memory_core.demo import DemoManifest, write_demo_home
from memory_core.rollback import rollback_record
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from mycel_dashboard.models import AuditEntry
from tests.core.store_builders import file_hashes
from tests.dashboard.broken_homes import HX, every_screen
from tests.support.mycel_env import point_env_at

SUMMARISED_SAMPLE_THREAD = "m_0D8EzdJXJhk9-2"  # 7 summaries in summary.db, one active (up to index 16)
PLAIN_SAMPLE_THREAD = "m_0D8EzdJXJhk9-1"  # no summaries


@pytest.fixture(scope="module")
def pristine_demo(tmp_path_factory: pytest.TempPathFactory) -> DemoManifest:
    return write_demo_home(tmp_path_factory.mktemp("demo") / "home", seed=5)


@pytest.fixture
def demo_home(pristine_demo: DemoManifest, monkeypatch: pytest.MonkeyPatch) -> DemoManifest:
    """The demo home in place (its threads name their workspaces by absolute path), env pointed at it."""
    point_env_at(monkeypatch, pristine_demo.folder)
    return pristine_demo


def threads_and_checkpoints() -> dict[str, list[str]]:
    """Every thread the dashboard lists, with its checkpoint ids oldest first (read through the reader)."""
    reader = MycelReader(resolve_locations())
    return {
        row.thread_id: [c.checkpoint_id for c in reversed(reader.list_checkpoints(row.thread_id).value)]
        for row in reader.list_threads().value
    }


def spill_ids(home: Path) -> list[str]:
    return [p.stem for p in home.rglob(".leon/tool-results/*.txt")]


def fingerprint_of(body: str) -> str:
    found = re.search(r'name="fingerprint" value="([0-9a-f]{16})"', body)
    assert found is not None, "the preview carries the fingerprint its confirm form sends"
    return found.group(1)


def exercise_every_read(client, home: Path, capsys: pytest.CaptureFixture[str]) -> int:
    """Every screen, partial, panel, preview, refused write and CLI read over every thread; returns a count."""
    visited = 0
    spills = spill_ids(home) or ["no-such-call"]
    for thread_id, ids in threads_and_checkpoints().items():
        if not ids:  # a thread created but never run: its page and panels only
            for url in (reverse("thread", args=[thread_id]), reverse("panel", args=[thread_id, "queue"])):
                assert client.get(url).status_code == 200, url
                visited += 1
            continue
        for screen in every_screen(thread_id, ids, spills[0]):
            response = client.get(screen.url, **screen.headers)
            # The spill id belongs to one thread: the others answer 404 for it. Everything else renders.
            allowed = (200, 404) if screen.name == "spill" else (200,)
            assert response.status_code in allowed, f"{response.status_code} {screen}"
            visited += 1
        for index in range(min(len(ids), 4)):
            for view in ("stored", "sent"):
                url = f"{reverse('message_text', args=[thread_id, index])}?view={view}"
                assert client.get(url, **HX).status_code in (200, 404)
                visited += 1
        # Writes that are refused write nothing: a stale fingerprint, and a dry-run summary with no endpoint.
        stale = client.post(reverse("rollback_apply", args=[thread_id, ids[0]]), {"fingerprint": "0" * 16})
        assert stale.status_code in (409, 404), stale.status_code
        client.post(reverse("undo_apply", args=[thread_id]), {"fingerprint": "0" * 16})
        client.post(reverse("dry_run_generate", args=[thread_id]), {"context_limit": "2000"}, **HX)
        visited += 3
        visited += run_cli_reads(thread_id, ids, home, capsys)
    for spill_id in spills:
        for thread_id in threads_and_checkpoints():
            client.get(reverse("spill", args=[thread_id, spill_id]))
            visited += 1
    for url in (reverse("audit"), reverse("audit_csv"), f"{reverse('threads')}?sort=bytes&limit=1000"):
        assert client.get(url).status_code == 200, url
        visited += 1
    stale_save = {"layer": "user", "sha256": "0" * 64, "memory.pruning.soft_trim_chars": "1500"}
    client.post(reverse("config_save"), stale_save, **{**HX, "HTTP_HX_TARGET": "save-panel"})
    config = f"{reverse('config_preview')}?{urlencode({'layer': 'project'})}&memory.compaction.keep_recent_tokens=900"
    assert client.get(config).status_code == 200
    return visited + 2


def run_cli_reads(thread_id: str, ids: list[str], home: Path, capsys: pytest.CaptureFixture[str]) -> int:
    workspace = str(home / "workspaces")
    commands = [
        ["threads"],
        ["threads", "--json"],
        ["thread", thread_id],
        ["thread", thread_id, "--json"],
        ["rollback", thread_id, "--to", ids[0], "--dry-run"],
        ["rollback", thread_id, "--to", ids[len(ids) // 2], "--dry-run", "--json"],
        ["undo", thread_id, "--dry-run"],
        ["dry-run", thread_id],
        ["dry-run", thread_id, "--context-limit", "3000", "--keep-recent-tokens", "200", "--json"],
        ["dry-run", thread_id, "--checkpoint", ids[len(ids) // 2], "--show-text"],
        ["config", "--project-dir", workspace],
        ["config", "--json", "--project-dir", workspace],
        ["config", "set", "memory.pruning.soft_trim_chars", "1234", "--layer", "user", "--dry-run"],
        ["config", "history", "--layer", "user"],
    ]
    for argv in commands:
        code = cli_main(argv)
        out, err = capsys.readouterr()
        # undo has nothing to undo here (exit 2, one line); every other read succeeds.
        assert code == 0 or (argv[0] == "undo" and code == 2 and err.strip()), (argv, code, err)
    return len(commands)


def changed_files(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}


# -- reads change nothing --------------------------------------------------------------------------


def test_reading_everything_changes_no_byte_of_the_sample_home(
    operator_client, sample_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = file_hashes(sample_home)
    assert len(before) > 20 and "leon.db" in before
    visited = exercise_every_read(operator_client, sample_home, capsys)
    assert visited > 200
    assert changed_files(before, file_hashes(sample_home)) == set()


def test_reading_everything_changes_no_byte_of_a_demo_home(
    operator_client, demo_home: DemoManifest, capsys: pytest.CaptureFixture[str]
) -> None:
    before = file_hashes(demo_home.folder)
    assert {"leon.db", "summary.db", "queue.db", "sandbox.db", "runtime.json"} <= before.keys()
    assert any("tool-results" in name for name in before), "the demo home has a spill file"
    visited = exercise_every_read(operator_client, demo_home.folder, capsys)
    assert visited > 200
    assert changed_files(before, file_hashes(demo_home.folder)) == set()


# -- one audited write changes exactly its files --------------------------------------------------


def apply_rollback_through_the_page(client, thread_id: str, target: str) -> None:
    preview = client.get(reverse("rollback_preview", args=[thread_id, target]))
    assert preview.status_code == 200
    body = preview.content.decode()
    data = {"fingerprint": fingerprint_of(body)}
    if "running" in body.lower() and "force" in body:
        data["force"] = "on"
    response = client.post(reverse("rollback_apply", args=[thread_id, target]), data)
    assert response.status_code == 302, response.content.decode()[:2000]


def checkpoint_with_messages_below(thread_id: str, limit: int) -> str:
    reader = MycelReader(resolve_locations())
    rows = reader.list_checkpoints(thread_id).value
    return next(r.checkpoint_id for r in reversed(rows) if r.messages and r.messages < limit)


@pytest.mark.parametrize(
    ("thread_id", "expected"),
    [(PLAIN_SAMPLE_THREAD, {"leon.db"}), (SUMMARISED_SAMPLE_THREAD, {"leon.db", "summary.db"})],
    ids=["no summaries: leon.db only", "summary deactivated: leon.db and summary.db"],
)
def test_a_rollback_changes_exactly_leon_db_and_summary_db_when_it_deactivates(
    operator_client, sample_home: Path, thread_id: str, expected: set[str]
) -> None:
    target = checkpoint_with_messages_below(thread_id, 10)
    old_head = MycelReader(resolve_locations()).head_checkpoint_id(thread_id)
    before = file_hashes(sample_home)
    apply_rollback_through_the_page(operator_client, thread_id, target)
    assert changed_files(before, file_hashes(sample_home)) == expected
    # The change is the audited write: a new head that copies the target and records the rollback.
    reader = MycelReader(resolve_locations())
    head = reader.get_state(thread_id).value
    assert head is not None and head.checkpoint.checkpoint_id != old_head
    assert rollback_record(head.checkpoint.metadata) is not None
    assert len(head.messages) == len(reader.get_state(thread_id, target).value.messages)  # type: ignore[union-attr]
    assert AuditEntry.objects.filter(thread_id=thread_id, result=AuditEntry.Result.APPLIED).count() == 1


def test_a_rollback_in_a_demo_home_leaves_config_spill_and_other_stores_alone(
    operator_client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = write_demo_home(tmp_path / "demo-write", seed=5)
    point_env_at(monkeypatch, manifest.folder)
    compaction = next(t for t in manifest.threads if t.summaries)
    target = checkpoint_with_messages_below(compaction.thread_id, 6)
    before = file_hashes(manifest.folder)
    apply_rollback_through_the_page(operator_client, compaction.thread_id, target)
    changed = changed_files(before, file_hashes(manifest.folder))
    assert changed == {"leon.db", "summary.db"}
    untouched = set(before) - changed
    assert {"runtime.json", "models.json", "queue.db", "sandbox.db", "events.db", "file_ops.db"} <= untouched
    assert any("tool-results" in name for name in untouched)


def test_hashing_sees_a_one_byte_change(sample_home: Path) -> None:
    """The check is not vacuous: flipping one byte of any file shows up."""
    before = file_hashes(sample_home)
    spill = next(sample_home.rglob(".leon/tool-results/*.txt"))
    data = bytearray(spill.read_bytes())
    data[len(data) // 2] ^= 1
    spill.write_bytes(bytes(data))
    shutil.copyfile(sample_home / "models.json", sample_home / "models.json.bak")
    assert changed_files(before, file_hashes(sample_home)) == {
        str(spill.relative_to(sample_home)),
        "models.json.bak",
    }
