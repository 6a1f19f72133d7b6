"""Personal API tokens and the idempotency keys of reports."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class ApiTokenQuerySet(models.QuerySet["ApiToken"]):
    def live(self) -> ApiTokenQuerySet:
        return self.filter(revoked_at__isnull=True)


class RevokedBy(models.TextChoices):
    """Why a token stopped working, as its owner reads it on the token page."""

    OWNER = "owner", "by you"
    PASSWORD_CHANGE = "password_change", "when your password was changed"
    PASSWORD_RESET = "password_reset", "when your password was reset"


class ApiToken(models.Model):
    """A personal API token, stored as the SHA-256 of its secret.

    The secret is 32 random bytes (``secrets.token_urlsafe``), so a fast hash is enough:
    nobody can guess a preimage, and a slow password hasher would cost every request.
    The plain secret is shown once, at creation; ``prefix`` (its first characters) lets
    the owner tell tokens apart. Revoking sets ``revoked_at`` and ``revoked_by``;
    authentication reads the row on every request, so a revocation takes effect at once.
    A new password (changed, or reset from a mailed link) revokes every token of the
    account: tokens made by someone who had the account must not outlive its recovery.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=80, help_text="What this token is for, e.g. “my bot on the VPS”.")
    prefix = models.CharField(max_length=12, help_text="The first characters of the token, to recognise it.")
    key_hash = models.CharField(max_length=64, unique=True)
    read_only = models.BooleanField(default=False, help_text="Read-only tokens can read but never write.")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.CharField(max_length=20, choices=RevokedBy, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        verbose_name = "API token"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None


class IdempotencyKey(models.Model):
    """The response a report with an ``Idempotency-Key`` got, replayed for retries.

    Keys are per user. ``request_hash`` is the SHA-256 of the canonical JSON body, so the
    same key with another body is told apart (409). The row is inserted once, with the
    response, at the end of the report's transaction; a retry, or a request racing with the
    same key (which waits on the unique constraint or the players' rows), rolls its own report
    back and replays this response (``api.idempotency``). Keys older than
    ``API_IDEMPOTENCY_KEY_HOURS`` are deleted every hour (``api.idempotency.expire``).
    """

    # The unique (user, key) index serves look-ups by user: no index of its own for each key to
    # keep up. Nor is the key checked by PostgreSQL: a game server's keys all name its one
    # account, whose row each key would share-lock at commit (``ladder.Match.ladder`` says why
    # that costs); accounts are pseudonymised, never deleted (``accounts.deletion``).
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    key = models.CharField(max_length=255)
    request_hash = models.CharField(max_length=64)
    response_status = models.PositiveSmallIntegerField()
    response_body = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="idempotency_key_once_per_user"),
            models.CheckConstraint(condition=~Q(key=""), name="idempotency_key_not_empty"),
        ]
        indexes = [models.Index(fields=["created_at"], name="idempotency_key_created")]

    def __str__(self) -> str:
        return f"{self.key} of {self.user_id}"
