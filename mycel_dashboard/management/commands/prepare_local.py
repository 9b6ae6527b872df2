"""First-run setup for `make run`: a local admin when no user exists, demo data when no Mycel data exists."""

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from mycel_dashboard.web.source import current_source


class Command(BaseCommand):
    help = "Create a local admin (password printed once) and demo data when nothing exists yet."

    def handle(self, *args: object, **options: object) -> None:
        users = get_user_model()
        if not users.objects.exists():
            password = secrets.token_urlsafe(12)
            users.objects.create_superuser("admin", email="", password=password)
            self.stdout.write(self.style.SUCCESS("Created the local admin. Sign in with:"))
            self.stdout.write(f"    username: admin\n    password: {password}\n(printed once; keep it)")
        source = current_source()
        if source.is_demo and not source.locations.main.exists():
            try:
                from memory_core.demo import write_demo_home
            except ImportError:
                self.stdout.write("No Mycel data found and the demo writer is not installed yet.")
                return
            write_demo_home(source.locations.main.parent, seed=7)
            self.stdout.write(f"No Mycel data found: wrote demo data to {source.locations.main.parent}")
        where = "demo data" if source.is_demo else "Mycel's files"
        self.stdout.write(f"Serving {where} from {source.locations.main}")
