"""The API's bearer tokens: `manage.py api_token create USER | list | revoke ID|USER`."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from mycel_dashboard.api.tokens import create_token
from mycel_dashboard.models import ApiToken


class Command(BaseCommand):
    help = "Make, list and revoke tokens: viewer (the read-only JSON API under /api/) or metrics (/metrics)."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="create|list|revoke")
        create = actions.add_parser("create", help="a new token for USER, printed once")
        create.add_argument("username", metavar="USER")
        create.add_argument(
            "--scope",
            choices=ApiToken.Scope.values,
            default=ApiToken.Scope.VIEWER,
            help="viewer: the JSON API under /api/ (default); metrics: /metrics only",
        )
        actions.add_parser("list", help="every token: id, user, prefix, scope, created, last used, revoked")
        revoke = actions.add_parser("revoke", help="revoke token ID, or every token of USER")
        revoke.add_argument("target", metavar="ID|USER")

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "create":
            self._create(str(options["username"]), str(options["scope"]))
        elif action == "list":
            self._list()
        else:
            self._revoke(str(options["target"]))

    def _create(self, username: str, scope: str) -> None:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user {username!r} (manage.py dashboard_user {username} makes one)")
        row, token = create_token(user, scope)
        self.stdout.write(f"Created {scope} token {row.pk} for {username!r} (only its sha256 is kept):")
        self.stdout.write(token)

    def _list(self) -> None:
        rows = ApiToken.objects.select_related("user")
        if not rows:
            self.stdout.write("(no API tokens)")
        for row in rows:
            used = f"{row.last_used_at:%Y-%m-%d %H:%M:%S}" if row.last_used_at else "never used"
            revoked = f"  revoked {row.revoked_at:%Y-%m-%d %H:%M:%S}" if row.revoked_at else ""
            self.stdout.write(
                f"{row.pk}\t{row.user.get_username()}\t{row.prefix}…\t{row.scope}\t"
                f"created {row.created_at:%Y-%m-%d %H:%M:%S}\t{used}{revoked}"
            )

    def _revoke(self, target: str) -> None:
        live = ApiToken.objects.filter(revoked_at__isnull=True)
        chosen = live.filter(pk=int(target)) if target.isdigit() else live.filter(user__username=target)
        if target.isdigit() and not chosen.exists():
            # A number that is no live token's id may still be a user's name.
            chosen = live.filter(user__username=target)
        revoked = chosen.update(revoked_at=timezone.now())
        if not revoked:
            raise CommandError(f"no live API token with id or user {target!r}")
        self.stdout.write(f"Revoked {revoked} token{'s' if revoked != 1 else ''}.")
