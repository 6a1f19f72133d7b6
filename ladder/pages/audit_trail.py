"""The moderation desk's audit trail: every moderator's and administrator's action, filterable (read-only)."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from accounts.http import AuthenticatedHttpRequest
from accounts.roles import is_moderator
from audit.models import Action
from audit.services import audit_entries
from ladder.models import Ladder

PAGE_SIZE = 50
NOT_A_MODERATOR = "Only moderators may read the audit trail."


class AuditFilterForm(forms.Form):
    action = forms.ChoiceField(choices=[("", "Any action"), *Action.choices], required=False, label="Action")
    actor = forms.CharField(max_length=150, required=False, label="By", help_text="A moderator's username.")
    subject = forms.CharField(max_length=150, required=False, label="About", help_text="A player's username.")
    ladder = forms.ModelChoiceField(
        queryset=Ladder.objects.order_by("name"), required=False, empty_label="Any ladder", label="Ladder"
    )


@require_GET
@login_required
def audit_trail(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Newest first, 50 a page; a filter that does not parse shows its error and the whole trail."""
    if not is_moderator(request.user):
        raise PermissionDenied(NOT_A_MODERATOR)
    form = AuditFilterForm(request.GET or None)
    chosen = form.cleaned_data if form.is_valid() else {}
    ladder = chosen.get("ladder")
    entries = audit_entries(
        action=chosen.get("action", ""),
        actor=chosen.get("actor", "").strip(),
        subject=chosen.get("subject", "").strip(),
        ladder_id=ladder.pk if ladder is not None else None,
    )
    page = Paginator(entries, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {"form": form, "page": page, "filtered": any(chosen.values())}
    status = 400 if form.is_bound and not form.is_valid() else 200
    return render(request, "ladder/audit_trail.html", context, status=status)
