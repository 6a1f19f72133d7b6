"""A marked account enters no tournament (docs/rules.md §15, "Marks"); the refusal does not say why."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from ladder.models import MarkKind
from ladder.moderation import marks
from tests.tournaments.test_lifecycle import field, make
from tournaments import services
from tournaments.models import Entry

pytestmark = pytest.mark.django_db


def mark(user, moderator):
    return marks.mark_player(player=user, kind=MarkKind.BOOSTER, note="Feeds others.", by=moderator, now=timezone.now())


def test_a_marked_account_cannot_enter(ladder, moderator):
    ann, bob = field(ladder, 2)
    tournament = make(ladder, moderator)
    mark(ann, moderator)

    with pytest.raises(ValidationError) as refused:
        services.entry_register(tournament=tournament, captain=ann)

    assert refused.value.code == "not_eligible"
    assert refused.value.messages == ["p0 cannot enter tournaments."]
    assert services.entry_register(tournament=tournament, captain=bob).name == "p1"


def test_a_team_with_a_marked_teammate_cannot_enter(ladder, moderator):
    ann, bob = field(ladder, 2)
    tournament = make(ladder, moderator, team_size=2)
    mark(bob, moderator)

    with pytest.raises(ValidationError) as refused:
        services.entry_register(tournament=tournament, captain=ann, teammates=[bob], name="Pair")

    assert refused.value.messages == ["p1 cannot enter tournaments."]
    assert not Entry.objects.exists()


def test_a_lifted_mark_lets_the_account_enter(ladder, moderator):
    (ann,) = field(ladder, 1)
    tournament = make(ladder, moderator)
    marks.mark_lift(mark=mark(ann, moderator), note="Cleared.", by=moderator, now=timezone.now())

    assert services.entry_register(tournament=tournament, captain=ann).name == "p0"
