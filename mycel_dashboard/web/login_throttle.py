"""Sign-ins that resist guessing: django-axes counts failures in the dashboard's own database; this module
holds the dashboard's policy on top of it (settings.py sets the numbers).

Two limits: one user name from one address (AXES_FAILURE_LIMIT; a success clears it), and one address
whatever the names (DASHBOARD_LOGIN_ADDRESS_FAILURE_LIMIT), so a typo-prone colleague behind the same
address is not paused by someone else's five typos, and a script walking through names is. Each counted
failure and each lockout is an audit entry; an attempt refused during a pause is not (it is not counted, so
the pause ends when the page says, and a script hammering a paused sign-in cannot fill the audit log).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_cool_off
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Max, QuerySet, Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from mycel_dashboard.models import AuditEntry
from mycel_dashboard.web.audit import AuditTrail


class LockScope(StrEnum):
    USER = "user"  # one user name from one address
    ADDRESS = "address"  # every name from one address


@dataclass(frozen=True, slots=True)
class Lockout:
    """A sign-in pause in force: whose, from where, after how many failures, and until when (None: until an
    operator unlocks it)."""

    scope: LockScope
    username: str
    ip_address: str
    failures: int
    limit: int
    until: datetime | None


@dataclass(frozen=True, slots=True)
class Counts:
    user_at_address: int
    address: int


def client_address(request: HttpRequest) -> str | None:
    """The address a sign-in comes from: behind the TLS proxy settings.py trusts (BEHIND_TLS_PROXY), the
    last X-Forwarded-For entry, the one that proxy appended; otherwise the connection's own address."""
    candidates = [request.META.get("REMOTE_ADDR", "")]
    if getattr(settings, "SECURE_PROXY_SSL_HEADER", None):
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        candidates.insert(0, forwarded.rsplit(",", 1)[-1].strip())
    for candidate in candidates:
        try:
            return str(ipaddress.ip_address(candidate))
        except ValueError:
            continue
    return None


def _recent() -> QuerySet[Any]:
    """The attempts that still count: those within the cool-off (all of them without one)."""
    cool_off = get_cool_off()
    attempts: QuerySet[Any] = AccessAttempt.objects.all()
    return attempts if cool_off is None else attempts.filter(attempt_time__gte=timezone.now() - cool_off)


def _until(last: datetime | None) -> datetime | None:
    cool_off = get_cool_off()
    return None if cool_off is None or last is None else last + cool_off


def failure_counts(username: str | None, ip_address: str | None) -> Counts:
    """Counted failures for this name at this address, and for this address over every name."""
    at_address = _recent().filter(ip_address=ip_address)
    address = at_address.aggregate(n=Sum("failures_since_start"))["n"] or 0
    user = at_address.filter(username=username).aggregate(n=Sum("failures_since_start"))["n"] or 0
    return Counts(user_at_address=user, address=address)


def lockout_of(username: str | None, ip_address: str | None) -> Lockout | None:
    """The pause that stops this name signing in from this address now, if any (the address's first)."""
    at_address = _recent().filter(ip_address=ip_address)
    address = at_address.aggregate(n=Sum("failures_since_start"), last=Max("attempt_time"))
    address_limit = settings.DASHBOARD_LOGIN_ADDRESS_FAILURE_LIMIT
    if (address["n"] or 0) >= address_limit:
        until = _until(address["last"])
        return Lockout(LockScope.ADDRESS, "", ip_address or "", address["n"], address_limit, until)
    user = at_address.filter(username=username).aggregate(
        n=Sum("failures_since_start"), last=Max("attempt_time")
    )
    if (user["n"] or 0) >= settings.AXES_FAILURE_LIMIT:
        until = _until(user["last"])
        return Lockout(
            LockScope.USER, username or "", ip_address or "", user["n"], settings.AXES_FAILURE_LIMIT, until
        )
    return None


