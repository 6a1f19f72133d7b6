"""Sign-in prints: which accounts signed in from one address or one browser (docs/security.md).

At each successful sign-in (``user_logged_in``, connected in ``AccountsConfig.ready``) the
account gets a print of its client address (``client_address``, as the login throttle
reads it) and one of its User-Agent: keyed hashes (``salted_hmac`` with ``SECRET_KEY``),
so the database says that two accounts signed in from one address without saying which.
Without ``SECRET_KEY`` a hash cannot be checked against a guessed address.

A shared address is a signal, not proof: a household, an office or a mobile carrier puts
many people behind one address, and a User-Agent names a browser version that millions
share. So prints are shown to moderators and make the fair-play watch hold a result for a
moderator (docs/rules.md §15); they never refuse anything by themselves.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.http import HttpRequest
from django.utils import timezone
from django.utils.crypto import salted_hmac

from accounts.models import PrintKind, SignInPrint, User
from accounts.throttling import client_address

# How long a shared address counts (the watch's hold, the queue's separation): one reassigned by a
# provider since is no longer shared.
SHARED_WINDOW = timedelta(days=90)
SALT = "accounts.prints"  # with the kind: an address and a User-Agent never hash alike
# One statement per print, on PostgreSQL and SQLite alike: a new print is added, a known one
# counted, and two sign-ins at once both count.
UPSERT_PRINT = """
    INSERT INTO accounts_signinprint (user_id, kind, digest, first_seen, last_seen, count)
    VALUES (%s, %s, %s, %s, %s, 1)
    ON CONFLICT (user_id, kind, digest)
    DO UPDATE SET last_seen = EXCLUDED.last_seen, count = accounts_signinprint.count + 1
