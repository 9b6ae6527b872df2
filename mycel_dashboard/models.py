"""The dashboard's own tables (never inside Mycel's files): the audit log."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import ExpressionWrapper, F, Q

# A thread whose head's record tally was not read at that head under the index's version of it.
RECORD_DUE = Q(head_checkpoint_id__isnull=False) & (
    Q(record_head__isnull=True)
    | ~Q(record_head=F("head_checkpoint_id"))
    | Q(record_version__isnull=True)
    | ~Q(record_version=F("version"))
)


class AuditEntry(models.Model):
    """Who did what to which thread or file, when, with what result, and the state before and after."""

    class Action(models.TextChoices):
        ROLLBACK = "rollback", "Roll back"
        UNDO = "undo", "Undo rollback"
        CONFIG_SAVE = "config_save", "Save config"
        CONFIG_RESTORE = "config_restore", "Restore config version"
        SUMMARY_PREVIEW = "summary_preview", "Generate a dry-run summary"
        RETENTION_EXPORT = "retention_export", "Export a retention script"
        EXPORT = "export", "Export a thread"
        LOGIN_FAILED = "login_failed", "Failed sign-in"
        LOGIN_LOCKOUT = "login_lockout", "Sign-in lockout"
        LOGIN_UNLOCK = "login_unlock", "Unlock sign-in"

    class Result(models.TextChoices):
        APPLIED = "applied", "Applied"
        REFUSED = "refused", "Refused"
        FAILED = "failed", "Failed"
        # The intent of a write, recorded before it; an outcome replaces it. One left behind means the
        # process stopped (or the log could not take the outcome) after the write may have happened.
        PENDING = "pending", "Outcome unknown"

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    actor = models.CharField(max_length=150)  # kept even if the account is deleted
    action = models.CharField(max_length=32, choices=Action.choices, db_index=True)
    result = models.CharField(max_length=16, choices=Result.choices)
    # Mycel's ids are arbitrary text of any length, so they are kept whole (searched with icontains).
    thread_id = models.TextField(blank=True)
    target = models.TextField(blank=True)  # a checkpoint id, a config file path, or a sign-in's address
    message = models.TextField(blank=True)
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor} {self.action} {self.result}"


class ApiToken(models.Model):
    """A bearer token for the read-only JSON API under /api/: only its sha256 is kept, never the token.

    `prefix` (the token's first characters, also in the clear in the token itself) finds the row; the
    hash is then compared in constant time, so a lookup does not time the secret part."""

    class Scope(models.TextChoices):
        VIEWER = "viewer", "Viewer (read-only)"
        METRICS = "metrics", "Metrics (/metrics only)"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    prefix = models.CharField(max_length=16, db_index=True)
    token_sha256 = models.CharField(max_length=64, unique=True)
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.prefix}… {self.user} {self.scope}{' revoked' if self.revoked_at else ''}"


class FleetThread(models.Model):
    """One thread's facts in the fleet index (memory_core/app/fleet_index.py): what the Threads list sorts,
    filters and counts by, kept under the thread's head checkpoint and the index's version."""

    store = models.CharField(max_length=64)  # the checkpoint store's digest (fleet_index.store_name)
    thread_id = models.TextField()
    head_checkpoint_id = models.TextField(null=True)  # noqa: DJ001 - a thread with no checkpoint has none
    checkpoints = models.IntegerField()
    version = models.CharField(max_length=120)
    updated_at = models.DateTimeField(null=True)
    # In lower case; NULL when empty, so it sorts last whichever the direction (as the list in memory).
    name_key = models.TextField(null=True)  # noqa: DJ001
    model_key = models.TextField(null=True)  # noqa: DJ001
    # The model Mycel builds the thread's agent with (thread_settings.thread_model); NULL: its web default.
    thread_model = models.TextField(null=True)  # noqa: DJ001
    messages = models.IntegerField()
    bytes_on_disk = models.BigIntegerField()
    estimated_tokens = models.BigIntegerField(null=True)
    context_limit = models.BigIntegerField()
    fill = models.FloatField(null=True)
    pruned = models.BooleanField(default=False)
    flags = models.CharField(max_length=120)  # ",compacted,pruned," — a LIKE finds one
    flag_count = models.SmallIntegerField()
    row = models.JSONField()  # the list's row as the reader derived it
    # The record pass's tally (memory_core.app.fleet_index.RecordTally), read at record_head; NULL until read.
    record_head = models.TextField(null=True)  # noqa: DJ001 - no record read yet
    record_version = models.CharField(max_length=120, null=True)  # noqa: DJ001 - the version it was read under
    record_calls = models.IntegerField(null=True)
    record_calls_without_usage = models.IntegerField(null=True)
    record_compactions = models.IntegerField(null=True)
    record_compactions_not_stored = models.IntegerField(null=True)
    record_trimmed_results = models.IntegerField(null=True)
    record_recompacting = models.BooleanField(null=True)
    record_fill_sent = models.FloatField(null=True)
    record_provider_tokens = models.BigIntegerField(null=True)
    record_estimated_tokens = models.BigIntegerField(null=True)
    # The Cost page's order of threads (RecordTally.cost_order; never a figure a page shows).
    record_usage_calls = models.IntegerField(default=0)
    record_tokens = models.BigIntegerField(default=0)
    record_cost_order = models.DecimalField(max_digits=30, decimal_places=12, default=Decimal(0))
    # The thread's footprint (memory_core.footprint.growth.Footprint, with its Pace): what the Storage report
    # ranks, pages and sums in SQL (web/fleet_storage.py). NULL when no checkpoint store held it when indexed.
    storage_store = models.TextField(null=True)  # noqa: DJ001 - the store label ("leon.db", "postgresql agent")
    storage_layout = models.CharField(max_length=8, null=True)  # noqa: DJ001
    storage_checkpoints = models.IntegerField(null=True)
    storage_bytes = models.BigIntegerField(null=True)
    storage_turns = models.IntegerField(null=True)
    storage_per_turn = models.BigIntegerField(null=True)
    storage_basis = models.CharField(max_length=60, null=True)  # noqa: DJ001
    storage_quadratic = models.BooleanField(null=True)
    storage_fit_a = models.FloatField(null=True)  # the fitted line; NULL with fewer turns than a fit needs
    storage_fit_b = models.FloatField(null=True)
    storage_fit_r2 = models.FloatField(null=True)
    storage_rising_from = models.IntegerField(null=True)
    storage_rising_until = models.IntegerField(null=True)  # NULL: the line never falls to zero again
    # Due for the record pass (web/fleet_index.py `_due`'s rule), kept by the database itself: counting and
    # listing what is due read a small partial index, never the whole fleet.
    record_due = models.GeneratedField(
        expression=ExpressionWrapper(RECORD_DUE, output_field=models.BooleanField()),
        output_field=models.BooleanField(),
        db_persist=True,
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["store", "thread_id"], name="fleet_thread_unique")]
        indexes = [
            models.Index(
                fields=["store", "updated_at", "thread_id"],
                name="fleet_records_due",
                condition=Q(record_due=True),
            ),
            models.Index(
                # record_usage_calls last: a count of the threads with usage reads this index alone.
                fields=["store", "-record_cost_order", "-record_tokens", "thread_id", "record_usage_calls"],
                name="fleet_by_cost",
                condition=Q(record_usage_calls__gt=0),
            ),
            models.Index(fields=["store", "updated_at", "thread_id"], name="fleet_by_updated"),
            models.Index(fields=["store", "fill", "thread_id"], name="fleet_by_fill"),
            models.Index(fields=["store", "bytes_on_disk", "thread_id"], name="fleet_by_bytes"),
            models.Index(fields=["store", "messages", "thread_id"], name="fleet_by_messages"),
            models.Index(fields=["store", "checkpoints", "thread_id"], name="fleet_by_checkpoints"),
            models.Index(fields=["store", "name_key", "thread_id"], name="fleet_by_name"),
            models.Index(fields=["store", "model_key", "thread_id"], name="fleet_by_model"),
            models.Index(fields=["store", "thread_model"], name="fleet_thread_model"),
            # The Storage report's orders (rank_key): by bytes, by growth per turn.
            models.Index(
                fields=["store", "-storage_bytes", "thread_id"],
                name="fleet_storage_by_bytes",
                condition=Q(storage_bytes__isnull=False),
            ),
            models.Index(
                fields=["store", "-storage_per_turn", "-storage_bytes", "thread_id"],
                name="fleet_storage_by_growth",
                condition=Q(storage_bytes__isnull=False),
            ),
            # The report's sums per store (for any projection): read from this index alone, not the rows.
            models.Index(
                fields=[
                    "store",
                    "storage_store",
                    "storage_bytes",
                    "storage_turns",
                    "storage_per_turn",
                    "storage_fit_a",
                    "storage_fit_b",
                    "storage_rising_from",
                    "storage_rising_until",
                ],
                name="fleet_storage_sums",
                condition=Q(storage_bytes__isnull=False),
            ),
            # The threads indexed without bytes (the report counts them): few, so a small partial index.
            models.Index(
                fields=["store", "checkpoints"],
                name="fleet_without_footprint",
                condition=Q(storage_bytes__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.thread_id} @ {self.head_checkpoint_id}"


class FleetUsage(models.Model):
    """One thread's calls with usage of one model, UTC day and branch kind, their tokens summed, as the record
    pass read them (memory_core.economics.cost.UsageGroup): the Cost report sums and prices these rows."""

    store = models.CharField(max_length=64)
    thread_id = models.TextField()
    model = models.TextField(null=True)  # noqa: DJ001 - no model named anywhere for these calls
    day = models.DateField(null=True)  # NULL: the calls have no time
    abandoned = models.BooleanField()
    calls = models.IntegerField()
    input_tokens = models.BigIntegerField()
    output_tokens = models.BigIntegerField()
    reasoning_tokens = models.BigIntegerField()
    cache_read_tokens = models.BigIntegerField()
    cache_write_tokens = models.BigIntegerField()

    class Meta:
        indexes = [
            models.Index(fields=["store", "thread_id"], name="fleet_usage_thread"),
            models.Index(fields=["store", "day"], name="fleet_usage_day"),
        ]

    def __str__(self) -> str:
        return f"{self.thread_id} {self.model} {self.day}: {self.calls} calls"


class FleetUnmetered(models.Model):
    """One call of a thread with no usable usage, as the record pass read it (a CallUsage without usage)."""

    store = models.CharField(max_length=64)
    thread_id = models.TextField()
    position = models.IntegerField()  # its place among the thread's such calls
    call = models.IntegerField(null=True)  # the head's call number; NULL off the head
    message_id = models.TextField(null=True)  # noqa: DJ001
    model = models.TextField(null=True)  # noqa: DJ001
    model_from = models.CharField(max_length=20)
    at = models.DateTimeField(null=True)
    day = models.DateField(null=True)  # the UTC day of `at`, as the report's days are
    checkpoint_id = models.TextField(null=True)  # noqa: DJ001
    branch = models.TextField(null=True)  # noqa: DJ001
    reason = models.TextField()

    class Meta:
        indexes = [
            models.Index(fields=["store", "thread_id"], name="fleet_unmetered_thread"),
            models.Index(fields=["store", "day"], name="fleet_unmetered_day"),
        ]

    def __str__(self) -> str:
        return f"{self.thread_id} call {self.call}: {self.reason}"


# A sum's day for calls with no time (the sums' key columns are NOT NULL, so that a key has one row).
NO_DAY = date(1, 1, 1)


class FleetUsageSum(models.Model):
    """FleetUsage summed over the fleet's threads per model, UTC day and branch kind, kept by each write of
    FleetUsage (web/fleet_usage.py) in the same transaction: the Cost page's per-model and per-day figures
    read these few rows, never every thread's."""

    store = models.CharField(max_length=64)
    model = models.TextField()  # "" for calls no model is named for (FleetUsage.model NULL)
    day = models.DateField()  # NO_DAY for calls with no time
    abandoned = models.BooleanField()
    calls = models.BigIntegerField()
    input_tokens = models.BigIntegerField()
    output_tokens = models.BigIntegerField()
    reasoning_tokens = models.BigIntegerField()
    cache_read_tokens = models.BigIntegerField()
    cache_write_tokens = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["store", "model", "day", "abandoned"], name="fleet_usage_sum_key")
        ]

    def __str__(self) -> str:
        return f"{self.model} {self.day}: {self.calls} calls"


