"""The notifications page, opening and marking read, and the header's bell and "To confirm" counts."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape

import pytest
from django.urls import reverse
from django.utils import timezone

from ladder.matches.checks import SideInput
from ladder.matches.reporting import match_confirm, match_report
from ladder.models import Match
from notifications.models import Kind, Notification
from notifications.services import notify
from notifications.views import PAGE_SIZE

pytestmark = pytest.mark.django_db

LIST = "/notifications/"
READ = "/notifications/read/"
BELL = "/notifications/bell/"


def tell(user, count: int = 1, *, start=None, kind: str = Kind.SEARCH_EXPIRED) -> list[int]:
    """``count`` notifications for ``user``, a minute apart, oldest first; their ids in that order."""
    start = start or timezone.now() - timedelta(days=1)
    for number in range(count):
        notify(kind, [user.pk], key=f"search:{number}", data={"ladder": "Chess"}, now=start + timedelta(minutes=number))
    return list(Notification.objects.filter(recipient=user).order_by("created_at").values_list("pk", flat=True))


def reported_against(reporter, answerer, ladder) -> Match:
    """``reporter`` reports a win over ``answerer``, who is told a result awaits their answer."""
    return match_report(
        ladder=ladder,
        reporter=reporter,
        sides=[SideInput([reporter], 1), SideInput([answerer], 2)],
        played_at=timezone.now() - timedelta(hours=1),
    )


def header(response) -> str:
    """The header's counts as a reader (or a screen reader) hears them."""
    found = re.search(
        r'<span class="header-counts" id="header-counts".*?</span>\s*$', response.content.decode(), re.S | re.M
    )
    assert found, response.content.decode()[:2000]
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", found[0])).split())


def shown_ids(response) -> list[int]:
    return [notification.pk for notification, _ in response.context["items"]]


def test_the_list_is_newest_first_25_a_page(player_client, player):
    ids = tell(player, PAGE_SIZE + 5)

    first = player_client.get(LIST)
    second = player_client.get(LIST, {"page": 2})

    assert first.status_code == second.status_code == 200
    assert shown_ids(first) == ids[::-1][:25]
    assert shown_ids(second) == ids[::-1][25:]
    assert "Page 1 of 2" in first.content.decode()
    assert player_client.get(LIST, {"page": "nonsense"}).status_code == 200  # the first page, not a 500


def test_the_list_shows_the_words_and_marks_unread_ones_new(player_client, player, opponent, ladder):
    reported_against(opponent, player, ladder)
    [notification] = Notification.objects.filter(recipient=player)

    page = player_client.get(LIST).content.decode()

    assert "A result awaits your answer" in page
    assert "bob reported a loss for you in Chess" in page
    assert f'href="/notifications/{notification.pk}/open/"' in page
    assert ">New<" in page and "Mark all read" in page


def test_an_empty_list_says_what_will_show_there(player_client):
    page = player_client.get(LIST).content.decode()

    assert "Nothing yet" in page and "Mark all read" not in page


def test_opening_one_marks_it_read_and_goes_to_its_match(player_client, player, opponent, ladder):
    match = reported_against(opponent, player, ladder)
    notification = Notification.objects.get(recipient=player, kind=Kind.RESULT_AWAITING)

    response = player_client.get(f"/notifications/{notification.pk}/open/")

    assert response.status_code == 302
    assert response["Location"] == reverse("ladder:match", args=[match.pk])
    notification.refresh_from_db()
    assert notification.read_at is not None


def test_mark_all_read(player_client, player, outsider):
    tell(player, 3)
    tell(outsider, 2)

    response = player_client.post(READ, {"all": "1"}, follow=True)

    assert response.redirect_chain == [(LIST, 302)]
    assert "Marked 3 notifications read." in response.content.decode()
    assert not Notification.objects.filter(recipient=player, read_at__isnull=True).exists()
    assert Notification.objects.filter(recipient=outsider, read_at__isnull=True).count() == 2


def test_mark_one_read_and_go_back_to_the_same_page(player_client, player):
    first, second = tell(player, 2)

    response = player_client.post(READ, {"id": first, "next": "/notifications/?page=1"})

    assert response.status_code == 302 and response["Location"] == "/notifications/?page=1"
    unread = set(Notification.objects.filter(read_at__isnull=True).values_list("pk", flat=True))
    assert unread == {second}


def test_mark_read_without_an_id_says_so(player_client, player):
    tell(player, 1)

    response = player_client.post(READ, {"id": "twelve"}, follow=True)

    assert response.status_code == 200
    assert "Choose a notification to mark read." in response.content.decode()
    assert Notification.objects.filter(read_at__isnull=True).count() == 1


