from __future__ import annotations

import factory

from accounts.models import User
from ladder.models import Ladder

PASSWORD = "correct-horse-battery"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"player{n:03d}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.org")
    password = factory.PostGenerationMethodCall("set_password", PASSWORD)

    @factory.post_generation
    def _save(obj, create, extracted, **kwargs):
        if create:
            obj.save()


class LadderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Ladder

    name = factory.Sequence(lambda n: f"Test Ladder {n}")
    slug = factory.Sequence(lambda n: f"test-ladder-{n}")
    game = "Chess"
    description = "A ladder for tests."


def member(ladder: Ladder, username: str, **fields) -> User:
    """A user who joined ``ladder`` long ago, so games may be reported at any past time."""
    from datetime import timedelta

    from django.utils import timezone

    from ladder.services import ladder_join

    user = UserFactory(username=username, **fields)
    ladder_join(ladder=ladder, player=user, now=timezone.now() - timedelta(days=1000))
    return user


def bulk_users(prefix: str, count: int) -> list[User]:
    """``count`` users in one insert, without a usable password (hashing one costs ~100 ms)."""
    return User.objects.bulk_create(
        [User(username=f"{prefix}{n}", email=f"{prefix}{n}@example.org", password="!") for n in range(count)]
    )
