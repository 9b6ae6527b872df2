"""The dashboard's own tables (never inside Mycel's files): the audit log."""

from __future__ import annotations

from django.conf import settings
from django.db import models


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
