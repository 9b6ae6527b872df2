"""Who may do what. Decided in views (a client can request any partial directly), never only in templates."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse


class Role(StrEnum):
    VIEWER = "viewer"  # reads every screen
    OPERATOR = "operator"  # may also act: rollback, config saves (next issues)


def role_of(user: AbstractBaseUser | AnonymousUser) -> Role | None:
    """The user's role, or None for an anonymous visitor. Superusers are operators."""
    if not user.is_authenticated:
        return None
    if getattr(user, "is_superuser", False):
        return Role.OPERATOR
    groups = getattr(user, "groups", None)
    if groups is not None and groups.filter(name=settings.DASHBOARD_OPERATOR_GROUP).exists():
        return Role.OPERATOR
    return Role.VIEWER


def can_act(user: AbstractBaseUser | AnonymousUser) -> bool:
    """True when the user may change Mycel's data (rollback, summary deactivation, config saves)."""
    return role_of(user) is Role.OPERATOR


def operator_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Refuse (403) anyone who is not an operator, whatever the template shows."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not can_act(request.user):
            raise PermissionDenied("Only operators may do this.")
        return view(request, *args, **kwargs)

    return wrapper
