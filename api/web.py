"""The account pages the API app serves: API tokens (list, create, shown once, and revoke), and
"Download my data"."""

from __future__ import annotations

import secrets

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.text import slugify
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts.http import AuthenticatedHttpRequest
from api.export import personal_data
from api.models import ApiToken
from api.services import token_create, token_revoke

# Session key: the one-time key of the creation form last shown. It is no secret; it only
# tells a fresh submission from the same form sent again (a reload of the page it returned).
FORM_KEY = "api_token_form"
ALREADY_SENT = (
    "No token was created: this form was already sent (the page was reloaded?) or is out of date "
    "(opened in another tab). Fill it in again to create one. If you did not copy a token shown "
    "before, revoke it below."
)


@never_cache
@require_http_methods(["GET", "POST"])
@login_required
def tokens(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The user's tokens and a form to create one.

    A created token's secret is in the page that answers the form and nowhere else: not in
    the session, not in a cache, and (``Cache-Control: no-store``) not in the browser's
    cache either. It is shown once. Reloading that page sends the form again, which the
    browser asks about first; the form's one-time key was used, so no second token is
    made and the page says so.
    """
    if request.method == "GET":
        return _page(request)
    sent_key = request.POST.get("form_key", "")
    shown_key = request.session.pop(FORM_KEY, "")
    if not sent_key or not secrets.compare_digest(sent_key, shown_key):
        return _page(request, status=409, notice=ALREADY_SENT)
    name = request.POST.get("name", "")
    try:
        token, secret = token_create(user=request.user, name=name, read_only=request.POST.get("read_only") == "on")
    except ValidationError as exc:
        return _page(request, status=400, error=" ".join(exc.messages), name=name)
    return _page(request, created=token, secret=secret)


def _page(request: AuthenticatedHttpRequest, *, status: int = 200, **context: object) -> HttpResponse:
    request.session[FORM_KEY] = form_key = secrets.token_urlsafe(16)
    context = {"tokens": ApiToken.objects.filter(user=request.user), "form_key": form_key, **context}
    return render(request, "api/tokens.html", context, status=status)


@require_POST
@login_required
def revoke(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    try:
        token = token_revoke(user=request.user, token_id=pk)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"Token “{token.name}” is revoked; it no longer works.")
    return redirect("api_tokens")


@never_cache
@require_http_methods(["GET"])
@login_required
def data_export(request: AuthenticatedHttpRequest) -> HttpResponse:
    """*Settings*' "Download my data": the account's data as one JSON file (``api.export``)."""
    data = personal_data(user=request.user, now=timezone.now())
    response = JsonResponse(data, json_dumps_params={"ensure_ascii": False, "indent": 2})
    name = f"ladder-{slugify(request.user.username) or 'account'}-{timezone.now():%Y-%m-%d}.json"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