class FleetUnmeteredSum(models.Model):
    """FleetUnmetered counted per UTC day over the fleet's threads, kept as FleetUsageSum is."""

    store = models.CharField(max_length=64)
    day = models.DateField()  # NO_DAY for calls with no time
    calls = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["store", "day"], name="fleet_unmetered_sum_key")]

    def __str__(self) -> str:
        return f"{self.day}: {self.calls} calls"


class FleetIndexState(models.Model):
    """Where the fleet index of one store stands, and its builder's lease (the lock on SQLite)."""

    store = models.CharField(max_length=64, unique=True)
    version = models.CharField(max_length=120)
    complete = models.BooleanField(default=False)
    watermark = models.TextField(null=True)  # noqa: DJ001 - no head seen yet
    done = models.IntegerField(default=0)
    total = models.IntegerField(default=0)
    started_at = models.DateTimeField(null=True)
    finished_at = models.DateTimeField(null=True)
    error = models.TextField(blank=True)
    builder = models.CharField(max_length=120, blank=True)  # who holds the lease (host:pid:thread)
    lease_until = models.DateTimeField(null=True)

    def __str__(self) -> str:
        return f"{self.store} {self.version} {'complete' if self.complete else f'{self.done}/{self.total}'}"


class FleetReduction(models.Model):
    """One thread's reduction for a kept fleet report (memory_core/app/kept_reports.py), read by the record
    pass at `head` (the thread's FleetThread.record_head when written)."""

    store = models.CharField(max_length=64)
    report = models.CharField(max_length=40)
    thread_id = models.TextField()
    head = models.TextField()
    payload = models.JSONField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["store", "report", "thread_id"], name="fleet_reduction_key")
        ]

    def __str__(self) -> str:
        return f"{self.report} of {self.thread_id} at {self.head}"


class FleetReport(models.Model):
    """A kept fleet report of one store: how many times its reductions moved, and its page documents as
    summed from them by the builder (memory_core/app/kept_reports.py refresh_reports)."""

    store = models.CharField(max_length=64)
    report = models.CharField(max_length=40)
    generation = models.BigIntegerField(default=0)  # bumped in the transaction that writes reductions
    summed_generation = models.BigIntegerField(null=True)
    summed_at = models.DateTimeField(null=True)
    analysed = models.IntegerField(default=0)
    documents = models.JSONField(null=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["store", "report"], name="fleet_report_key")]

    def __str__(self) -> str:
        return f"{self.report} of {self.store}: generation {self.generation}"
