"""The API's bearer tokens: made once, kept as sha256, checked in constant time."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta

from django.contrib.auth.models import User
from django.utils import timezone

from mycel_dashboard.models import ApiToken

_PREFIX = "mycel_"
# The token's first characters identify its row (they are shown by `api_token list`); the rest is secret.
PREFIX_LENGTH = len(_PREFIX) + 8
_USE_RECORDED_EVERY = timedelta(minutes=1)


def _sha256(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def create_token(user: User, scope: str = ApiToken.Scope.VIEWER) -> tuple[ApiToken, str]:
    """A new token of `scope` for `user`: its row, and the token itself (shown once, never stored)."""
    token = _PREFIX + secrets.token_urlsafe(32)
    row = ApiToken.objects.create(
        user=user, prefix=token[:PREFIX_LENGTH], token_sha256=_sha256(token), scope=scope
    )
    return row, token


def token_from_header(header: str) -> str | None:
    """The token of `Authorization: Bearer <token>`, else None."""
    scheme, _, value = header.partition(" ")
    value = value.strip()
    if scheme.lower() != "bearer" or not value:
        return None
    return value


def authenticate(token: str, scope: str = ApiToken.Scope.VIEWER) -> ApiToken | None:
    """The live token row `token` is, its last use recorded (to the minute); None for an unknown, revoked or
    inactive one, or one of another scope (a metrics token reads /metrics only, a viewer token never it)."""
    wanted = _sha256(token)
    for row in ApiToken.objects.filter(prefix=token[:PREFIX_LENGTH]).select_related("user"):
        if hmac.compare_digest(row.token_sha256, wanted):
            if row.revoked_at is not None or not row.user.is_active or row.scope != scope:
                return None
            now = timezone.now()
            # Recorded to the minute: a script paging through a fleet writes the row once, not per page.
            if row.last_used_at is None or now - row.last_used_at > _USE_RECORDED_EVERY:
                row.last_used_at = now
                row.save(update_fields=["last_used_at"])
            return row
    return None
