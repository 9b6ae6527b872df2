"""Every page and partial of the app, over a data home where every string is hostile: all of it is text.

The pages are enumerated per URL name, and a test fails when the URLconf gains a name this file does not
visit, so a new page cannot be forgotten.
"""

from __future__ import annotations

import csv
import io
import json
import re
from urllib.parse import urlencode

from django.test import Client
from django.urls import get_resolver, reverse
from prometheus_client.parser import text_string_to_metric_families

from tests.hostile.html_checks import page_problems
from tests.hostile.pages import act_with_hostile_strings, body_of, checkpoint_ids, get_visits
from tests.hostile.payloads import (
    CSV_FORMULAS,
    EVERYTHING,
    MARKUP,
    TEMPLATE_SYNTAX,
    HostileHome,
    escaped,
)
from tests.hostile.test_secrets_never_leak import leaks

# Names reached other than by `get_visits`: the login form, the POST-only actions.
OTHER_NAMES = {
    "login",
    "logout",
    "rollback_apply",
    "undo_apply",
    "dry_run_generate",
    "retention_export",
    "thread_export",  # POST: a download, audited (its own tests check the files' escaping)
    "config_save",
    "config_restore",
    "audit_csv",
    "audit_unlock",  # POST: redirects; a hostile user name's escaping is in tests/dashboard/test_login_throttle.py
    # The JSON API: token-authorised JSON, its escaping covered by tests/dashboard/test_api.py.
    "api_threads",
    "api_thread",
    "api_calls",
    "api_checkpoint",
    "api_whatif",
    "api_search",
    "api_storage",
    # Not HTML: test_answers_that_are_not_html_hold_the_hostile_home below.
    "context",
    "healthz",
    "readyz",
    "metrics",
}


def test_every_url_name_is_visited(pristine: HostileHome, home: HostileHome):
    names = {key for key in get_resolver().reverse_dict if isinstance(key, str)}
    visited = {visit.name for visit in get_visits(home)} | OTHER_NAMES
    assert names - visited == set(), "a page this file does not visit: add it to get_visits"


def test_answers_that_are_not_html_hold_the_hostile_home(viewer_client: Client, home: HostileHome):
    """/context/ redirects to its first tab; /healthz and /readyz are JSON; /metrics parses as Prometheus's
    text, a hostile model name being a label value written exactly, and none of them shows a secret."""
    assert viewer_client.get(reverse("context")).headers["Location"] == reverse("context_calibration")
    for name in ("healthz", "readyz"):
        response = viewer_client.get(reverse(name))
        assert response.headers["Content-Type"].startswith("application/json"), name
        json.loads(body_of(response))
        assert leaks(body_of(response)) == [], name
    scrape = body_of(viewer_client.get(reverse("metrics")))  # the test client asks from loopback
    assert leaks(scrape) == []
    models = {s.labels.get("model") for f in text_string_to_metric_families(scrape) for s in f.samples}
    assert MARKUP["svg_onload"] in models  # the model the hostile checkpoints name


def test_every_page_and_partial_renders_hostile_data_as_text(viewer_client: Client, home: HostileHome):
    seen = 0
    for visit in get_visits(home):
        response = viewer_client.get(visit.url, **visit.headers)
        assert response.status_code == 200, (visit.url, visit.headers)
        body = body_of(response)
        assert page_problems(body) == [], (visit.url, visit.headers)
        seen += 1
    assert seen > 150


