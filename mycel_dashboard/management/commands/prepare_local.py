"""First-run setup for `make run`: a local admin when no user exists, demo data when no Mycel data exists."""

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from memory_core.stores.postgres.backend import PostgresBackend
from mycel_dashboard.web.source import DataSource, current_source


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
        self.stdout.write(_serving(source))


def _serving(source: DataSource) -> str:
    """Where the dashboard's data comes from, in one line; for Postgres the layouts found, or why none."""
    if source.is_demo:
        return f"Serving demo data from {source.locations.main}"
    if not source.locations.postgres_url:
        return f"Serving Mycel's files from {source.locations.main}"
    backend = PostgresBackend(source.locations, query_timeout_s=5.0, row_cap=1000)
    layouts, problems = backend.layouts()
    found = ", ".join(layout.label for layout in layouts) or "no checkpoint layout"
    lines = [f"Serving Mycel's checkpoints from PostgreSQL {backend.masked_url}: {found}"]
    lines.extend(f"    {problem.message}" for problem in problems)
    return "\n".join(lines)