"""


def print_digest(kind: PrintKind, value: str) -> str:
    """The keyed hash of one address or User-Agent: 64 hexadecimal digits (HMAC-SHA256)."""
    return salted_hmac(f"{SALT}.{kind}", value, algorithm="sha256").hexdigest()


def request_prints(request: HttpRequest) -> list[tuple[PrintKind, str]]:
    """The prints of a request: its client address and its User-Agent, each when it has one."""
    prints = []
    if address := client_address(request):
        prints.append((PrintKind.ADDRESS, print_digest(PrintKind.ADDRESS, address)))
    if agent := request.headers.get("user-agent", "").strip():
        prints.append((PrintKind.DEVICE, print_digest(PrintKind.DEVICE, agent)))
    return prints


def sign_in_record(*, user: User, request: HttpRequest, now: datetime) -> None:
    """Count a sign-in of ``user`` under each print of ``request``: a new print is added, a known one counted."""
    with connection.cursor() as cursor:
        for kind, digest in request_prints(request):
            cursor.execute(UPSERT_PRINT, [user.pk, kind.value, digest, now, now])


def record_sign_in(sender: Any, request: HttpRequest | None, user: User, **kwargs: Any) -> None:
    """The ``user_logged_in`` receiver: a sign-in with a request (not a test's ``force_login``) is printed."""
    if request is not None:
        sign_in_record(user=user, request=request, now=timezone.now())


@dataclass(frozen=True, slots=True)
class SharedAccount:
    """Another account that signed in with one of a player's prints."""

    user: User
    kinds: tuple[PrintKind, ...]  # the kinds of print shared: an address, a device, or both
    last_seen: datetime  # the latest sign-in of the other account with a shared print


def accounts_sharing(
    *, user: User, kinds: Iterable[PrintKind] = tuple(PrintKind), limit: int = 50
) -> list[SharedAccount]:
    """The other accounts that signed in with a print of ``user``'s, most recently seen first.

    Those sharing an address come before those sharing only a device print: a browser
    version is common, an address much less so.
    """
    mine = SignInPrint.objects.filter(user=user, kind__in=list(kinds))
    rows = (
        SignInPrint.objects.filter(kind__in=list(kinds))
        .filter(digest__in=mine.values("digest"))
        .exclude(user=user)
        .values_list("user_id", "kind", "last_seen")
    )
    found: dict[int, tuple[set[PrintKind], datetime]] = {}
    for other, kind, seen in rows:
        shared, last = found.setdefault(other, (set(), seen))
        shared.add(PrintKind(kind))
        found[other] = (shared, max(last, seen))
    ordered = sorted(
        found.items(), key=lambda item: (PrintKind.ADDRESS not in item[1][0], -item[1][1].timestamp(), item[0])
    )[:limit]
    users = User.objects.in_bulk([pk for pk, _ in ordered])
    return [
        SharedAccount(user=users[pk], kinds=tuple(kind for kind in PrintKind if kind in shared), last_seen=seen)
        for pk, (shared, seen) in ordered
    ]


def accounts_sharing_ids(*, user_id: int, kinds: Iterable[PrintKind], since: datetime) -> set[int]:
    """The ids of the other accounts that signed in with a print of ``kinds`` of ``user_id``'s, both since ``since``."""
    mine = SignInPrint.objects.filter(user_id=user_id, kind__in=list(kinds), last_seen__gte=since)
    theirs = SignInPrint.objects.filter(kind__in=list(kinds), last_seen__gte=since, digest__in=mine.values("digest"))
    return set(theirs.exclude(user_id=user_id).values_list("user_id", flat=True))


def prints_select(*, players: str, kinds: Iterable[PrintKind], since: str) -> str:
    """A statement (portable, no ORDER BY) reading the prints of ``kinds`` seen since ``since`` of
    the users ``players`` as rows ``(user_id, kind, digest)``. ``players`` and ``since`` are SQL (a
    list of placeholders or a subquery; a placeholder): other apps' statements embed it, so a
    read of prints costs them no round trip of its own. The kinds are the enum's own values."""
    wanted = ", ".join(f"'{PrintKind(kind).value}'" for kind in kinds)
    return (
        f"SELECT user_id, kind, digest FROM {SignInPrint._meta.db_table}"
        f" WHERE user_id IN ({players}) AND kind IN ({wanted}) AND last_seen >= {since}"
    )


def prints_fragment(*, players: Sequence[int], kinds: Iterable[PrintKind], since: datetime) -> tuple[str, list[Any]]:
    """``prints_select`` for a list of ``players``, with its parameters (an adapted datetime): the
    watch runs it in one round trip with the marks' (``UNION ALL``)."""
    statement = prints_select(players=", ".join(["%s"] * len(players)), kinds=kinds, since="%s")
    return statement, [*players, connection.ops.adapt_datetimefield_value(since)]


def pairs_sharing(
    *, groups: Sequence[Sequence[int]], rows: Iterable[tuple[int, str, str]]
) -> list[tuple[int, int, PrintKind]]:
    """``groups_sharing_prints`` from prints already read (``prints_fragment``'s rows)."""
    side = {player: index for index, group in enumerate(groups) for player in group}
    holders: dict[tuple[str, str], list[int]] = defaultdict(list)
    for user, kind, digest in sorted(rows):
        holders[(kind, digest)].append(user)
    pairs: set[tuple[int, int, PrintKind]] = set()
    for (kind, _), users in holders.items():
        for a in users:
            for b in users:
                if side[a] < side[b]:
                    pairs.add((a, b, PrintKind(kind)))
    return sorted(pairs, key=lambda pair: (side[pair[0]], side[pair[1]], pair[0], pair[1], pair[2]))


def groups_sharing_prints(
    *, groups: Sequence[Sequence[int]], kinds: Iterable[PrintKind], since: datetime
) -> list[tuple[int, int, PrintKind]]:
    """The pairs of accounts from different ``groups`` (the sides of a game) that signed in with one print
    of ``kinds`` since ``since``: ``(account, other account, kind)``, the account from the earlier group,
    in the order of the groups and then of the ids. One statement, written by hand: the watch and the
    queue ask it often, and building it through the ORM cost more than running it."""
    players = [player for group in groups for player in group]
    kinds = list(kinds)
    if not players or not kinds:
        return []
    statement, params = prints_fragment(players=players, kinds=kinds, since=since)
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        rows = cursor.fetchall()
    return pairs_sharing(groups=groups, rows=rows)
