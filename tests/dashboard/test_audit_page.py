from __future__ import annotations

import csv
import io

from mycel_dashboard.models import AuditEntry


def _entry(**overrides) -> AuditEntry:
    values = {
        "actor": "operator",
        "action": AuditEntry.Action.ROLLBACK,
        "result": AuditEntry.Result.APPLIED,
        "thread_id": "t-1",
        "target": "cp-1",
        "message": "new head cp-9",
    }
    values.update(overrides)
    return AuditEntry.objects.create(**values)


def test_audit_lists_entries_and_filters_by_action(viewer_client):
    _entry()
    _entry(action=AuditEntry.Action.CONFIG_SAVE, thread_id="", target="/x/runtime.json")
    response = viewer_client.get("/audit/", {"action": "config_save"})
    body = response.content.decode()
    assert response.status_code == 200
    assert "/x/runtime.json" in body
    assert "cp-1" not in body


def test_audit_partial_varies_on_hx_request(viewer_client):
    _entry()
    response = viewer_client.get("/audit/", HTTP_HX_REQUEST="true")
    assert "HX-Request" in response["Vary"]
    assert b'id="audit-rows"' in response.content and b"<html" not in response.content


def test_audit_escapes_hostile_text(viewer_client):
    _entry(message="<script>alert(1)</script>")
    body = viewer_client.get("/audit/").content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;" in body


def test_csv_export_neutralises_formulas(viewer_client):
    _entry(message='=HYPERLINK("http://evil")')
    response = viewer_client.get("/audit.csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0][:4] == ["time", "actor", "action", "result"]
    assert rows[1][6].startswith("'=")


def test_audit_requires_login(client, db):
    assert client.get("/audit/").status_code == 302
