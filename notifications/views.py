"""The notifications page: newest first, paginated; open one (marking it read), mark one or all read."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from core.redirects import safe_next
from notifications.models import Notification
from notifications.services import for_user, mark_read
from notifications.texts import describe

PAGE_SIZE = 25


@login_required
def notification_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    page = Paginator(for_user(request.user), PAGE_SIZE).get_page(request.GET.get("page"))
    items = [(n, describe(n)) for n in page.object_list]
    unread = Notification.objects.filter(recipient=request.user, read_at__isnull=True).exists()
    return render(request, "notifications/list.html", {"page": page, "items": items, "any_unread": unread})


@login_required
def notification_open(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """Follow a notification's link; opening it marks it read (a GET: it changes only what the reader has seen)."""
    notification = get_object_or_404(Notification, pk=pk, recipient=request.user)
    mark_read(request.user, ids=[notification.pk])
    return redirect(describe(notification).url)


@require_POST
@login_required
def notification_read(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Mark one (``id``) or all (``all``) of the reader's notifications read; back to where they were."""
    if request.POST.get("all"):
        count = mark_read(request.user)
        messages.success(request, f"Marked {count} notification{'s' if count != 1 else ''} read.")
    else:
        try:
            pk = int(request.POST.get("id", ""))
        except ValueError:
            messages.error(request, "Choose a notification to mark read.")
        else:
            mark_read(request.user, ids=[pk])
    return redirect(safe_next(request, request.POST.get("next")) or "notifications:list")
