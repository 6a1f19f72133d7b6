"""Each account's time zone: which names are zones, the one a request shows times in, the choices.

An account keeps an IANA name (``User.time_zone``), blank for the site's ``TIME_ZONE``. Pages
are drawn in the reader's zone: ``AccountTimeZoneMiddleware`` activates it for every request
but the API's, which stays in UTC with offsets (DRF writes datetimes in the *active* zone, and
bots must not see a person's preference). Forms then read typed times in that zone too, and a
mail to a player is rendered inside ``timezone.override(zone_of(player))``.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, tzinfo
from functools import cache
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

if TYPE_CHECKING:  # accounts.models calls this module's validator
    from accounts.models import User

UNKNOWN_TIME_ZONE = "“%(value)s” is not a time zone we know: choose one from the list (e.g. Europe/Berlin)."
# The regions the list offers, as the tz database names them; other names (legacy "US/Eastern",
# "Etc/GMT+5") are still accepted, and listed for an account that holds one.
REGIONS = ("Africa", "America", "Antarctica", "Arctic", "Asia", "Atlantic", "Australia", "Europe", "Indian", "Pacific")
# Paths whose answers are for programs: in UTC whatever the account's zone.
UTC_PATHS = ("/api/",)


@cache
def known_zones() -> frozenset[str]:
    """Every IANA name this machine's tz database has (``tzdata`` is pinned in requirements.txt)."""
    return frozenset(zoneinfo.available_timezones())


def validate_time_zone(value: str) -> None:
    """Blank (the site's zone) or an IANA name the tz database has."""
    if value and value not in known_zones():
        raise ValidationError(UNKNOWN_TIME_ZONE, code="unknown_time_zone", params={"value": value[:64]})


def zone_guess(value: str | None) -> str:
    """A browser's zone (``Intl.DateTimeFormat().resolvedOptions().timeZone``) if it is one, else ""
    (the site's): a guess made at sign-up, never an error."""
    value = (value or "").strip()
    return value if value in known_zones() else ""


def zone_of(user: User | None) -> tzinfo:
    """The zone ``user`` reads times in: theirs, or the site's for a blank one or no account."""
    name = getattr(user, "time_zone", "") or ""
    if name and name in known_zones():
        return zoneinfo.ZoneInfo(name)
    return timezone.get_default_timezone()


def zone_name_of(user: User | None) -> str:
    return str(getattr(zone_of(user), "key", settings.TIME_ZONE))


def _city(name: str) -> str:
    return name.split("/", 1)[-1].replace("_", " ").replace("/", " / ")


def _offset(zone: tzinfo, now: datetime) -> str:
    """ "UTC+01:00" at ``now`` (summer time moves it)."""
    delta = now.astimezone(zone).utcoffset()
    minutes = round(delta.total_seconds() / 60) if delta is not None else 0
    sign = "+" if minutes >= 0 else "−"
    hours, rest = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours:02d}:{rest:02d}"


def zone_choices(*, current: str = "", now: datetime | None = None) -> list[tuple[str, object]]:
    """The select's choices: the site's zone, UTC, then each region's zones by city with their
    offset now ("Berlin (UTC+01:00)"); ``current`` is listed even when outside the regions."""
    now = now or timezone.now()
    site = settings.TIME_ZONE
    choices: list[tuple[str, object]] = [("", f"The site's time zone ({site})"), ("UTC", "UTC")]
    names = {name for name in known_zones() if name.split("/", 1)[0] in REGIONS and "/" in name}
    if current and current != "UTC":
        names.add(current)
    grouped: dict[str, list[tuple[str, str]]] = {}
    for name in sorted(names):
        region = name.split("/", 1)[0] if name.split("/", 1)[0] in REGIONS else "Other"
        label = f"{_city(name) if region != 'Other' else name} ({_offset(zoneinfo.ZoneInfo(name), now)})"
        grouped.setdefault(region, []).append((name, label))
    choices.extend((region, grouped[region]) for region in (*REGIONS, "Other") if region in grouped)
    return choices


class AccountZone(tzinfo):
    """The signed-in account's zone, read from the account the first time a time is written or read.

    A request that shows no time (the bell's cached counts) then loads no account for it: the
    zone is a column of the account's row, which ``request.user`` reads lazily. Every method
    answers as the account's ``ZoneInfo`` does, so Django's ``localtime``, ``make_aware`` and
    date formats work on it unchanged.
    """

    def __init__(self, request: HttpRequest) -> None:
        self._request = request
        self._zone: tzinfo | None = None

    def _resolved(self) -> tzinfo:
        if self._zone is None:
            user = getattr(self._request, "user", None)
            self._zone = zone_of(user if user is not None and user.is_authenticated else None)
        return self._zone

    @property
    def key(self) -> str:
        return str(self._resolved())

    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        return self._resolved().utcoffset(dt)

    def dst(self, dt: datetime | None) -> timedelta | None:
        return self._resolved().dst(dt)

    def tzname(self, dt: datetime | None) -> str | None:
        return self._resolved().tzname(dt)

    def fromutc(self, dt: datetime) -> datetime:
        zone = self._resolved()
        return zone.fromutc(dt.replace(tzinfo=zone)).replace(tzinfo=self)

    def __str__(self) -> str:
        return self.key

    def __repr__(self) -> str:
        return f"AccountZone({self.key!r})"

    def __reduce__(self) -> tuple[Callable[[str], tzinfo], tuple[str]]:
        return zoneinfo.ZoneInfo, (self.key,)  # pickled (a cached value) as the plain zone


class AccountTimeZoneMiddleware:
    """Activate the signed-in account's zone for a page; UTC for the API (``UTC_PATHS``).

    After ``AuthenticationMiddleware``. A request whose session has no account (a visitor who
    is not signed in) reads the site's ``TIME_ZONE``, as does an account with a blank zone; a
    signed-in one gets an ``AccountZone``, so nothing is read until a time is written.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info.startswith(UTC_PATHS):
            timezone.activate(UTC)
        elif SESSION_KEY in getattr(request, "session", {}):
            timezone.activate(AccountZone(request))
        else:
            timezone.deactivate()
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
