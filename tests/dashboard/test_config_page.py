from __future__ import annotations

import json
import re
from pathlib import Path

from django.test import Client

from memory_core.stores.runtime_config import BACKUP_PREFIX
from mycel_dashboard.models import AuditEntry
from tests.support.folders import unwritable_folder

TOOL_HEAVY = "m_npRsndIka9dx-2"  # Bash outputs of 1,737, 6,431 and 12,731 chars
COMPACTED = "m_0D8EzdJXJhk9-2"  # leon:snug, context limit 5500
WHATIF = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "whatif"}
SAVE_PANEL = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "save-panel"}
SOFT = "memory.pruning.soft_trim_chars"


def _figure(body: str) -> dict:
    found = re.search(r'<script id="whatif-figure" type="application/json">(.*?)</script>', body, re.S)
    assert found, "the what-if chart's json_script is missing"
    return json.loads(found.group(1))


def _fleet(body: str, row: str) -> tuple[str, str]:
    found = re.search(
        rf"{re.escape(row)}.*?</th><td class=\"num\">([^<]*)</td><td class=\"num\"[^>]*>([^<]*)</td>",
        body,
        re.S,
    )
    assert found, f"fleet row {row!r} is missing"
    return found.group(1), found.group(2)


def _user_file(home: Path) -> Path:
    return home / "runtime.json"


def _preview(client: Client, **values: str) -> tuple[str, str]:
    """Ask for the diff (as the page does) and return the body and the file hash the save form carries."""
    params = {"thread": TOOL_HEAVY, "layer": "user", **values}
    response = client.get("/config/preview/", params, **SAVE_PANEL)
    assert response.status_code == 200
    body = response.content.decode()
    found = re.search(r'name="sha256" value="([0-9a-f]*)"', body)
    assert found, "the save form must carry the file's hash"
    return body, found.group(1)


def _save(client: Client, sha256: str, **values: str):
    data = {"thread": TOOL_HEAVY, "layer": "user", "sha256": sha256, **values}
    return client.post("/config/save/", data, **SAVE_PANEL)


def test_page_shows_effective_values_with_the_layer_each_comes_from(viewer_client, sample_home: Path):
    _user_file(sample_home).write_text(json.dumps({"memory": {"pruning": {"soft_trim_chars": 2500}}}))
    response = viewer_client.get("/config/")
    body = response.content.decode()
    assert response.status_code == 200
    row = re.search(r"<code>memory.pruning.soft_trim_chars</code>.*?</tr>", body, re.S)
    assert row and "2,500" in row.group(0) and "layer-user" in row.group(0)
    hard = re.search(r"<code>memory.pruning.hard_clear_threshold</code>.*?</tr>", body, re.S)
    assert hard and "10,000" in hard.group(0) and "layer-system" in hard.group(0)
    assert str(_user_file(sample_home)) in body
    assert 'href="/config/"' in body and 'aria-current="page">Config' in body


def test_page_lists_the_context_limit_of_every_model_in_use(viewer_client, sample_home: Path):
    body = viewer_client.get("/config/").content.decode()
    snug = re.search(r"<code>leon:snug</code>.*?</tr>", body, re.S)
    # The trigger is int(5500 * 0.7) = 3849: float rounding, exactly as in Mycel.
    assert snug and "5,500" in snug.group(0) and "3,849" in snug.group(0)
    assert "mapping[&#x27;leon:snug&#x27;].context_limit" in snug.group(0)
    assert "<code>leon:large</code>" in body


def test_page_says_where_mycels_docs_and_code_differ(viewer_client, sample_home: Path):
    body = viewer_client.get("/config/").content.decode()
    assert "min_messages is documented" in body
    assert "The compaction threshold is fixed at 0.7 in Mycel&#x27;s code" in body
    assert (
        "Old-style top-level keys (e.g. &quot;context_limit&quot;: 50000 at the top of runtime.json" in body
    )
    assert "not read by Mycel" in body  # min_messages, reserve_tokens, trim_tool_results are flagged


def test_every_number_has_a_slider_and_an_input_that_triggers_the_whatif(viewer_client, sample_home: Path):
    body = viewer_client.get("/config/").content.decode()
    for key in (SOFT, "memory.pruning.hard_clear_threshold", "memory.compaction.keep_recent_tokens"):
        number = re.search(rf'<input type="number" id="([^"]+)" name="{re.escape(key)}"[^>]*>', body, re.S)
        assert number, key
        assert 'hx-trigger="input changed delay:300ms"' in number.group(0)
        assert f'data-pair="{number.group(1)}"' in body
    assert "<script>" not in body  # CSP: no inline scripts
    assert "dashboard/config.js" in body


