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

NEW_TOKEN = "api_new_token"  # session key: the secret of the token just created, until it is shown


@login_required
def tokens(request: HttpRequest) -> HttpResponse:
    """The user's tokens and a form to create one.

    A created token's secret goes through the session to the page the browser is
    redirected to, and is dropped from the session as it is shown: shown once, and a
    reload neither shows it again nor creates a second token.
    """
    context: dict[str, object] = {"tokens": ApiToken.objects.filter(user=request.user), "secret": None}
    if request.method == "POST":
        try:
            token, secret = token_create(
                user=request.user, name=request.POST.get("name", ""), read_only=request.POST.get("read_only") == "on"
            )
        except ValidationError as exc:
            context["error"] = " ".join(exc.messages)
            return render(request, "api/tokens.html", context, status=400)
        request.session[NEW_TOKEN] = {"id": token.pk, "secret": secret}
        return redirect("api_tokens")
    new = request.session.pop(NEW_TOKEN, None)
    if new is not None:
        context.update(secret=new["secret"], created=ApiToken.objects.filter(pk=new["id"], user=request.user).first())
    return render(request, "api/tokens.html", context)


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
