from __future__ import annotations

import threading

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.db import connection
from django.urls import reverse

from ladder.membership import ladder_join, ladder_leave
from ratings.models import PlayerRating
from tests.factories import LadderFactory

pytestmark = pytest.mark.django_db


def test_join_creates_rating_with_the_ladders_initial_values(player):
    ladder = LadderFactory(initial_rating=1200, initial_rd=300, rd_max=320, initial_volatility=0.07)

    with time_machine.travel("2026-05-01 12:00:00Z", tick=False):
        rating = ladder_join(ladder=ladder, player=player)

    assert (rating.rating, rating.rd, rating.volatility) == (1200, 300, 0.07)
    assert rating.rd_as_of.isoformat() == "2026-05-01T12:00:00+00:00"
    assert rating.games == 0
    assert rating.is_active


def test_join_page_post_joins_and_says_so(outsider_client, ladder):
    response = outsider_client.post(reverse("ladder:join", args=[ladder.slug]), follow=True)

    assert "Welcome to Chess" in response.text
    assert PlayerRating.objects.filter(ladder=ladder, player__username="mallory", is_active=True).count() == 1


def test_joining_twice_is_refused_with_a_message_and_creates_one_row(outsider_client, ladder):
    url = reverse("ladder:join", args=[ladder.slug])
    outsider_client.post(url)

    response = outsider_client.post(url, follow=True)

    assert f"You are already a member of {ladder.name}." in response.text
    assert PlayerRating.objects.filter(ladder=ladder).count() == 1


def test_join_needs_login_and_post(client, ladder):
    url = reverse("ladder:join", args=[ladder.slug])

    assert client.get(url).status_code == 405
    response = client.post(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("accounts:login"))
    assert not PlayerRating.objects.exists()


def test_join_unknown_ladder_is_404(player_client):
    assert player_client.post(reverse("ladder:join", args=["nope"])).status_code == 404


def test_leave_keeps_the_rating_and_rejoin_restores_it(player, ladder):
    rating = PlayerRating.objects.get(ladder=ladder, player=player)
    PlayerRating.objects.filter(pk=rating.pk).update(rating=1720.5, rd=80, games=12, wins=12)

    ladder_leave(ladder=ladder, player=player)
    left = PlayerRating.objects.get(pk=rating.pk)
    assert not left.is_active and left.left_at is not None

    back = ladder_join(ladder=ladder, player=player)
    assert back.pk == rating.pk
    assert (back.rating, back.rd, back.games) == (1720.5, 80, 12)
    assert PlayerRating.objects.filter(ladder=ladder).count() == 1


def test_leaving_a_ladder_one_is_not_in_is_refused(outsider_client, ladder):
    response = outsider_client.post(reverse("ladder:leave", args=[ladder.slug]), follow=True)

    assert f"You are not a member of {ladder.name}." in response.text


def test_leave_asks_on_a_page_of_its_own_before_leaving(player_client, player, ladder):
    url = reverse("ladder:leave", args=[ladder.slug])

    asked = player_client.get(url)

    assert asked.status_code == 200
    assert PlayerRating.objects.get(ladder=ladder, player=player).is_active
    assert f'<form method="post" action="{url}"' in asked.text
    assert "Your rating (1500), your games and your history are kept" in asked.text

    left = player_client.post(url, follow=True)

    assert "You left Chess. Your rating is kept if you join again." in left.text
    assert not PlayerRating.objects.get(ladder=ladder, player=player).is_active


def test_ladder_page_links_leaving_apart_from_reporting(player_client, ladder):
    page = player_client.get(ladder.get_absolute_url()).text
    url = reverse("ladder:leave", args=[ladder.slug])

    assert f'action="{url}"' not in page  # no one-tap leave: a link to the page that asks
    actions = page.split('<div class="actions">', 1)[1].split("</div>", 1)[0]
    assert "Report a result" in actions and url not in actions
    assert f'<a href="{url}">Leave this ladder…</a>' in page


def test_leave_page_for_someone_not_a_member_goes_back_to_the_ladder(outsider_client, ladder):
    response = outsider_client.get(reverse("ladder:leave", args=[ladder.slug]), follow=True)

    assert response.redirect_chain[-1][0] == ladder.get_absolute_url()
    assert f"You are not a member of {ladder.name}." in response.text


def test_leave_page_needs_login(client, ladder):
    response = client.get(reverse("ladder:leave", args=[ladder.slug]))

    assert response.status_code == 302 and response.url.startswith(reverse("accounts:login"))


def test_deactivated_account_cannot_join(outsider, ladder):
    outsider.is_active = False
    outsider.save()

    with pytest.raises(ValidationError, match="deactivated"):
        ladder_join(ladder=ladder, player=outsider)


@pytest.mark.django_db(transaction=True)
def test_concurrent_joins_create_exactly_one_row(outsider, ladder):
    barrier = threading.Barrier(4)
    outcomes: list[str] = []

    def join() -> None:
        barrier.wait()
        try:
            ladder_join(ladder=ladder, player=outsider)
            outcomes.append("joined")
        except ValidationError:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=join) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(outcomes) == ["joined", "refused", "refused", "refused"]
    assert PlayerRating.objects.filter(ladder=ladder, player=outsider).count() == 1