def test_whatif_partial_is_only_the_panel_and_varies_on_hx_request(viewer_client, sample_home: Path):
    full = viewer_client.get("/config/", {"thread": TOOL_HEAVY})
    partial = viewer_client.get("/config/", {"thread": TOOL_HEAVY, SOFT: "1000"}, **WHATIF)
    assert "HX-Request" in full["Vary"] and "HX-Request" in partial["Vary"]
    body = partial.content.decode()
    assert body.lstrip().startswith('<section id="whatif"')
    assert "<html" not in body


def test_whatif_shows_results_whose_badge_changes_and_the_proposed_trace(viewer_client, sample_home: Path):
    unchanged = viewer_client.get("/config/", {"thread": TOOL_HEAVY}, **WHATIF).content.decode()
    names = [trace["name"] for trace in _figure(unchanged)["data"]]
    assert "proposed: sent to the model" not in names
    assert "None: every tool result keeps its badge." in unchanged

    body = viewer_client.get("/config/", {"thread": TOOL_HEAVY, SOFT: "1000"}, **WHATIF).content.decode()
    assert f"<code>{SOFT}</code>: 3,000 → <strong>1,000</strong>" in body
    # The 1,737-char Bash output is now longer than soft_trim_chars: unchanged -> soft-trimmed.
    row = re.search(r"<td class=\"num\">1,737</td>.*?</tr>", body, re.S)
    assert row and "badge unchanged" in row.group(0) and "badge soft_trimmed" in row.group(0)
    figure = _figure(body)
    proposed = next(t for t in figure["data"] if t["name"] == "proposed: sent to the model")
    current = next(t for t in figure["data"] if t["name"] == "sent to the model")
    assert len(proposed["y"]) == len(current["y"]) == 13
    assert sum(proposed["y"]) < sum(current["y"])  # trimming more sends less
    before, after = _fleet(body, "Tool results soft-trimmed at the next call")
    assert int(after) > int(before)


def test_whatif_on_a_compacting_thread_follows_the_context_limit(viewer_client, sample_home: Path):
    body = viewer_client.get(
        "/config/", {"thread": COMPACTED, "runtime.context_limit": "200000"}, **WHATIF
    ).content.decode()
    # runtime.context_limit does not beat models.json's mapping for leon:snug: nothing changes there...
    assert re.search(r"Compactions \(record → replay\)</dt><dd>(\d+) → <strong[^>]*>\1<", body)
    lower = viewer_client.get(
        "/config/", {"thread": COMPACTED, "memory.compaction.keep_recent_tokens": "500"}, **WHATIF
    ).content.decode()
    # ...while a smaller keep_recent changes what is sent after every compaction.
    current, proposed = re.search(
        r"Tokens sent, all calls</dt><dd>([\d,]+) → <strong>([\d,]+)<", lower
    ).groups()
    assert int(proposed.replace(",", "")) < int(current.replace(",", ""))


def test_whatif_warns_about_surprising_combinations_the_proposal_makes(viewer_client, sample_home: Path):
    body = viewer_client.get("/config/", {SOFT: "12000"}, **WHATIF).content.decode()
    assert "nothing is ever soft-trimmed" in body  # soft >= hard
    body = viewer_client.get("/config/", {"runtime.context_limit": "8000"}, **WHATIF).content.decode()
    assert "compacts on every model call" in body
    quiet = viewer_client.get("/config/", {"memory.pruning.protect_recent": "4"}, **WHATIF).content.decode()
    assert "nothing is ever soft-trimmed" not in quiet and "compacts on every" not in quiet


def test_save_without_javascript_answers_with_the_whole_page(operator_client, sample_home: Path):
    response = operator_client.post("/config/save/", {"layer": "user", "sha256": "", SOFT: "2000"})
    body = response.content.decode()
    assert response.status_code == 200
    assert "<html" in body and 'class="saved"' in body
    assert json.loads(_user_file(sample_home).read_text()) == {
        "memory": {"pruning": {"soft_trim_chars": 2000}}
    }


def test_out_of_range_value_is_refused_with_mycels_rule(viewer_client, sample_home: Path):
    body = viewer_client.get("/config/", {"thread": TOOL_HEAVY, SOFT: "0"}, **WHATIF).content.decode()
    assert "Refused <code>memory.pruning.soft_trim_chars</code>: Must be greater than 0" in body
    text = viewer_client.get("/config/", {SOFT: "lots"}, **WHATIF).content.decode()
    assert "is not a whole number" in text


