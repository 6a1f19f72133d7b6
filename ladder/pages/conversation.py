"""A match's conversation from its page: posting a comment, attaching an evidence link.

Each view calls one service. Accepted, it goes back to the match page with a message;
refused, it shows the match page again with the error beside the form and the text as
typed, so nothing is lost.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from ladder.matches import conversation
from ladder.matches.conversation_reads import Typed
from ladder.models import Match
from ladder.pages.views import match_detail

COMMENT_SENT = "Comment posted."
EVIDENCE_ADDED = "Link added to your side's evidence."

# The status of a refused form, by the service's error code; anything else is bad input.
_STATUS = {"not_participant": 403, "comment_limit": 429, "duplicate": 409, "evidence_limit": 409}


def _refused(exc: ValidationError) -> tuple[str, int, dict[str, str]]:
    """The message, the HTTP status and the headers (Retry-After for the rate limit) of a refusal."""
    errors = [e for errs in exc.error_dict.values() for e in errs] if hasattr(exc, "error_dict") else exc.error_list
    code = next((e.code for e in errors if e.code), "") or ""
    params = next((e.params for e in errors if e.params and "retry_after" in e.params), None)
    headers = {"Retry-After": str(params["retry_after"])} if params else {}
    return " ".join(exc.messages), _STATUS.get(code, 400), headers


def _refused_page(
    request: AuthenticatedHttpRequest, pk: int, exc: ValidationError, typed: Callable[[str], Typed]
) -> HttpResponse:
    """The match page again, with what was typed and the refusal next to it, under the refusal's status."""
    message, status, headers = _refused(exc)
    response = match_detail(request, pk, typed=typed(message), status=status)
    for name, value in headers.items():
        response[name] = value
    return response


@require_POST
@login_required
def comment_post(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    match = get_object_or_404(Match, pk=pk)
    body = request.POST.get("body", "")
    try:
        conversation.comment_add(match=match, author=request.user, body=body)
    except ValidationError as exc:
        return _refused_page(request, pk, exc, lambda error: Typed(comment=body, comment_error=error))
    messages.success(request, COMMENT_SENT)
    return redirect(f"{match.get_absolute_url()}#conversation")


@require_POST
@login_required
def evidence_post(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    match = get_object_or_404(Match, pk=pk)
    url = request.POST.get("url", "")
    try:
        conversation.evidence_add(match=match, user=request.user, url=url)
    except ValidationError as exc:
        return _refused_page(request, pk, exc, lambda error: Typed(url=url, url_error=error))
    messages.success(request, EVIDENCE_ADDED)
    return redirect(f"{match.get_absolute_url()}#evidence")
