"""Sign-ins that resist guessing (django-axes over the dashboard's own database): failures are throttled per
user name at one address and per address, recorded in the audit log with the lockout, shown on a plain page
that says for how long and who can unlock, and an operator unlocks from the Audit screen (an audited POST)
or with `manage.py axes_reset_username`."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from mycel_dashboard.models import AuditEntry

PASSWORD = "viewer-pass-123"  # the viewer fixture's (tests/dashboard/conftest.py)
HOME = "10.0.0.1"


def _sign_in(client: Client, username: str, password: str, address: str = HOME):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address)


def _signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def _rows(action: str, **filters: str) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(action=action, **filters).order_by("id"))


def _csrf_post(client: Client, url: str, data: dict[str, str]):
    """A POST as a browser sends it: with the token the page's form carries."""
    page = client.get(reverse("audit")).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token, "the Audit screen's forms carry a CSRF token"
    return client.post(url, {**data, "csrfmiddlewaretoken": token.group(1)})


@pytest.fixture
def strict_operator(operator) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    return client


def test_the_limits_leave_room_for_typos_and_come_from_the_environment() -> None:
    assert 5 <= settings.AXES_FAILURE_LIMIT <= 10  # per user name at one address
    assert settings.DASHBOARD_LOGIN_ADDRESS_FAILURE_LIMIT > settings.AXES_FAILURE_LIMIT
    assert timedelta(minutes=15) == settings.AXES_COOLOFF_TIME
    assert settings.AXES_RESET_ON_SUCCESS is True


def test_twenty_wrong_passwords_lock_the_user_out_until_an_operator_unlocks(
    viewer: User, strict_operator: Client
) -> None:
    limit = settings.AXES_FAILURE_LIMIT
    guesser = Client()
    statuses = [_sign_in(guesser, "viewer", f"guess-{n}").status_code for n in range(20)]
    assert statuses == [200] * (limit - 1) + [429] * (21 - limit)

    # Locked: the right password is refused too, on a page that says why, for how long and who unlocks.
    locked = _sign_in(guesser, "viewer", PASSWORD)
    body = locked.content.decode()
    assert locked.status_code == 429 and not _signed_in(guesser)
    assert "<html" in body and "Sign-in paused" in body
    assert "15 minutes" in body and "operator" in body and "viewer" in body
    assert re.search(r"until \d\d:\d\d", body)

    # The audit log: one row per counted failure, one for the lockout; nothing for the refused attempts.
    failures = _rows("login_failed", actor="viewer")
    assert len(failures) == limit and {f.target for f in failures} == {HOME}
    assert all(f.result == "refused" and f.user is None for f in failures)
    (lockout,) = _rows("login_lockout", actor="viewer")
    assert lockout.target == HOME and f"{limit} failed sign-ins" in lockout.message
    assert lockout.after["username"] == "viewer" and lockout.after["locked_until"]

    # The Audit screen shows them, and who is locked out now, with an Unlock button.
    audit = strict_operator.get(reverse("audit")).content.decode()
    assert "Failed sign-in" in audit and "Sign-in lockout" in audit
    assert "Locked out now" in audit and 'name="username" value="viewer"' in audit

    # Unlocking is a CSRF-protected POST by an operator, and is itself audited.
    unlock_url = reverse("audit_unlock")
    assert strict_operator.post(unlock_url, {"username": "viewer"}).status_code == 403  # no token
    assert _sign_in(Client(), "viewer", PASSWORD).status_code == 429
    done = _csrf_post(strict_operator, unlock_url, {"username": "viewer"})
    assert done.status_code == 302 and done["Location"] == reverse("audit")
    (unlock,) = _rows("login_unlock")
    assert unlock.actor == "operator" and unlock.result == "applied" and unlock.target == "viewer"
    assert "Locked out now" not in strict_operator.get(reverse("audit")).content.decode()

    after = Client()
    assert _sign_in(after, "viewer", PASSWORD).status_code == 302 and _signed_in(after)


