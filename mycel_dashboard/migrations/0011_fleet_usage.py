from typing import Any

from django.db import migrations, models


def records_due_again(apps: Any, schema_editor: Any) -> None:  # noqa: ARG001 - Django's signature
    # The record pass now keeps each thread's usage (FleetUsage) instead of a priced cost: every record is
    # read again, and until then the Cost figures say the index is catching up.
    apps.get_model("mycel_dashboard", "FleetThread").objects.update(record_head=None)


class Migration(migrations.Migration):
    dependencies = [
        ("mycel_dashboard", "0010_fleet_records"),
    ]

    operations = [
        migrations.DeleteModel(name="FleetCost"),
        migrations.CreateModel(
            name="FleetUsage",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("store", models.CharField(max_length=64)),
                ("thread_id", models.TextField()),
                ("model", models.TextField(null=True)),
                ("day", models.DateField(null=True)),
                ("abandoned", models.BooleanField()),
                ("calls", models.IntegerField()),
                ("input_tokens", models.BigIntegerField()),
                ("output_tokens", models.BigIntegerField()),
                ("reasoning_tokens", models.BigIntegerField()),
                ("cache_read_tokens", models.BigIntegerField()),
                ("cache_write_tokens", models.BigIntegerField()),
            ],
            options={
                "indexes": [
                    models.Index(fields=["store", "thread_id"], name="fleet_usage_thread"),
                    models.Index(fields=["store", "day"], name="fleet_usage_day"),
                ],
            },
        ),
        migrations.CreateModel(
            name="FleetUnmetered",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("store", models.CharField(max_length=64)),
                ("thread_id", models.TextField()),
                ("position", models.IntegerField()),
                ("call", models.IntegerField(null=True)),
                ("message_id", models.TextField(null=True)),
                ("model", models.TextField(null=True)),
                ("model_from", models.CharField(max_length=20)),
                ("at", models.DateTimeField(null=True)),
                ("day", models.DateField(null=True)),
                ("checkpoint_id", models.TextField(null=True)),
                ("branch", models.TextField(null=True)),
                ("reason", models.TextField()),
            ],
            options={
                "indexes": [
                    models.Index(fields=["store", "thread_id"], name="fleet_unmetered_thread"),
                    models.Index(fields=["store", "day"], name="fleet_unmetered_day"),
                ],
            },
        ),
        migrations.RunPython(records_due_again, migrations.RunPython.noop),
    ]
