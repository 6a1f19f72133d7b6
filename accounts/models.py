from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from django.contrib.auth.models import AbstractUser
from django.contrib.auth.models import UserManager as DjangoUserManager
from django.core.exceptions import ValidationError
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import F, Lookup, Q
from django.db.models.functions import Lower
from django.db.models.sql.compiler import SQLCompiler
from django.urls import reverse

from accounts import store
from accounts.validators import (
    EMAIL_VERIFIED_ELSEWHERE,
    USERNAME_LOOKS_LIKE,
    USERNAME_MAX_LENGTH,
    USERNAME_TAKEN_ANY_CASE,
    USERNAME_TOO_LONG,
    UsernameValidator,
    username_skeleton,
)
from accounts.zones import validate_time_zone

# django-stubs types a lookup by the value it compares with; Django's own class takes no type argument.
if TYPE_CHECKING:
    _StrLookup = Lookup[str | None]
else:
    _StrLookup = Lookup


class UsernameIExact(_StrLookup):
    """``username__iexact`` as ``lower(username) = lower(%s)``: the unique index on
    ``lower(username)`` answers it. Django's own ``iexact`` compares ``upper()`` on PostgreSQL,
    which no index covers, so every login and profile look-up read the whole table (2 s
    with 2,000,000 accounts)."""

    lookup_name = "iexact"

    def as_sql(self, compiler: SQLCompiler, connection: BaseDatabaseWrapper) -> tuple[str, list[Any]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"LOWER({lhs}) = LOWER({rhs})", [*lhs_params, *rhs_params]


class UserManager(DjangoUserManager["User"]):
    def with_verified_address(self, email: str) -> models.QuerySet[User]:
        """The account that has verified ``email`` (in any case) and still uses it: none or one."""
        return self.filter(email__iexact=email, email_verified__iexact=email).exclude(email="")

    def get_by_natural_key(self, username: str | None) -> User:
        """Log in whatever the case typed: usernames are unique case-insensitively."""
        return self.get(username__iexact=username)

    def get(self, *args: Any, **kwargs: Any) -> User:
        """``get(pk=<int>)``, which every signed-in request makes (``ModelBackend.get_user`` reads
        the session's user with it), is one statement prepared on the connection on PostgreSQL:
        building the ORM's query cost twice its round trip (``accounts.store.user_by_pk``). Any
        other ``get`` is the ORM's."""
        pk = kwargs.get("pk")
        if args or len(kwargs) != 1 or type(pk) is not int or self._db is not None:
            return super().get(*args, **kwargs)
        return store.user_by_pk(self.model, pk, partial(super().get, pk=pk))


class User(AbstractUser):
    """A player, moderator or bot. Usernames are unique whatever their case.

    A verified address belongs to one account (``accounts_user_verified_email_unique``):
    another account may type it, unverified, but can never verify it. Typing an address
    proves nothing, so refusing unverified duplicates would let anyone block an address
    (and ask the form who has it).
    """

    username = models.CharField(
        "username",
        max_length=USERNAME_MAX_LENGTH,
        unique=True,
        validators=[UsernameValidator()],
        help_text="3–30 characters: letters of any script, digits, “_” and “-”. Not case-sensitive.",
        error_messages={
            "unique": USERNAME_TAKEN_ANY_CASE,
            "max_length": USERNAME_TOO_LONG,
        },
    )
    # What the username looks like (accounts.validators.username_skeleton): a new name whose
    # skeleton another account's shares is refused (``clean``), so nobody passes for somebody else.
    username_skeleton = models.CharField(
        "look-alike key", max_length=200, db_index=True, editable=False, default="", db_default=""
    )
    about = models.TextField("about", blank=True, max_length=500, help_text="A few words shown on your public profile.")
    email_verified = models.CharField(
        "verified address",
        max_length=254,
        blank=True,
        help_text="The address whose link was followed. The email is verified while it is this address.",
    )
    is_bot = models.BooleanField(
        "bot account",
        default=False,
        help_text="Played by a program through the API; marked as a bot on profiles and leaderboards.",
    )
    # An IANA name (accounts.zones); blank: the site's TIME_ZONE. Pages, forms and mails use it.
    time_zone = models.CharField(
        "time zone",
        max_length=64,
        blank=True,
        default="",
        db_default="",
        validators=[validate_time_zone],
        help_text="The times the site shows you are in this zone, and the times you type are read in it.",
    )

    objects: ClassVar[UserManager] = UserManager()
    # ModelBackend's cache of the account's permission names; api.authentication fills it
    # from the statement that reads the token, the user and their permissions at once.
    _perm_cache: set[str]

    class Meta:
        ordering = ["username"]
        # Moderators ban and unban players with this, not with ``change_user``: the user
        # admin lets it touch players only, never staff accounts or superusers.
        permissions = [("ban_user", "Can ban and unban players")]
        constraints = [
            models.UniqueConstraint(
                Lower("username"),
                name="accounts_user_username_ci_unique",
                violation_error_message=USERNAME_TAKEN_ANY_CASE,
            ),
            # The address of a row whose ``email`` is its verified one (``has_verified_email``).
            models.UniqueConstraint(
                Lower("email"),
                condition=Q(email_verified__iexact=F("email")) & ~Q(email=""),
                name="accounts_user_verified_email_unique",
                violation_error_message=EMAIL_VERIFIED_ELSEWHERE,
            ),
        ]
        # Password resets look accounts up by address, whatever its case (``email__iexact``).
        indexes = [models.Index(Lower("email"), name="accounts_user_email_ci")]

    def __str__(self) -> str:
        return self.username

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.username_skeleton = username_skeleton(self.username)
        fields = kwargs.get("update_fields")
        if fields is not None and "username" in fields:
            kwargs["update_fields"] = {*fields, "username_skeleton"}
        super().save(*args, **kwargs)

    def clean(self) -> None:
        """Also refuses a username that could be mistaken for another account's (the same
        skeleton: look-alike letters, or case); the same name in another case is the unique
        constraint's to refuse, with its own message."""
        super().clean()
        if not self.username:
            return
        other = (
            User.objects.filter(username_skeleton=username_skeleton(self.username))
            .exclude(pk=self.pk)
            .exclude(username__iexact=self.username)
            .values_list("username", flat=True)
            .first()
        )
        if other is not None:
            raise ValidationError(
                {
                    "username": ValidationError(
                        USERNAME_LOOKS_LIKE, code="username_looks_like", params={"value": self.username, "other": other}
                    )
                }
            )

    def get_absolute_url(self) -> str:
        return reverse("accounts:profile", kwargs={"username": self.username})

    @property
    def has_verified_email(self) -> bool:
        """Whether mail may go to ``email``: its owner followed a link sent to that very address.

        Changing the address unverifies it by itself (``email_verified`` still names the old
        one); only a password reset is ever sent to an address not verified.
        """
        return bool(self.email) and self.email.casefold() == self.email_verified.casefold()


# On these fields only: every ``username__iexact`` and ``email__iexact``, also across
# relations, uses the index on ``lower()``.
User._meta.get_field("username").register_lookup(UsernameIExact)
User._meta.get_field("email").register_lookup(UsernameIExact)


class PrintKind(models.TextChoices):
    ADDRESS = "address", "Address"
    DEVICE = "device", "Device (browser)"


class SignInPrint(models.Model):
    """A keyed hash of the address or the browser (User-Agent) an account signed in from
    (``accounts.prints``), so moderators can see which accounts share one (docs/security.md).

    Only the hash is kept, keyed with ``SECRET_KEY``: it says that two sign-ins came from one
    address, never which address. One row per account, kind and hash, counted at each sign-in.
    """

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="sign_in_prints")
    kind = models.CharField(max_length=7, choices=PrintKind)
    digest = models.CharField(max_length=64)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    count = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["-last_seen", "-id"]
        constraints = [models.UniqueConstraint(fields=["user", "kind", "digest"], name="sign_in_print_once")]
        # Who else signed in with a print: the accounts sharing a player's prints.
        indexes = [models.Index(fields=["kind", "digest"], name="sign_in_print_digest")]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.kind} {self.digest[:8]}"


