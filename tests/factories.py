from __future__ import annotations

from functools import cache

import factory
from django.contrib.auth.hashers import make_password

from accounts.models import User
from ladder.models import Ladder

PASSWORD = "correct-horse-battery"


@cache
def _hashed_password() -> str:
    """``PASSWORD`` hashed once by the real hasher: hashing it for every user (a million
    PBKDF2 rounds) was most of the time of the tests that create many players."""
    return make_password(PASSWORD)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"player{n:03d}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.org")
    password = factory.LazyFunction(_hashed_password)


class LadderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Ladder

    name = factory.Sequence(lambda n: f"Test Ladder {n}")
    slug = factory.Sequence(lambda n: f"test-ladder-{n}")
    game = "Chess"
    description = "A ladder for tests."
    # The fair-play limits are off: most tests report old games between the same few players.
    # tests/ladder/test_fair_play.py turns them on.
    report_limit_per_hour = 0
    pair_limit_per_day = 0
    backdate_hours = 0
    new_account_hours = 0
    review_unanswered_reports = 0
    review_one_sided_results = 0
    review_many_opponents = 0
    watch_quick_seconds = 0  # the fair-play watch too: tests report queue games seconds after pairing them
    watch_shared_prints = False  # and its hold on shared addresses: every test client signs in from 127.0.0.1


def member(ladder: Ladder, username: str, **fields) -> User:
    """A user who signed up and joined ``ladder`` 1,000 days ago, so games may be reported at
    any past time and the new-account rule of fair play does not apply (unless ``date_joined``
    says otherwise)."""
    from datetime import timedelta

    from django.utils import timezone

    from ladder.membership import ladder_join

    joined = timezone.now() - timedelta(days=1000)
    user = UserFactory(username=username, **{"date_joined": joined, **fields})
    ladder_join(ladder=ladder, player=user, now=joined)
    return user


def bulk_users(prefix: str, count: int) -> list[User]:
    """``count`` users in one insert, without a usable password (hashing one costs ~100 ms)."""
    return User.objects.bulk_create(
        [User(username=f"{prefix}{n}", email=f"{prefix}{n}@example.org", password="!") for n in range(count)]
    )


def moderator_account(username: str) -> User:
    """A staff account in the ``moderators`` group, as a moderator of the site has."""
    from django.contrib.auth.models import Group

    user = UserFactory(username=username, is_staff=True)
    user.groups.add(Group.objects.get(name="moderators"))
    return user


def team_queue_ladder(formats: str, *, window: float = 0.05, uneven: bool = True):
    """The ``ladder`` fixture as a Widelands ladder whose queue forms ``formats`` ("2v2,ffa4"),
    with no rematch cooldown and a fixed window of ``window`` to ``1 − window``."""
    import pytest

    return pytest.mark.ladder(
        name="Widelands",
        slug="widelands",
        allow_teams=True,
        allow_uneven_teams=uneven,
        allow_free_for_all=True,
        queue_formats=formats,
        rematch_cooldown_minutes=0,
        queue_min_win_probability=window,
        queue_widest_min_win_probability=window,
    )


def waiting(ladder: Ladder, user: User, now):
    """Put ``user`` in the queue as searching 1 v 1 since ``now``, without a join: nobody is paired
    and no poll is told of them (a hand-built queue)."""
    from matchmaking.models import QueueEntry
    from ratings.models import PlayerRating

    rating = PlayerRating.objects.get(ladder=ladder, player=user)
    return QueueEntry.objects.create(
        ladder=ladder,
        player=user,
        rating=rating.rating,
        rd=rating.rd,
        volatility=rating.volatility,
        rd_as_of=rating.rd_as_of,
        joined_at=now,
        last_seen_at=now,
    )


def other_connection():
    """A second connection to the test database, outside Django (another process, as it were)."""
    import psycopg
    from django.db import connection

    settings = connection.settings_dict
    return psycopg.connect(
        dbname=settings["NAME"],
        user=settings["USER"],
        password=settings["PASSWORD"] or None,
        host=settings["HOST"] or None,
        port=settings["PORT"] or None,
        autocommit=True,
    )
