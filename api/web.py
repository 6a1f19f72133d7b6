"""The account page's API tokens: list, create (shown once) and revoke."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from api.models import ApiToken
from api.services import token_create, token_revoke


@login_required
def tokens(request: HttpRequest) -> HttpResponse:
    context: dict[str, object] = {"tokens": ApiToken.objects.filter(user=request.user), "secret": None}
    status = 200
    if request.method == "POST":
        try:
            token, secret = token_create(
                user=request.user, name=request.POST.get("name", ""), read_only=request.POST.get("read_only") == "on"
            )
        except ValidationError as exc:
            context["error"] = " ".join(exc.messages)
            status = 400
        else:
            context.update(secret=secret, created=token)
    return render(request, "api/tokens.html", context, status=status)


@require_POST
@login_required
def revoke(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        token = token_revoke(user=request.user, token_id=pk)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"Token “{token.name}” is revoked; it no longer works.")
    return redirect("api_tokens")
