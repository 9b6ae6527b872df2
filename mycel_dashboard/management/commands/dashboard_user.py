"""Create or update a dashboard account with a role: `manage.py dashboard_user NAME --role operator`."""

import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Create or update a dashboard user (viewer reads; operator may roll back and save config)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--role", choices=["viewer", "operator", "admin"], default="viewer")
        parser.add_argument("--password", help="default: a generated one, printed once")

    def handle(self, *args: object, **options: object) -> None:
        username = str(options["username"])
        role = str(options["role"])
        password = str(options["password"] or secrets.token_urlsafe(12))
        user, created = get_user_model().objects.get_or_create(username=username)
        user.set_password(password)
        user.is_staff = user.is_superuser = role == "admin"
        user.save()
        operators, _ = Group.objects.get_or_create(name=settings.DASHBOARD_OPERATOR_GROUP)
        if role in {"operator", "admin"}:
            user.groups.add(operators)
        else:
            user.groups.remove(operators)
        verb = "Created" if created else "Updated"
        self.stdout.write(f"{verb} {role} {username!r}.")
        if not options["password"]:
            self.stdout.write(f"password: {password}")