class AccountSession(models.Model):
    """A session an account is signed in with (``accounts.sessions``): what *Settings* lists,
    and what "Sign out everywhere else" and a new password end. The session itself is Django's;
    this row names its key, the device and when it was last used (to within five minutes)."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="account_sessions")
    session_key = models.CharField(max_length=40, unique=True)
    device = models.CharField(max_length=120, blank=True)
    signed_in_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()

    class Meta:
        ordering = ["-last_seen_at", "-id"]
        indexes = [models.Index(fields=["user", "-last_seen_at"], name="account_session_user_seen")]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.device or 'unknown device'}"


class OAuthProvider(models.TextChoices):
    """The sites an account may sign in with (``accounts.oauth``)."""

    DISCORD = "discord", "Discord"
    LICHESS = "lichess", "Lichess"


class LinkedIdentity(models.Model):
    """An account at Discord or Lichess that signs in to this one (``accounts.oauth``).

    One per provider and account, and an account there links to one account here: the
    provider's own user id (Discord's snowflake, Lichess's lower-case id) names it, never its
    email address, so two accounts are never merged by an address. No token is kept: the
    profile is read once, at each sign-in, and the token forgotten.
    """

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="linked_identities")
    provider = models.CharField(max_length=16, choices=OAuthProvider)
    uid = models.CharField("id there", max_length=64, help_text="The provider's own, stable id of the account.")
    name = models.CharField("name there", max_length=100, help_text="As the provider last gave it.")
    linked_at = models.DateTimeField()
    last_used_at = models.DateTimeField("last signed in with", null=True, blank=True)

    class Meta:
        ordering = ["provider"]
        verbose_name = "linked account"
        constraints = [
            models.UniqueConstraint(fields=["provider", "uid"], name="linked_identity_once"),
            models.UniqueConstraint(fields=["user", "provider"], name="linked_identity_one_per_provider"),
        ]

    def __str__(self) -> str:
        return f"{self.get_provider_display()}: {self.name}"
