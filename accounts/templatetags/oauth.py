"""The sign-in pages' "Sign in with Discord" buttons and *Settings*' linked accounts
(``accounts.views_oauth``): each draws only the providers this site offers, and the section
in *Settings* also any account still linked to one turned off since, so it can be unlinked."""

from __future__ import annotations

from typing import Any

from django import template

from accounts.models import LinkedIdentity, OAuthProvider, User
from accounts.oauth import providers_enabled

register = template.Library()


@register.inclusion_tag("accounts/oauth_buttons.html", takes_context=True)
def oauth_buttons(context: template.Context, verb: str = "Sign in", next: str = "") -> dict[str, Any]:
    return {"providers": providers_enabled(), "verb": verb, "next": next, "csrf_token": context.get("csrf_token")}


@register.inclusion_tag("accounts/linked_accounts.html", takes_context=True)
def linked_accounts(context: template.Context) -> dict[str, Any]:
    user = context["request"].user
    assert isinstance(user, User)
    links = {link.provider: link for link in LinkedIdentity.objects.filter(user=user)}
    enabled = {provider.key.value for provider in providers_enabled()}
    rows = [
        {"key": key, "label": label, "link": links.get(key), "enabled": key in enabled}
        for key, label in OAuthProvider.choices
        if key in enabled or key in links
    ]
    return {
        "rows": rows,
        "only_way_in": len(links) == 1 and not user.has_usable_password(),
        "csrf_token": context.get("csrf_token"),
    }
