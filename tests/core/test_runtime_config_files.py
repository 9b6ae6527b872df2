"""memory_core.stores.runtime_config: tolerant reads, atomic saves with backups, refusals."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory_core.config import REDACTED, ConfigLayerName, Severity, apply_change
from memory_core.context_limits import ContextLimitSource
from memory_core.stores.locations import resolve_locations
from memory_core.stores.runtime_config import (
    ConfigFileError,
    get_loaded_config,
    get_models_file,
    layer_file_at,
    list_history,
    list_layer_files,
    read_json_file,
    sha256_of,
)
from memory_core.stores.write.config_files import apply_layer, apply_restore
from tests.support.folders import unwritable_folder

T0 = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)
T1 = datetime(2026, 11, 30, 11, 0, 0, tzinfo=UTC)


def _user_file(home: Path, document: object) -> Path:
    path = home / "runtime.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_save_writes_nested_change_and_keeps_other_keys(isolated_mycel_home: Path) -> None:
    path = _user_file(isolated_mycel_home, {"mcp": {"servers": {"x": {"command": "y"}}}, "context_limit": 5})
    read = read_json_file(path)
    saved = apply_layer(
        path,
        apply_change(read.document, "memory.pruning.soft_trim_chars", 1200),
        expected_sha256=read.sha256,
        now=T0,
    )
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written == {
        "mcp": {"servers": {"x": {"command": "y"}}},
        "context_limit": 5,
        "memory": {"pruning": {"soft_trim_chars": 1200}},
    }
    assert saved.sha256 == sha256_of(path.read_bytes())
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_save_keeps_timestamped_backup_of_previous_version(isolated_mycel_home: Path) -> None:
    path = _user_file(isolated_mycel_home, {"memory": {"pruning": {"protect_recent": 2}}})
    before = path.read_bytes()
    saved = apply_layer(path, {"memory": {}}, expected_sha256=sha256_of(before), now=T0)
    assert saved.backup == path.parent / ".history" / "runtime.json.bak-20261130T100000"
    assert saved.backup.read_bytes() == before
    history = list_history(path)
    assert [entry.path for entry in history] == [saved.backup]
    assert history[0].sha256 == sha256_of(before)


def test_first_save_creates_the_file_and_remembers_there_was_none(isolated_mycel_home: Path) -> None:
    path = isolated_mycel_home / "runtime.json"
    saved = apply_layer(path, {"runtime": {"context_limit": 9000}}, expected_sha256=None, now=T0)
    assert saved.backup == path.parent / ".history" / "runtime.json.bak-20261130T100000.absent"
    assert saved.backup.read_bytes() == b""
    assert json.loads(path.read_text(encoding="utf-8")) == {"runtime": {"context_limit": 9000}}
    [entry] = list_history(path)
    assert entry.absent and entry.saved_at == T0 and entry.size == 0


def test_restoring_the_no_file_version_removes_the_file_and_keeps_it(isolated_mycel_home: Path) -> None:
    path = isolated_mycel_home / "runtime.json"
    saved = apply_layer(path, {"runtime": {"context_limit": 9000}}, expected_sha256=None, now=T0)
    written = path.read_bytes()
    restored = apply_restore(path, saved.backup.name, expected_sha256=sha256_of(written), now=T1)
    assert not path.exists() and restored.sha256 is None
    assert restored.backup.read_bytes() == written  # the removed version can be put back in turn
    assert [e.absent for e in list_history(path)] == [False, True]
    apply_restore(path, restored.backup.name, expected_sha256=None, now=T1)
    assert path.read_bytes() == json.dumps(json.loads(written), indent=2).encode() + b"\n"


def test_hand_edit_since_reading_is_detected_and_nothing_written(isolated_mycel_home: Path) -> None:
    path = _user_file(isolated_mycel_home, {"a": 1})
    read = read_json_file(path)
    path.write_text('{"a": 2}', encoding="utf-8")
    with pytest.raises(ConfigFileError, match="edited by hand since you opened it"):
        apply_layer(path, {"a": 3}, expected_sha256=read.sha256)
    assert path.read_text(encoding="utf-8") == '{"a": 2}'
    assert list_history(path) == ()


def test_invalid_json_is_reported_not_raised(isolated_mycel_home: Path) -> None:
    path = isolated_mycel_home / "runtime.json"
    path.write_text('{"memory": {', encoding="utf-8")
    (layer,) = list_layer_files()
    assert layer.file.exists and layer.file.document == {}
    assert layer.file.problems[0].severity is Severity.ERROR
    assert "not valid JSON" in layer.file.problems[0].message
    loaded = get_loaded_config()
    assert any("not valid JSON" in p.message for p in loaded.problems)
    assert loaded.effective.settings.soft_trim_chars == 3000


def test_non_object_json_is_reported(isolated_mycel_home: Path) -> None:
    path = _user_file(isolated_mycel_home, [1, 2])
    assert "not an object" in read_json_file(path).problems[0].message


def test_unwritable_directory_gives_clear_error_and_writes_nothing(isolated_mycel_home: Path) -> None:
    path = _user_file(isolated_mycel_home, {"a": 1})
    digest = sha256_of(path.read_bytes())
    with (
        unwritable_folder(isolated_mycel_home),
        pytest.raises(
            ConfigFileError, match=r"^Cannot keep a backup in .*/\.history: .*\. Nothing was changed\.$"
        ),
    ):
        apply_layer(path, {"a": 2}, expected_sha256=digest)
    assert json.loads(path.read_text(encoding="utf-8")) == {"a": 1}
    assert sorted(p.name for p in isolated_mycel_home.iterdir()) == ["runtime.json"]


def test_blocked_backup_folder_gives_clear_error_and_writes_nothing(isolated_mycel_home: Path) -> None:
    path = _user_file(isolated_mycel_home, {"a": 1})
    (isolated_mycel_home / ".history").write_text("not a folder", encoding="utf-8")
    with pytest.raises(ConfigFileError, match="Cannot keep a backup"):
        apply_layer(path, {"a": 2}, expected_sha256=sha256_of(path.read_bytes()))
    assert json.loads(path.read_text(encoding="utf-8")) == {"a": 1}


@pytest.mark.parametrize(
    "make_path",
    [
        lambda home: home / "models.json",
        lambda home: home / ".." / ".leon" / "runtime.json",
        lambda home: home.parent / "runtime.json",
        lambda home: Path("/etc/runtime.json"),
    ],
)
def test_paths_outside_layer_files_are_refused(isolated_mycel_home: Path, make_path: object) -> None:
    target = make_path(isolated_mycel_home)  # type: ignore[operator]
    with pytest.raises(ConfigFileError, match="Refusing"):
        apply_layer(target, {"a": 1}, expected_sha256=None)
    assert not (isolated_mycel_home.parent / "runtime.json").exists()


def test_symlinked_layer_file_pointing_elsewhere_is_refused(
    isolated_mycel_home: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}", encoding="utf-8")
    link = isolated_mycel_home / "runtime.json"
    link.symlink_to(outside)
    with pytest.raises(ConfigFileError, match="points outside"):
        apply_layer(link, {"a": 1}, expected_sha256=sha256_of(b"{}"))
    assert outside.read_text(encoding="utf-8") == "{}"


def test_document_with_redacted_placeholder_is_refused(isolated_mycel_home: Path) -> None:
    with pytest.raises(ConfigFileError, match="redacted"):
        apply_layer(isolated_mycel_home / "runtime.json", {"key": REDACTED}, expected_sha256=None)


def test_restore_puts_back_earlier_version_and_backs_up_current(isolated_mycel_home: Path) -> None:
    path = _user_file(isolated_mycel_home, {"version": 1})
    first = apply_layer(path, {"version": 2}, expected_sha256=sha256_of(path.read_bytes()), now=T0)
    assert first.backup is not None
    restored = apply_restore(path, first.backup.name, expected_sha256=first.sha256, now=T1)
    assert json.loads(path.read_text(encoding="utf-8")) == {"version": 1}
    assert restored.backup is not None
    assert json.loads(restored.backup.read_text(encoding="utf-8")) == {"version": 2}
    assert [e.saved_at for e in list_history(path)] == [T1, T0]


def test_restore_refuses_files_that_are_not_saved_versions(isolated_mycel_home: Path, tmp_path: Path) -> None:
    path = _user_file(isolated_mycel_home, {"version": 1})
    stray = tmp_path / "runtime.json.bak-20261130T100000"
    stray.write_text("{}", encoding="utf-8")  # a version's name, but not in the layer's history
    with pytest.raises(ConfigFileError, match="not a saved version"):
        apply_restore(path, stray.name, expected_sha256=sha256_of(path.read_bytes()))
    for name in ("../runtime.json.bak-20261130T100000", "runtime.json", ".history"):
        with pytest.raises(ConfigFileError, match=f"{name!r} is not a version name"):
            apply_restore(path, name, expected_sha256=sha256_of(path.read_bytes()))


OUTSIDE_VERSION = {"memory": {"pruning": {"protect_recent": 9}}, "note": "OUTSIDE the config home"}
VERSION = "runtime.json.bak-20200101T000000"


def _outside_version(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / VERSION).write_text(json.dumps(OUTSIDE_VERSION), encoding="utf-8")
    return outside


def test_a_symlinked_history_folder_is_neither_listed_nor_restored(
    isolated_mycel_home: Path, tmp_path: Path
) -> None:
    path = _user_file(isolated_mycel_home, {"version": 1})
    (isolated_mycel_home / ".history").symlink_to(_outside_version(tmp_path), target_is_directory=True)
    assert list_history(path) == ()
    with pytest.raises(ConfigFileError):
        apply_restore(path, VERSION, expected_sha256=sha256_of(path.read_bytes()))
    assert json.loads(path.read_text(encoding="utf-8")) == {"version": 1}
    # and a save does not put its backup (the current file, secrets and all) into the linked folder
    with pytest.raises(ConfigFileError, match="symlink"):
        apply_layer(path, {"version": 2}, expected_sha256=sha256_of(path.read_bytes()), now=T0)
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == [VERSION]
    assert json.loads(path.read_text(encoding="utf-8")) == {"version": 1}


def test_a_hard_linked_version_is_neither_listed_nor_restored(
    isolated_mycel_home: Path, tmp_path: Path
) -> None:
    path = _user_file(isolated_mycel_home, {"version": 1})
    (isolated_mycel_home / ".history").mkdir()
    (isolated_mycel_home / ".history" / VERSION).hardlink_to(_outside_version(tmp_path) / VERSION)
    assert list_history(path) == ()
    with pytest.raises(ConfigFileError):
        apply_restore(path, VERSION, expected_sha256=sha256_of(path.read_bytes()))
    assert json.loads(path.read_text(encoding="utf-8")) == {"version": 1}


def test_a_fifo_in_the_history_folder_does_not_hang_the_listing(isolated_mycel_home: Path) -> None:
    import os

    path = _user_file(isolated_mycel_home, {"version": 1})
    (isolated_mycel_home / ".history").mkdir()
    os.mkfifo(isolated_mycel_home / ".history" / VERSION)
    assert list_history(path) == ()
    with pytest.raises(ConfigFileError):
        apply_restore(path, VERSION, expected_sha256=sha256_of(path.read_bytes()))


def test_project_layer_is_read_and_writable(isolated_mycel_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "workspace"
    (project / ".leon").mkdir(parents=True)
    _user_file(isolated_mycel_home, {"context_limit": 50_000})
    (project / ".leon" / "runtime.json").write_text('{"runtime": {"max_tokens": 999}}', encoding="utf-8")
    loaded = get_loaded_config(project_dir=project)
    assert [layer.name for layer in loaded.layers] == [ConfigLayerName.USER, ConfigLayerName.PROJECT]
    assert loaded.effective.value("runtime.max_tokens") == 999
    assert loaded.effective.layer_of("runtime.max_tokens") is ConfigLayerName.PROJECT
    assert loaded.effective.value("runtime.context_limit") == 0
    saved = apply_layer(
        project / ".leon" / "runtime.json",
        {"runtime": {"max_tokens": 500}},
        expected_sha256=loaded.layers[1].file.sha256,
        project_dir=project,
    )
    assert saved.backup is not None


def test_sample_home_models_json_resolves_snug_and_redacts_keys(sample_home: Path) -> None:
    loaded = get_loaded_config(model="leon:snug")
    assert loaded.context_limit.value == 5500
    assert loaded.effective.settings.context_limit == 5500
    assert loaded.effective.settings.effective_keep_recent_tokens == 2200
    models = json.loads((sample_home / "models.json").read_text(encoding="utf-8"))
    models["providers"] = {"anthropic": {"api_key": "sk-ant-FAKE-sample-key", "base_url": "https://x"}}
    (sample_home / "models.json").write_text(json.dumps(models), encoding="utf-8")
    display = get_models_file(resolve_locations()).display_document
    assert display["providers"]["anthropic"] == {"api_key": REDACTED, "base_url": "https://x"}
    assert get_loaded_config(model="leon:large").context_limit.source is ContextLimitSource.PRICING_CACHE


def test_two_saves_of_the_same_preview_at_once_write_one_and_refuse_the_other(
    isolated_mycel_home: Path,
) -> None:
    # Regression: both saves read the file before either replaced it, so both "applied" and the
    # first one's change was silently overwritten (two dashboard workers confirming at once).
    from concurrent.futures import ThreadPoolExecutor
    from threading import Barrier

    path = _user_file(isolated_mycel_home, {"memory": {"pruning": {"soft_trim_chars": 1000}}})
    for round_number in range(12):
        before = sha256_of(path.read_bytes())
        barrier = Barrier(2)

        def save(value: int, barrier: Barrier = barrier, before: str = before) -> int | None:
            barrier.wait()
            try:
                apply_layer(path, {"memory": {"pruning": {"soft_trim_chars": value}}}, expected_sha256=before)
            except ConfigFileError:
                return None
            return value

        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(save, (2000 + round_number, 3000 + round_number)))
        winners = [value for value in results if value is not None]
        assert len(winners) == 1, f"round {round_number}: {results}"
        assert (
            json.loads(path.read_text(encoding="utf-8"))["memory"]["pruning"]["soft_trim_chars"] == winners[0]
        )
    # Every applied save kept the version it replaced: one backup per round, none lost.
    assert len(list_history(path)) == 12


def _edit_outside(path: Path, document: object, at: datetime) -> None:
    """A change made outside the dashboard, written at `at`."""
    path.write_text(json.dumps(document), encoding="utf-8")
    stamp = int(at.timestamp() * 1_000_000_000)
    os.utime(path, ns=(stamp, stamp))


def test_the_past_before_an_outside_edit_reads_what_the_dashboards_save_wrote(
    isolated_mycel_home: Path,
) -> None:
    path = _user_file(isolated_mycel_home, {"memory": {"pruning": {"soft_trim_chars": 1000}}})
    read = read_json_file(path)
    apply_layer(path, {"memory": {"pruning": {"soft_trim_chars": 2000}}}, expected_sha256=read.sha256)
    call = datetime.now(UTC) + timedelta(seconds=1)  # a model call after the save
    _edit_outside(path, {"memory": {"pruning": {"soft_trim_chars": 3000}}}, call + timedelta(minutes=5))
    past = layer_file_at(ConfigLayerName.USER, path, call)
    assert past.note is None
    assert past.file.file.document == {"memory": {"pruning": {"soft_trim_chars": 2000}}}
    # After the edit: the file as it is.
    assert layer_file_at(ConfigLayerName.USER, path, call + timedelta(minutes=6)).file.file.document == {
        "memory": {"pruning": {"soft_trim_chars": 3000}}
    }


def test_the_past_before_an_outside_edit_with_no_save_of_the_dashboards_is_unknown(
    isolated_mycel_home: Path,
) -> None:
    path = isolated_mycel_home / "runtime.json"
    call = datetime.now(UTC)
    _edit_outside(path, {"memory": {"pruning": {"soft_trim_chars": 3000}}}, call + timedelta(minutes=5))
    past = layer_file_at(ConfigLayerName.USER, path, call)
    assert past.unknown_since == call + timedelta(minutes=5)
    assert past.note is not None and "kept nowhere" in past.note
    assert past.file.file.document == {}


def test_back_to_no_file_then_created_outside_reads_no_file_before(isolated_mycel_home: Path) -> None:
    path = isolated_mycel_home / "runtime.json"
    saved = apply_layer(path, {"runtime": {"context_limit": 9000}}, expected_sha256=None)
    apply_restore(path, saved.backup.name, expected_sha256=saved.sha256)  # back to "no file"
    assert not path.exists()
    call = datetime.now(UTC) + timedelta(seconds=1)
    _edit_outside(path, {"memory": {"pruning": {"soft_trim_chars": 7}}}, call + timedelta(minutes=5))
    past = layer_file_at(ConfigLayerName.USER, path, call)
    assert past.note is None and not past.file.file.exists


def test_a_call_in_the_same_second_as_a_save_reads_the_config_it_ran_with(isolated_mycel_home: Path) -> None:
    # A save's stamp has whole seconds: a call in that second, before the write, ran with the old file,
    # and a call just after it with the new one, even once the file is edited outside later.
    path = _user_file(isolated_mycel_home, {"memory": {"pruning": {"soft_trim_chars": 1000}}})
    before = datetime.now(UTC)
    apply_layer(
        path, {"memory": {"pruning": {"soft_trim_chars": 2000}}}, expected_sha256=read_json_file(path).sha256
    )
    written = datetime.fromtimestamp(path.stat().st_mtime_ns / 1e9, tz=UTC)
    stamp_second = before.replace(microsecond=0)
    assert stamp_second <= before < written
    _edit_outside(path, {"memory": {"pruning": {"soft_trim_chars": 3000}}}, written + timedelta(minutes=5))
    old = layer_file_at(ConfigLayerName.USER, path, before)
    new = layer_file_at(ConfigLayerName.USER, path, written + timedelta(microseconds=1))
    assert old.note is None and new.note is None
    assert old.file.file.document == {"memory": {"pruning": {"soft_trim_chars": 1000}}}
    assert new.file.file.document == {"memory": {"pruning": {"soft_trim_chars": 2000}}}