def current_lockouts() -> list[Lockout]:
    """Every pause in force, for the Audit screen: addresses first, then names at an address, newest first."""
    recent = _recent()
    addresses = (
        recent.values("ip_address")
        .annotate(n=Sum("failures_since_start"), last=Max("attempt_time"))
        .filter(n__gte=settings.DASHBOARD_LOGIN_ADDRESS_FAILURE_LIMIT)
        .order_by("-last")
    )
    users = (
        recent.values("username", "ip_address")
        .annotate(n=Sum("failures_since_start"), last=Max("attempt_time"))
        .filter(n__gte=settings.AXES_FAILURE_LIMIT)
        .order_by("-last")
    )
    limit = settings.DASHBOARD_LOGIN_ADDRESS_FAILURE_LIMIT
    out = [
        Lockout(LockScope.ADDRESS, "", row["ip_address"] or "", row["n"], limit, _until(row["last"]))
        for row in addresses
    ]
    paused = {lockout.ip_address for lockout in out}
    out += [
        Lockout(
            LockScope.USER,
            row["username"] or "",
            row["ip_address"] or "",
            row["n"],
            settings.AXES_FAILURE_LIMIT,
            _until(row["last"]),
        )
        for row in users
        if (row["ip_address"] or "") not in paused
    ]
    return out


class DashboardLockoutHandler(AxesDatabaseHandler):  # type: ignore[misc]  # axes ships no types
    """axes' database handler with the dashboard's two limits, its audit entries, and a success that clears
    only that name's count at that address (axes would clear the whole address's, letting anyone with one
    account reset a guessing script's count by signing in between guesses)."""

    def get_failures(self, request: Any, credentials: dict[str, Any] | None = None) -> int:
        # axes compares this with AXES_FAILURE_LIMIT: an address over its own limit counts as at the limit.
        username = get_client_username(request, credentials)
        lockout = lockout_of(username, request.axes_ip_address)
        request.dashboard_lockout = lockout
        if lockout is not None:
            return max(lockout.failures, settings.AXES_FAILURE_LIMIT)
        return failure_counts(username, request.axes_ip_address).user_at_address

    def reset_user_attempts(self, request: Any, credentials: dict[str, Any] | None = None) -> int:
        username = get_client_username(request, credentials)
        mine = AccessAttempt.objects.filter(username=username, ip_address=request.axes_ip_address)
        deleted: int = mine.delete()[0]
        return deleted

    def user_login_failed(
        self, sender: Any, credentials: dict[str, Any], request: Any = None, **kwargs: Any
    ) -> None:
        # The backend marks a sign-in it refused because of a pause before this runs; axes counts nothing then.
        refused_while_paused = request is not None and getattr(request, "axes_locked_out", False)
        super().user_login_failed(sender, credentials, request, **kwargs)
        if request is None or refused_while_paused:
            return
        username = get_client_username(request, credentials) or ""
        address = request.axes_ip_address or ""
        counts = failure_counts(username, request.axes_ip_address)
        AuditTrail(request, AuditEntry.Action.LOGIN_FAILED, actor=username).refused(
            f"Wrong user name or password: failure {counts.user_at_address} of {settings.AXES_FAILURE_LIMIT} "
            f"for this name from this address, {counts.address} of "
            f"{settings.DASHBOARD_LOGIN_ADDRESS_FAILURE_LIMIT} from this address.",
            target=address,
        )
        lockout: Lockout | None = getattr(request, "dashboard_lockout", None)
        if request.axes_locked_out and lockout is not None:
            _record_lockout(request, lockout, username)


def _record_lockout(request: HttpRequest, lockout: Lockout, username: str) -> None:
    whose = (
        "every name from this address"
        if lockout.scope is LockScope.ADDRESS
        else f"{lockout.username!r} from this address"
    )
    until = lockout.until.isoformat(timespec="seconds") if lockout.until else None
    AuditTrail(request, AuditEntry.Action.LOGIN_LOCKOUT, actor=username).applied(
        target=lockout.ip_address,
        message=(
            f"Sign-in paused for {whose} after {lockout.failures} failed sign-ins "
            f"({'until ' + until if until else 'until an operator unlocks it'})."
        ),
        after={
            "scope": lockout.scope.value,
            "username": lockout.username,
            "ip_address": lockout.ip_address,
            "failures": lockout.failures,
            "locked_until": until or "until unlocked",
        },
    )


def locked_out_page(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """What a paused sign-in gets (AXES_LOCKOUT_CALLABLE): a page saying why, until when, and who unlocks."""
    username = get_client_username(request, credentials) or ""
    lockout = getattr(request, "dashboard_lockout", None) or lockout_of(username, client_address(request))
    cool_off = get_cool_off()
    context = {
        "lockout": lockout,
        "username": username,
        "cool_off_minutes": int(cool_off.total_seconds() // 60) if cool_off else None,
    }
    return render(request, "locked_out.html", context, status=429)