def test_hostile_strings_show_escaped_where_they_belong(viewer_client: Client, home: HostileHome):
    def page(url: str, **headers: str) -> str:
        response = viewer_client.get(url, **headers)
        assert response.status_code == 200, url
        return body_of(response)

    listing = page(reverse("threads"))
    assert escaped(MARKUP["img_onerror"]) in listing  # the agent's (member's) name
    assert escaped(MARKUP["svg_onload"]) in listing  # the model from the checkpoint metadata
    assert escaped(home.odd_id_thread_id) in listing

    thread = page(reverse("thread", args=[home.thread_id]))
    assert escaped(f"Please summarise this page: {EVERYTHING}") in thread  # human message
    assert escaped(f"Done: {MARKUP['close_script_in_json']} {MARKUP['css']}") in thread  # AI text
    assert escaped(MARKUP["script"] + " " + MARKUP["img_onerror"]) in thread  # tool output
    assert escaped(f"Summary: {EVERYTHING}") in thread  # active summary
    assert escaped(f"prefix {MARKUP['svg_onload']} {TEMPLATE_SYNTAX}") in thread  # split-turn prefix
    assert escaped(f"old {MARKUP['iframe']}") in thread  # inactive summary
    assert escaped(MARKUP["close_script_in_json"]).replace("&quot;", "\\&quot;") in thread  # tool-call args
    # Template syntax from data is never evaluated: it stays literally as written.
    assert TEMPLATE_SYNTAX in thread
    assert "&amp;lt;script&amp;gt;window.__pwned=11" in thread  # entities stay entities, never decoded

    queue = page(reverse("panel", args=[home.thread_id, "queue"]))
    assert escaped(EVERYTHING) in queue and escaped(MARKUP["img_onerror"]) in queue
    operations = page(reverse("panel", args=[home.thread_id, "file-operations"]))
    assert escaped(f"../../{MARKUP['svg_onload']}") in operations
    events = page(reverse("panel", args=[home.thread_id, "run-events"]))
    assert escaped(MARKUP["script"]) in events and "\ufffd" in events  # the lone surrogate, replaced
    sandbox = page(reverse("panel", args=[home.thread_id, "sandbox"]))
    assert escaped(f"/tmp/{MARKUP['svg_onload']}") in sandbox

    spill = page(reverse("spill", args=[home.thread_id, home.spill_ids[0]]))
    assert len(spill) > 1_000_000 and escaped(MARKUP["img_onerror"]) in spill
    assert "invalid utf-8: \ufffd" in spill

    checkpoint = page(
        reverse(
            "checkpoint", args=[home.metadata_thread_id, checkpoint_ids(home, home.metadata_thread_id)[0]]
        )
    )
    assert escaped(MARKUP["svg_onload"]) in checkpoint  # a metadata value under a hostile key
    assert escaped(MARKUP["script"]) in checkpoint

    config = page(f"{reverse('config')}?{urlencode({'thread': home.thread_id})}")
    assert escaped(MARKUP["script"]) in config or escaped(MARKUP["svg_onload"]) in config


def test_invalid_utf8_in_a_blob_renders_the_rest_of_the_thread(viewer_client: Client, home: HostileHome):
    response = viewer_client.get(reverse("thread", args=[home.bad_utf8_thread_id]))
    assert response.status_code == 200
    body = body_of(response)
    assert page_problems(body) == []
    assert escaped(f"reply {MARKUP['img_onerror']}") in body  # the intact message next to the broken one


def test_chart_and_scripts_get_json_only_through_json_script(viewer_client: Client, home: HostileHome):
    for thread_id in home.thread_ids:
        body = body_of(viewer_client.get(reverse("thread", args=[thread_id])))
        for tag in re.findall(r"<script\b[^>]*>", body):
            assert "src=" in tag or 'type="application/json"' in tag, tag
        assert "</script><script>" not in body
    body = body_of(viewer_client.get(reverse("thread", args=[home.odd_id_thread_id])))
    figure = re.search(r'<script id="fill-figure" type="application/json">(.*?)</script>', body, re.S)
    assert figure is not None and "<" not in figure.group(1)
    # each point links to the timeline under the thread's own URL (the id travels encoded, never raw)
    assert f'"{reverse("thread", args=[home.odd_id_thread_id])}?view=stored' in figure.group(1)
    assert "onerror" not in figure.group(1)


def test_actions_with_hostile_data_escape_and_csv_neutralises_formulas(
    operator_client: Client, home: HostileHome
):
    for name, status, body in act_with_hostile_strings(operator_client, home):
        assert status < 500, name
        assert page_problems(body) == [], name
    # Logged out by the last action: log in again to read what the actions recorded.
    from django.contrib.auth.models import User

    operator_client.force_login(User.objects.get(username="operator"))
    audit = body_of(operator_client.get(reverse("audit")))
    assert page_problems(audit) == []
    assert escaped(home.odd_id_thread_id) in audit
    response = operator_client.get(reverse("audit_csv"))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(body_of(response))))
    assert len(rows) > len(home.formula_thread_ids)
    cells = [cell for row in rows[1:] for cell in row]
    for cell in cells:
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
    for thread_id in home.formula_thread_ids:
        assert "'" + thread_id in cells  # kept, behind the apostrophe that makes it text
    assert set(CSV_FORMULAS) == {t[0] for t in home.formula_thread_ids}


def test_login_page_escapes_a_hostile_next_url(client: Client, home: HostileHome):
    body = body_of(client.get(f"{reverse('login')}?{urlencode({'next': MARKUP['attribute_breakout']})}"))
    assert page_problems(body) == []
    response = client.get(f"{reverse('login')}?{urlencode({'next': 'javascript:alert(1)'})}")
    assert response.status_code == 200


def test_the_charts_script_json_is_what_json_script_writes() -> None:
    import re as _re

    from django.utils.html import json_script

    from mycel_dashboard.screens.shared.charts import script_json

    figure = {
        "data": [{"name": "</script><script>alert(1)</script> & <!-- ", "x": [1], "y": [2]}],
        "u": "a&b>c",
    }
    inner = _re.fullmatch(
        r'<script id="f" type="application/json">(.*)</script>', json_script(figure, "f"), _re.S
    )
    assert inner is not None and script_json(figure) == inner.group(1)
    assert "<" not in script_json(figure) and ">" not in script_json(figure)
