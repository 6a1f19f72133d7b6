from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm

from accounts.models import User
from accounts.validators import USERNAME_TAKEN, USERNAME_TOO_LONG


class SignUpForm(UserCreationForm):
    email = forms.EmailField(
        required=False, help_text="Optional. Only moderators see it; it is never shown on your profile."
    )

    class Meta:
        model = User
        fields = ("username", "email")
        error_messages = {"username": {"max_length": USERNAME_TOO_LONG}}

    def clean_username(self) -> str:
        username = self.cleaned_data["username"].strip()
        if User.objects.filter(username__iexact=username).exists():
            raise forms.ValidationError(USERNAME_TAKEN, code="unique", params={"value": username})
        return username


class AccountSettingsForm(forms.ModelForm):
    class Meta:
        model = User
        fields = ("email", "about")
        widgets = {"about": forms.Textarea(attrs={"rows": 4})}
        help_texts = {"email": "Only moderators see it; it is never shown on your profile."}