def test_out_of_range_save_is_refused_and_nothing_is_written(operator_client, sample_home: Path):
    response = _save(operator_client, "", **{SOFT: "-5"})
    body = response.content.decode()
    assert response.status_code == 400
    assert "Must be greater than 0" in body and "Nothing was written" in body
    assert not _user_file(sample_home).exists()
    entry = AuditEntry.objects.get()
    assert entry.action == AuditEntry.Action.CONFIG_SAVE and entry.result == AuditEntry.Result.REFUSED


def test_operator_previews_the_diff_then_saves_in_nested_form(operator_client, sample_home: Path):
    _user_file(sample_home).write_text(json.dumps({"context_limit": 50000, "mcp": {"keep": "me"}}))
    body, sha = _preview(operator_client, **{SOFT: "2000"})
    assert re.search(
        r"<code>memory.pruning.soft_trim_chars</code></td><td><span class=\"muted\">\(absent\)", body
    )
    assert "restart Mycel" in body
    assert "Save to the user layer" in body
    response = _save(operator_client, sha, **{SOFT: "2000"})
    assert response.status_code == 200
    saved = json.loads(_user_file(sample_home).read_text())
    assert saved == {
        "context_limit": 50000,
        "mcp": {"keep": "me"},
        "memory": {"pruning": {"soft_trim_chars": 2000}},
    }
    assert "config-saved" in json.loads(response["HX-Trigger"])
    text = response.content.decode()
    backup = next(p for p in (sample_home / ".history").iterdir() if p.name.startswith(BACKUP_PREFIX))
    assert (
        f"Saved <code>{_user_file(sample_home)}</code>; the previous version is kept as <code>{backup.name}</code>."
    ) in text
    assert (
        "Mycel reads runtime.json only when it builds an agent: restart Mycel&#x27;s backend (or delete the "
        "thread&#x27;s agent) before the new memory settings apply."
    ) in text
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.result, entry.actor) == (
        AuditEntry.Action.CONFIG_SAVE,
        AuditEntry.Result.APPLIED,
        "operator",
    )
    assert entry.before["document"] == {"context_limit": 50000, "mcp": {"keep": "me"}}
    assert entry.after["document"]["memory"] == {"pruning": {"soft_trim_chars": 2000}}
    assert entry.target == str(_user_file(sample_home))
    # The page now runs with the saved value, from the user layer.
    page = operator_client.get("/config/").content.decode()
    row = re.search(r"<code>memory.pruning.soft_trim_chars</code>.*?</tr>", page, re.S)
    assert row and "2,000" in row.group(0) and "layer-user" in row.group(0)


def test_viewer_may_preview_but_cannot_save(viewer_client, sample_home: Path):
    preview = viewer_client.get("/config/preview/", {"layer": "user", SOFT: "2000"}, **SAVE_PANEL)
    assert "Only operators may save" in preview.content.decode()
    response = _save(viewer_client, "", **{SOFT: "2000"})
    assert response.status_code == 403
    assert not _user_file(sample_home).exists()
    restore = viewer_client.post(
        "/config/restore/", {"layer": "user", "version": "runtime.json.bak-20260101T000000"}
    )
    assert restore.status_code == 403


def test_forged_post_without_csrf_token_is_refused(operator, sample_home: Path):
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    response = client.post("/config/save/", {"layer": "user", "sha256": "", SOFT: "2000"})
    assert response.status_code == 403
    assert not _user_file(sample_home).exists()
    assert not AuditEntry.objects.exists()


def test_hand_edit_between_preview_and_save_is_detected(operator_client, sample_home: Path):
    _user_file(sample_home).write_text(json.dumps({"memory": {"pruning": {"protect_recent": 4}}}))
    _, sha = _preview(operator_client, **{SOFT: "2000"})
    hand_edit = json.dumps({"memory": {"pruning": {"protect_recent": 5}}})
    _user_file(sample_home).write_text(hand_edit)
    response = _save(operator_client, sha, **{SOFT: "2000"})
    assert response.status_code == 409
    assert "edited by hand" in response.content.decode()
    assert _user_file(sample_home).read_text() == hand_edit
    assert not (sample_home / ".history").exists()
    assert AuditEntry.objects.get().result == AuditEntry.Result.REFUSED


