"""The Cost page from the fleet index at any size: each thread's order (calls, tokens, cost at the index's
prices) under an index, what is due for the record pass as a generated column under a partial index, the
fleet's sums per model and day kept beside the usage they sum, and each thread's model under an index (the
Config page's threads per model)."""

from decimal import Decimal
from typing import Any

from django.db import migrations, models
from django.db.models import Count, Sum

TOKENS = ("input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens", "cache_write_tokens")
NO_DAY = "0001-01-01"


def sums_of_kept_usage(apps: Any, schema_editor: Any) -> None:  # noqa: ARG001 - Django's signature
    # The sums start equal to the usage already kept: every later write adds and takes away its own.
    usage = apps.get_model("mycel_dashboard", "FleetUsage")
    usage_sum = apps.get_model("mycel_dashboard", "FleetUsageSum")
    sums: dict[tuple[str, str, Any, bool], dict[str, int]] = {}
    rows = usage.objects.values("store", "model", "day", "abandoned")
    for row in rows.annotate(calls_sum=Sum("calls"), **{f"{t}_sum": Sum(t) for t in TOKENS}).order_by():
        key = (row["store"], row["model"] or "", row["day"] or NO_DAY, row["abandoned"])
        found = sums.setdefault(key, dict.fromkeys(("calls", *TOKENS), 0))
        for name in found:
            found[name] += row[f"{name}_sum"] or 0
    usage_sum.objects.bulk_create(
        usage_sum(store=s, model=m, day=d, abandoned=a, **values) for (s, m, d, a), values in sums.items()
    )
    unmetered = apps.get_model("mycel_dashboard", "FleetUnmetered")
    unmetered_sum = apps.get_model("mycel_dashboard", "FleetUnmeteredSum")
    counted = unmetered.objects.values("store", "day").annotate(n=Count("id")).order_by()
    unmetered_sum.objects.bulk_create(
        unmetered_sum(store=row["store"], day=row["day"] or NO_DAY, calls=row["n"]) for row in counted
    )


def thread_models(apps: Any, schema_editor: Any) -> None:  # noqa: ARG001 - Django's signature
    # thread_settings.thread_model's rule on the rows the index keeps: the chosen model, else the last run's.
    fleet = apps.get_model("mycel_dashboard", "FleetThread")
    for thread in fleet.objects.only("id", "row").iterator(chunk_size=2000):
        row = thread.row or {}
        model = row.get("configured_model") or row.get("model") or None
        if model is not None:
            fleet.objects.filter(id=thread.id).update(thread_model=model)


def records_due_again(apps: Any, schema_editor: Any) -> None:  # noqa: ARG001 - Django's signature
    # The order columns are filled by the record pass: until it reads each record again, it is due.
    apps.get_model("mycel_dashboard", "FleetThread").objects.update(record_head=None)


class Migration(migrations.Migration):
    dependencies = [
        ("mycel_dashboard", "0011_fleet_usage"),
    ]

    operations = [
        migrations.CreateModel(
            name="FleetUnmeteredSum",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("store", models.CharField(max_length=64)),
                ("day", models.DateField()),
                ("calls", models.BigIntegerField()),
            ],
        ),
        migrations.CreateModel(
            name="FleetUsageSum",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("store", models.CharField(max_length=64)),
                ("model", models.TextField()),
                ("day", models.DateField()),
                ("abandoned", models.BooleanField()),
                ("calls", models.BigIntegerField()),
                ("input_tokens", models.BigIntegerField()),
                ("output_tokens", models.BigIntegerField()),
                ("reasoning_tokens", models.BigIntegerField()),
                ("cache_read_tokens", models.BigIntegerField()),
                ("cache_write_tokens", models.BigIntegerField()),
            ],
        ),
        migrations.AddField(
            model_name="fleetthread",
            name="record_cost_order",
            field=models.DecimalField(decimal_places=12, default=Decimal("0"), max_digits=30),
        ),
        migrations.AddField(
            model_name="fleetthread",
            name="record_due",
            field=models.GeneratedField(
                db_persist=True,
                expression=models.ExpressionWrapper(
                    models.Q(
                        ("head_checkpoint_id__isnull", False),
                        models.Q(
                            ("record_head__isnull", True),
                            models.Q(("record_head", models.F("head_checkpoint_id")), _negated=True),
                            ("record_version__isnull", True),
                            models.Q(("record_version", models.F("version")), _negated=True),
                            _connector="OR",
                        ),
                    ),
                    output_field=models.BooleanField(),
                ),
                output_field=models.BooleanField(),
            ),
        ),
        migrations.AddField(
            model_name="fleetthread",
            name="record_tokens",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="fleetthread",
            name="record_usage_calls",
            field=models.IntegerField(default=0),
        ),
        migrations.AddIndex(
            model_name="fleetthread",
            index=models.Index(
                condition=models.Q(("record_due", True)),
                fields=["store", "updated_at", "thread_id"],
                name="fleet_records_due",
            ),
        ),
        migrations.AddIndex(
            model_name="fleetthread",
            index=models.Index(
                condition=models.Q(("record_usage_calls__gt", 0)),
                fields=["store", "-record_cost_order", "-record_tokens", "thread_id", "record_usage_calls"],
                name="fleet_by_cost",
            ),
        ),
        migrations.AddConstraint(
            model_name="fleetunmeteredsum",
            constraint=models.UniqueConstraint(fields=("store", "day"), name="fleet_unmetered_sum_key"),
        ),
        migrations.AddConstraint(
            model_name="fleetusagesum",
            constraint=models.UniqueConstraint(
                fields=("store", "model", "day", "abandoned"), name="fleet_usage_sum_key"
            ),
        ),
        migrations.AddField(
            model_name="fleetthread",
            name="thread_model",
            field=models.TextField(null=True),
        ),
        migrations.AddIndex(
            model_name="fleetthread",
            index=models.Index(fields=["store", "thread_model"], name="fleet_thread_model"),
        ),
        migrations.RunPython(thread_models, migrations.RunPython.noop),
        migrations.RunPython(sums_of_kept_usage, migrations.RunPython.noop),
        migrations.RunPython(records_due_again, migrations.RunPython.noop),
    ]
