from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm, UserCreationForm
from django.core.exceptions import ValidationError

from accounts import two_factor
from accounts.models import User
from accounts.validators import EMAIL_VERIFIED_ELSEWHERE, USERNAME_TAKEN, USERNAME_TOO_LONG, username_normal
from accounts.zones import zone_choices, zone_guess

# Django's own says both fields "may be case-sensitive"; usernames are not (UserManager.get_by_natural_key).
WRONG_PASSWORD = "That is not your password."
WRONG_CODE = "That code is not right. Codes change every 30 seconds: check the clock of the device that makes them."
LOGIN_INVALID = "Please enter a correct username and password. Usernames are not case-sensitive; passwords are."
ACCOUNT_BANNED = (
    "This account is banned (deactivated) by a moderator, so it cannot sign in. "
    "If you think this is a mistake, write to the moderators."
)


class LoginForm(AuthenticationForm):
    """Django's login form, which tells a banned player that they are banned, not that the password is wrong.

    ``ModelBackend`` turns down an inactive account as if the password were wrong. Only
    when the password *is* right does the form say the account is banned: a wrong password
    reads as one still, so the form reveals nothing to someone guessing. The failed
    ``authenticate`` has already counted towards the lockout (``accounts.throttling``), and
    a locked-out request is not checked at all.
    """

    error_messages = {**AuthenticationForm.error_messages, "invalid_login": LOGIN_INVALID}

    def clean(self) -> dict[str, Any]:
        try:
            return super().clean()
        except ValidationError as error:
            if error.code == "invalid_login" and self._banned_with_right_password():
                raise ValidationError(ACCOUNT_BANNED, code="inactive") from None
            raise

    def _banned_with_right_password(self) -> bool:
        if self.request is not None and getattr(self.request, "axes_locked_out", False):
            return False
        username, password = self.cleaned_data.get("username"), self.cleaned_data.get("password")
        if not username or not password:
            return False
        user = User.objects.filter(username__iexact=username, is_active=False).first()
        return user is not None and user.check_password(password)


# django-stubs types a form by its model; Django's own classes take no type argument.
if TYPE_CHECKING:
    _UserCreationForm = UserCreationForm[User]
    _UserModelForm = forms.ModelForm[User]
else:
    _UserCreationForm = UserCreationForm
    _UserModelForm = forms.ModelForm


class SignUpForm(_UserCreationForm):
    email = forms.EmailField(
        required=False,
        help_text="Optional. We send it a link to check it is yours; then it can get a new password if you forget "
        "yours. Only moderators see it; it is never shown on your profile.",
    )

    # Filled in by static/js/time-zone-guess.js with the browser's zone; a missing or unknown one is the site's.
    time_zone = forms.CharField(required=False, max_length=200, widget=forms.HiddenInput(attrs={"data-zone-guess": ""}))

    class Meta:
        model = User
        fields = ("username", "email", "time_zone")
        error_messages = {"username": {"max_length": USERNAME_TOO_LONG}}

    def clean_time_zone(self) -> str:
        return zone_guess(self.cleaned_data.get("time_zone"))

    def clean_username(self) -> str:
        username: str = username_normal(self.cleaned_data["username"].strip())
        if User.objects.filter(username__iexact=username).exists():
            raise forms.ValidationError(USERNAME_TAKEN, code="unique", params={"value": username})
        return username

    def clean_email(self) -> str:
        return _address_not_verified_elsewhere(self.cleaned_data["email"], account=None)


class AccountSettingsForm(_UserModelForm):
    class Meta:
        model = User
        fields = ("email", "about")
        widgets = {"about": forms.Textarea(attrs={"rows": 4})}
        help_texts = {
            "email": "Where a new password and, once you allow them, notifications are sent. A new address gets "
            "a link to check it is yours. Only moderators see it; it is never shown on your profile."
        }

    def clean_email(self) -> str:
        return _address_not_verified_elsewhere(self.cleaned_data["email"], account=self.instance)


class TimeZoneForm(_UserModelForm):
    """*Settings* → *Time zone*: a list of the zones by region; the model's validator refuses a
    name the tz database does not have (``accounts.zones.UNKNOWN_TIME_ZONE``)."""

    time_zone = forms.CharField(label="Time zone", required=False, widget=forms.Select)

    class Meta:
        model = User
        fields = ("time_zone",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "zone_%s")
        super().__init__(*args, **kwargs)
        field = self.fields["time_zone"]
        field.help_text = (
            "Every time the site shows you is in this zone and labelled with it, times you type are read in "
            "it, and your mails use it. The API stays in UTC."
        )
        assert isinstance(field.widget, forms.Select)
        field.widget.choices = zone_choices(current=self.instance.time_zone)


def _address_not_verified_elsewhere(email: str, *, account: User | None) -> str:
    """``email``, unless another account has verified it: one verified address, one account.

    The error says no more than that: not which account, nor whether it is a player's.
    """
    holders = User.objects.with_verified_address(email) if email else User.objects.none()
    if account is not None and account.pk is not None:
        holders = holders.exclude(pk=account.pk)
    if holders.exists():
        raise forms.ValidationError(EMAIL_VERIFIED_ELSEWHERE, code="verified_elsewhere")
    return email


class PasswordResetMailForm(PasswordResetForm):
    """ "Forgot your password?": the address, checked as Django checks it; nothing else.

    The view hands the address to ``accounts.mail.password_reset_enqueue``; a Celery task
    finds the accounts and mails them (``accounts.mail.password_reset_mails_send``), never
    the request.
    """


WRONG_USERNAME = "That is not your username."
NO_PASSWORD_HELP = "Your account has no password (it signs in with Discord or Lichess), so type its name to confirm."


