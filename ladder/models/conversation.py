"""What participants and moderators say about a match: comments and evidence links (docs/rules.md §14)."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxLengthValidator
from django.db import models

COMMENT_MAX_LENGTH = 2_000
EVIDENCE_URL_MAX_LENGTH = 500


class MatchComment(models.Model):
    """A plain-text comment by a participant or a moderator, shown in order under the match."""

    match = models.ForeignKey("ladder.Match", on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="match_comments")
    body = models.TextField(validators=[MaxLengthValidator(COMMENT_MAX_LENGTH)])
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["match", "created_at"], name="comment_match_created"),
            models.Index(fields=["author", "created_at"], name="comment_author_created"),
        ]

    def __str__(self) -> str:
        return f"comment {self.pk} on match {self.match_id}"


class Evidence(models.Model):
    """A link a side attaches to its match: a Showdown replay, a Widelands replay file."""

    match = models.ForeignKey("ladder.Match", on_delete=models.CASCADE, related_name="evidence")
    side = models.ForeignKey("ladder.MatchSide", on_delete=models.CASCADE, related_name="evidence")
    added_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    url = models.URLField("link", max_length=EVIDENCE_URL_MAX_LENGTH)
    created_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "evidence"
        ordering = ["created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["match", "url"], name="evidence_once_per_match")]

    def __str__(self) -> str:
        return self.url