def test_someone_elses_notification_is_not_found_and_not_marked(outsider_client, player):
    [theirs] = tell(player, 1)

    assert outsider_client.get(f"/notifications/{theirs}/open/").status_code == 404
    assert outsider_client.post(READ, {"id": theirs}).status_code == 302

    assert Notification.objects.get(pk=theirs).read_at is None


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/notifications/", "http://evil.example"])
def test_next_refuses_another_host(player_client, player, target):
    [mine] = tell(player, 1)

    response = player_client.post(READ, {"id": mine, "next": target})

    assert response.status_code == 302 and response["Location"] == LIST


@pytest.mark.parametrize("target", ["foo", "notifications:list", "list/", "javascript:alert(1)", "/\\evil.example/"])
def test_next_that_is_not_a_path_on_the_site_is_ignored(player_client, player, target):
    [mine] = tell(player, 1)

    response = player_client.post(READ, {"id": mine, "next": target})

    assert response.status_code == 302 and response["Location"] == LIST
    assert Notification.objects.get(pk=mine).read_at is not None


def test_signed_out_visitors_are_sent_to_log_in(client, player):
    [theirs] = tell(player, 1)

    for response in (client.get(LIST), client.get(f"/notifications/{theirs}/open/"), client.post(READ, {"all": "1"})):
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/?next=/notifications/")
    assert Notification.objects.get(pk=theirs).read_at is None
    assert client.get(f"/notifications/{theirs}/read/").status_code == 404  # no such address


def test_read_is_post_only(player_client):
    assert player_client.get(READ).status_code == 405


def test_the_header_shows_what_waits_and_how_many_are_unread(
    player_client, player, opponent, ladder, django_capture_on_commit_callbacks
):
    before = header(player_client.get("/"))
    with django_capture_on_commit_callbacks(execute=True):
        reported_against(opponent, player, ladder)
        tell(player, 2)

    after = header(player_client.get("/"))

    assert before == "To confirm Notifications"
    assert after == "To confirm 1 waiting Notifications 3 unread"


def test_the_bell_counts_a_new_notification_once_it_is_committed(
    player_client, player, django_capture_on_commit_callbacks
):
    assert header(player_client.get(BELL)) == "To confirm Notifications"  # cached now
    # Written behind the services' back, the cached count does not move: the page reads the cache.
    Notification.objects.create(recipient=player, kind=Kind.PAIRED, key="match:0", created_at=timezone.now())
    assert header(player_client.get(BELL)) == "To confirm Notifications"

    with django_capture_on_commit_callbacks(execute=True):
        tell(player, 1)

    assert header(player_client.get(BELL)) == "To confirm Notifications 2 unread"


def test_reading_and_answering_lower_the_counts(
    player_client, player, opponent, ladder, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        match = reported_against(opponent, player, ladder)
    assert header(player_client.get(BELL)) == "To confirm 1 waiting Notifications 1 unread"

    with django_capture_on_commit_callbacks(execute=True):
        player_client.post(READ, {"all": "1"})
    assert header(player_client.get(BELL)) == "To confirm 1 waiting Notifications"

    with django_capture_on_commit_callbacks(execute=True):
        match_confirm(match=match, user=player)
    # Confirming rated the match: nothing waits, and "Match rated" is new.
    assert header(player_client.get(BELL)) == "To confirm Notifications 1 unread"


def test_the_bell_costs_no_query_when_the_counts_are_cached(player_client, player, django_assert_num_queries):
    tell(player, 4)
    first = player_client.get(BELL)  # reads the counts and caches them

    with django_assert_num_queries(0):
        again = player_client.get(BELL)

    assert first.status_code == again.status_code == 200
    assert header(again) == header(first) == "To confirm Notifications 4 unread"
    assert "no-cache" in again["Cache-Control"]


def test_the_bell_stops_polling_for_a_signed_out_client(client, player):
    assert client.get(BELL).status_code == 286

    client.force_login(player)
    assert client.get(BELL).status_code == 200
    client.post("/accounts/logout/")
    response = client.get(BELL)

    assert response.status_code == 286 and response.content == b""


def test_a_moderators_decision_shows_the_reason_once(player_client, player, opponent, ladder, moderator):
    from ladder.matches.decisions import match_void

    match = reported_against(opponent, player, ladder)
    match_void(match=match, moderator=moderator, reason="The game never finished.")

    page = player_client.get(LIST).content.decode()

    assert "A moderator voided the match" in page
    assert "In Chess, a moderator voided the match. Reason: The game never finished.</p>" in page