def test_one_address_guessing_many_names_is_throttled_there_only(
    viewer: User, strict_operator: Client
) -> None:
    limit = settings.DASHBOARD_LOGIN_ADDRESS_FAILURE_LIMIT
    prober = "10.0.0.66"
    statuses = [_sign_in(Client(), f"user{n}", "guess", prober).status_code for n in range(limit + 2)]
    assert statuses == [200] * (limit - 1) + [429] * 3
    (lockout,) = _rows("login_lockout")
    assert lockout.target == prober and "from this address" in lockout.message

    # Every name from that address is refused, even the viewer's right password; another address works.
    refused = _sign_in(Client(), "viewer", PASSWORD, prober)
    assert refused.status_code == 429 and "address" in refused.content.decode()
    elsewhere = Client()
    assert _sign_in(elsewhere, "viewer", PASSWORD, "10.0.0.2").status_code == 302 and _signed_in(elsewhere)

    audit = strict_operator.get(reverse("audit")).content.decode()
    assert f'name="ip_address" value="{prober}"' in audit
    done = _csrf_post(strict_operator, reverse("audit_unlock"), {"ip_address": prober})
    assert done.status_code == 302
    assert _rows("login_unlock")[0].target == prober
    assert _sign_in(Client(), "viewer", PASSWORD, prober).status_code == 302


def test_a_success_resets_the_users_count_but_not_other_names_at_that_address(viewer: User) -> None:
    limit = settings.AXES_FAILURE_LIMIT
    client = Client()
    for n in range(limit - 1):
        assert _sign_in(client, "viewer", f"typo-{n}").status_code == 200
    assert _sign_in(client, "viewer", PASSWORD).status_code == 302
    for n in range(limit - 1):
        assert _sign_in(Client(), "viewer", f"typo-again-{n}").status_code == 200
    assert _rows("login_lockout") == []


def test_the_lockout_ends_by_itself_after_the_cool_off(viewer: User) -> None:
    from axes.models import AccessAttempt

    for n in range(settings.AXES_FAILURE_LIMIT):
        _sign_in(Client(), "viewer", f"guess-{n}")
    assert _sign_in(Client(), "viewer", PASSWORD).status_code == 429
    AccessAttempt.objects.update(
        attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(seconds=1)
    )
    assert _sign_in(Client(), "viewer", PASSWORD).status_code == 302


def test_the_command_line_unlocks_too(viewer: User) -> None:
    for n in range(settings.AXES_FAILURE_LIMIT):
        _sign_in(Client(), "viewer", f"guess-{n}")
    assert _sign_in(Client(), "viewer", PASSWORD).status_code == 429
    call_command("axes_reset_username", "viewer", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert _sign_in(Client(), "viewer", PASSWORD).status_code == 302


def test_only_operators_unlock_and_only_by_post(viewer: User, operator_client: Client) -> None:
    url = reverse("audit_unlock")
    viewer_client = Client()
    viewer_client.force_login(viewer)
    assert viewer_client.post(url, {"username": "viewer"}).status_code == 403
    assert operator_client.get(url).status_code == 405
    assert operator_client.post(url, {}).status_code == 400  # neither a name nor an address
    assert _rows("login_unlock") == []


def test_a_hostile_user_name_is_escaped_on_the_lock_page_and_the_audit_screen(
    viewer: User, operator_client: Client
) -> None:
    name = "<script>alert(1)</script>"
    for n in range(settings.AXES_FAILURE_LIMIT):
        response = _sign_in(Client(), name, f"guess-{n}")
    assert response.status_code == 429 and name not in response.content.decode()
    audit = operator_client.get(reverse("audit")).content.decode()
    assert name not in audit and "&lt;script&gt;alert(1)&lt;/script&gt;" in audit


def test_behind_the_tls_proxy_the_address_is_the_one_the_proxy_saw(settings, rf) -> None:
    from mycel_dashboard.web.login_throttle import client_address

    request = rf.post("/login/", REMOTE_ADDR="10.9.0.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7")
    assert client_address(request) == "10.9.0.1"  # no proxy configured: the header is anyone's to forge
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    assert client_address(request) == "203.0.113.7"  # the entry the proxy appended, not the client's own
    forged = rf.post("/login/", REMOTE_ADDR="10.9.0.1", HTTP_X_FORWARDED_FOR="not-an-address")
    assert client_address(forged) == "10.9.0.1"
