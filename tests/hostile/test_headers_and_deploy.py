"""Security headers on every page (a CSP with no inline script and no off-site source), and a clean deploy check."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

from django.test import Client
from django.urls import reverse

from tests.hostile.pages import checkpoint_ids, get_visits
from tests.hostile.payloads import HostileHome

ROOT = Path(__file__).resolve().parents[2]


def csp_directives(header: str) -> dict[str, list[str]]:
    directives: dict[str, list[str]] = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            directives[words[0].lower()] = words[1:]
    return directives


def header_problems(response) -> list[str]:
    """What is missing or too loose in one response's security headers."""
    problems = []
    csp = response.get("Content-Security-Policy")
    if csp is None:
        return ["no Content-Security-Policy"]
    directives = csp_directives(csp)
    if directives.get("script-src") != ["'self'"]:
        problems.append(f"script-src is {directives.get('script-src')}, not only 'self'")
    if directives.get("default-src") != ["'self'"]:
        problems.append(f"default-src is {directives.get('default-src')}")
    for name in ("object-src", "base-uri", "frame-ancestors"):
        if directives.get(name) != ["'none'"]:
            problems.append(f"{name} is {directives.get(name)}, not 'none'")
    for name, sources in directives.items():
        for source in sources:
            lowered = source.lower()
            off_site = lowered.startswith(("http:", "https:", "ws:", "wss:", "//")) or lowered == "*"
            host_like = not lowered.startswith("'") and lowered not in ("data:",) and "." in lowered
            if off_site or host_like:
                problems.append(f"{name} allows an off-site source {source}")
            if name in ("script-src", "default-src") and lowered in (
                "'unsafe-inline'",
                "'unsafe-eval'",
                "data:",
            ):
                problems.append(f"{name} allows {source}")
    expected = {
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
        "Cross-Origin-Opener-Policy": "same-origin",
    }
    for name, value in expected.items():
        if response.get(name) != value:
            problems.append(f"{name} is {response.get(name)!r}, not {value!r}")
    return problems


def test_the_policy_checker_rejects_loose_policies():
    class Fake(dict):
        def get(self, key, default=None):
            return super().get(key, default)

    good = {
        "Content-Security-Policy": "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none';"
        " frame-ancestors 'none'",
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
        "Cross-Origin-Opener-Policy": "same-origin",
    }
    assert header_problems(Fake(good)) == []
    for loose in (
        "script-src 'self' 'unsafe-inline'",
        "script-src 'self' https://cdn.example.com",
        "script-src 'self' cdn.example.com",
        "script-src *",
    ):
        policy = good["Content-Security-Policy"].replace("script-src 'self'", loose)
        assert header_problems(Fake({**good, "Content-Security-Policy": policy})) != [], loose
    assert header_problems(Fake({**good, "X-Frame-Options": "SAMEORIGIN"})) != []


def test_every_page_partial_and_error_carries_the_headers(viewer_client: Client, home: HostileHome):
    anonymous = Client()
    # One full page and one partial per URL name: the headers come from middleware, not from the data.
    kinds = {(v.name, bool(v.headers)): v for v in reversed(list(get_visits(home)))}
    responses = [(v.url, viewer_client.get(v.url, **v.headers)) for v in kinds.values()]
    assert {name for name, _ in kinds} == {v.name for v in get_visits(home)}
    responses += [
        ("404", viewer_client.get("/threads/no-such-thread/")),
        ("csv", viewer_client.get(reverse("audit_csv"))),
        (
            "403",
            viewer_client.post(
                reverse("rollback_apply", args=[home.thread_id, checkpoint_ids(home, home.thread_id)[0]]),
                {"fingerprint": "0" * 16},
            ),
        ),
        ("login", anonymous.get(reverse("login"))),
        ("anonymous redirect", anonymous.get(reverse("threads"))),
    ]
    assert {r.status_code for _, r in responses} >= {200, 302, 403, 404}
    for url, response in responses:
        assert header_problems(response) == [], url


def test_static_files_are_not_sniffed(client: Client):
    response = client.get("/static/dashboard/charts.js")
    assert response.status_code == 200
    assert response["X-Content-Type-Options"] == "nosniff"


def production_env(tmp_path: Path) -> dict[str, str]:
    """The production environment README documents: DEBUG off, a real SECRET_KEY, TLS settings on."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("SECURE_", "DJANGO_", "DEBUG"))}
    return {
        **keep,
        "DEBUG": "false",
        "DASHBOARD_LOCAL": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "dashboard.example.org",
        "CSRF_TRUSTED_ORIGINS": "https://dashboard.example.org",
        "SECURE_COOKIES": "true",
        "SECURE_SSL_REDIRECT": "true",
        "SECURE_HSTS_SECONDS": "31536000",
        "DASHBOARD_DATA_DIR": str(tmp_path / "var"),
        "HOME": str(tmp_path),
    }


def test_deploy_check_is_clean_with_production_settings(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=production_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues (0 silenced)." in done.stdout


def test_production_refuses_to_start_without_a_secret_key(tmp_path: Path):
    env = production_env(tmp_path)
    del env["SECRET_KEY"]
    done = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert (
        "django.core.exceptions.ImproperlyConfigured: "
        "SECRET_KEY is required when DEBUG is off and DASHBOARD_LOCAL=false"
    ) in done.stderr


def test_deploy_check_flags_debug_on(tmp_path: Path):
    """The check is a real gate: the same environment with DEBUG on fails it."""
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env={**production_env(tmp_path), "DEBUG": "true"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "(security.W018) You should not have DEBUG set to True in deployment." in done.stdout + done.stderr


def test_static_files_carry_the_same_policy(client):
    response = client.get("/static/dashboard/app.css")
    assert response.status_code == 200
    assert "script-src 'self'" in response["Content-Security-Policy"]
    assert response["X-Frame-Options"] == "DENY"