def password_checked(user: User, password: str) -> str:
    """``password`` if it is ``user``'s, else the form error: asked again before a change that matters."""
    if not user.check_password(password):
        raise forms.ValidationError(WRONG_PASSWORD, code="password_incorrect")
    return password


def code_checked(user: User, code: str) -> str:
    """``code`` if it is the app's current code or an unused recovery code (used up then), else the form error."""
    if not two_factor.code_check(user=user, code=code):
        raise forms.ValidationError(WRONG_CODE, code="code_incorrect")
    return code


class AccountDeleteForm(forms.Form):
    """Deleting one's own account: the password again, and a box saying what it means."""

    password = forms.CharField(
        label="Your password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
        help_text="The one you sign in with, so nobody else at this browser can delete the account.",
    )
    understood = forms.BooleanField(
        label="I understand: my name, address, profile, notifications, tokens and sessions are removed for good",
        help_text="Your games stay in the other players' histories, under a name nothing links to you.",
    )

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        if not user.has_usable_password():  # it signs in with Discord or Lichess only: its name instead
            del self.fields["password"]
            self.fields = {
                "username": forms.CharField(label="Your username", help_text=NO_PASSWORD_HELP),
                **self.fields,
            }
        if two_factor.enrolled(user):  # the second factor too, when the account has one
            self.fields["code"] = forms.CharField(
                label="A code from your authenticator app, or a recovery code",
                max_length=20,
                widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "autocapitalize": "none"}),
            )
            self.order_fields(["username", "password", "code", "understood"])

    def clean_username(self) -> str:
        username: str = self.cleaned_data["username"]
        if username_normal(username.strip()).casefold() != self.user.username.casefold():
            raise forms.ValidationError(WRONG_USERNAME, code="username_incorrect")
        return username

    def clean_password(self) -> str:
        return password_checked(self.user, self.cleaned_data["password"])

    def clean_code(self) -> str:
        code: str = self.cleaned_data["code"]
        # Checked only after a right password (or name), so a wrong one uses up no recovery code.
        first = "password" if "password" in self.fields else "username"
        return code_checked(self.user, code) if first in self.cleaned_data else code


class TwoFactorCodeForm(forms.Form):
    """The code that finishes a sign-in: the app's six digits, or a recovery code."""

    code = forms.CharField(
        label="Code",
        max_length=20,
        help_text="The 6 digits your authenticator app shows now, or one of your recovery codes (like abcd-efgh).",
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "autocapitalize": "none", "spellcheck": "false", "autofocus": True}
        ),
    )


class TwoFactorSetupForm(forms.Form):
    """The first code from a newly added app, which proves it holds the secret."""

    code = forms.CharField(
        label="Code from the app",
        max_length=20,
        help_text="The app then shows 6 digits that change every 30 seconds: type the ones shown now.",
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric", "autofocus": True}),
    )

    def clean_code(self) -> str:
        code = "".join(self.cleaned_data["code"].split())
        if not (code.isdigit() and len(code) == 6):
            raise forms.ValidationError("Type the 6 digits the app shows, like 123456.", code="format")
        return code


class PasswordAgainForm(forms.Form):
    """The password once more, before a change to how the account signs in; an account with no
    password (it signs in with Discord or Lichess) gives a code from its app instead."""

    prefix = "two_factor"
    password = forms.CharField(
        label="Your password, to change any of this",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        if not user.has_usable_password():
            del self.fields["password"]
            self.fields["code"] = forms.CharField(
                label="A code from your authenticator app, to change any of this",
                max_length=20,
                widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "autocapitalize": "none"}),
            )

    def clean_password(self) -> str:
        return password_checked(self.user, self.cleaned_data["password"])

    def clean_code(self) -> str:
        return code_checked(self.user, self.cleaned_data["code"])


EMAIL_HAS_ACCOUNT = (
    "An account here already uses %(email)s, and accounts are never joined by their address. If it is yours, "
    "sign in to it with its password (“Forgot your password?” mails a new one) and link %(provider)s from "
    "Settings. Or use another address here, or leave the field empty."
)


class ProviderSignUpForm(_UserModelForm):
    """A first sign-in with Discord or Lichess: the name to play under and the address, as sign-up
    asks them (``accounts.linking``). No password: the account signs in through the provider."""

    email = forms.EmailField(
        required=False,
        help_text="Optional. Only moderators see it; it is never shown on your profile. With it you can get a "
        "password by mail, to sign in without the provider too.",
    )

    class Meta:
        model = User
        fields = ("username", "email")
        error_messages = {"username": {"max_length": USERNAME_TOO_LONG}}
        help_texts = {
            "username": "What other players see. 3–30 characters: letters of any script, digits, “_” and “-”."
        }

    def __init__(self, *args: Any, provider_email: str, provider_label: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.provider_email = provider_email
        self.provider_label = provider_label

    def clean_username(self) -> str:
        username: str = username_normal(self.cleaned_data["username"].strip())
        if User.objects.filter(username__iexact=username).exists():
            raise forms.ValidationError(USERNAME_TAKEN, code="unique", params={"value": username})
        return username

    def clean_email(self) -> str:
        """The provider's verified address is refused if any account here has it: its owner proved it is
        theirs, so they learn nothing they may not know. Any other address is checked as sign-up checks it."""
        email: str = self.cleaned_data["email"]
        if email and self.provider_email and email.casefold() == self.provider_email.casefold():
            if User.objects.filter(email__iexact=email).exists():
                raise forms.ValidationError(
                    EMAIL_HAS_ACCOUNT, code="has_account", params={"email": email, "provider": self.provider_label}
                )
            return email
        return _address_not_verified_elsewhere(email, account=None)