def test_unwritable_config_folder_is_refused_and_nothing_is_written(operator_client, sample_home: Path):
    original = json.dumps({"memory": {"compaction": {"keep_recent_tokens": 30000}}})
    _user_file(sample_home).write_text(original)
    # The backup folder cannot be created (a file has its name), so the save must stop before writing.
    (sample_home / ".history").write_text("not a folder")
    _, sha = _preview(operator_client, **{SOFT: "2000"})
    response = _save(operator_client, sha, **{SOFT: "2000"})
    assert response.status_code == 409
    assert "Nothing was changed" in response.content.decode()
    assert _user_file(sample_home).read_text() == original
    assert sorted(p.name for p in sample_home.glob(".runtime.json*")) == []


def test_read_only_config_folder_is_refused(operator_client, sample_home: Path):
    original = json.dumps({"memory": {"pruning": {"protect_recent": 4}}})
    _user_file(sample_home).write_text(original)
    _, sha = _preview(operator_client, **{SOFT: "2000"})
    before = sorted(p.name for p in sample_home.iterdir())
    with unwritable_folder(sample_home):
        response = _save(operator_client, sha, **{SOFT: "2000"})
    assert response.status_code == 409
    assert f"Cannot keep a backup in {sample_home / '.history'}" in response.content.decode()
    assert _user_file(sample_home).read_text() == original
    assert sorted(p.name for p in sample_home.iterdir()) == before


def test_history_lists_earlier_versions_and_restores_one(operator_client, sample_home: Path):
    _user_file(sample_home).write_text(json.dumps({"memory": {"pruning": {"soft_trim_chars": 2500}}}))
    _, sha = _preview(operator_client, **{SOFT: "2000"})
    assert _save(operator_client, sha, **{SOFT: "2000"}).status_code == 200
    page = operator_client.get("/config/", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="history").content.decode()
    assert page.lstrip().startswith('<section id="history"')
    version = re.search(r'name="version" value="([^"]+)"', page).group(1)
    # Restore… first shows what it would change in the file as it is now, and asks.
    preview = operator_client.get(
        "/config/restore/preview/", {"layer": "user", "version": version}, **SAVE_PANEL
    ).content.decode()
    assert re.search(
        r"<code>memory.pruning.soft_trim_chars</code></td><td>2,000</td><td><strong>2,500", preview
    )
    assert json.loads(_user_file(sample_home).read_text())["memory"]["pruning"]["soft_trim_chars"] == 2000
    current_sha = re.search(r'name="sha256" value="([0-9a-f]{64})"', preview).group(1)
    response = operator_client.post(
        "/config/restore/", {"layer": "user", "version": version, "sha256": current_sha}, **SAVE_PANEL
    )
    assert response.status_code == 200, response.content.decode()
    assert "config-saved" in response["HX-Trigger"]
    assert json.loads(_user_file(sample_home).read_text()) == {
        "memory": {"pruning": {"soft_trim_chars": 2500}}
    }
    restore = AuditEntry.objects.filter(action=AuditEntry.Action.CONFIG_RESTORE).get()
    assert restore.result == AuditEntry.Result.APPLIED
    assert restore.before["document"]["memory"]["pruning"]["soft_trim_chars"] == 2000
    assert restore.after["document"]["memory"]["pruning"]["soft_trim_chars"] == 2500


def test_restore_of_an_unknown_version_is_refused(operator_client, sample_home: Path):
    response = operator_client.post(
        "/config/restore/", {"layer": "user", "version": "runtime.json.bak-20200101T000000"}, **SAVE_PANEL
    )
    assert response.status_code == 409
    assert "not a saved version" in response.content.decode()
    assert not _user_file(sample_home).exists()


def test_save_to_project_layer_writes_the_workspace_file(
    operator_client, sample_home: Path, monkeypatch, tmp_path
):
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("MYCEL_PROJECT_DIR", str(project))
    body, sha = _preview(
        operator_client, layer="project", **{"memory.compaction.keep_recent_tokens": "12000"}
    )
    assert str(project / ".leon" / "runtime.json") in body
    response = _save(
        operator_client, sha, layer="project", **{"memory.compaction.keep_recent_tokens": "12000"}
    )
    assert response.status_code == 200, response.content.decode()
    assert json.loads((project / ".leon" / "runtime.json").read_text()) == {
        "memory": {"compaction": {"keep_recent_tokens": 12000}}
    }
    assert not _user_file(sample_home).exists()
