"""Comments and evidence on a match: who may, the limits, escaping, notifications, the match page's forms."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from ladder.matches import conversation as svc
from ladder.matches import reporting as match_services
from ladder.models import Evidence, Match, MatchComment, MatchSide, MatchStatus, Participant, SideAnswer
from notifications.models import Kind, Notification

pytestmark = pytest.mark.django_db


def pending_match(ladder, winner, loser) -> Match:
    """``winner`` reported a win over ``loser``, written directly: these tests are about what follows."""
    now = timezone.now()
    match = Match.objects.create(
        ladder=ladder, status=MatchStatus.PENDING, played_at=now, reported_by=winner, reported_at=now
    )
    for index, (user, place) in enumerate([(winner, 1), (loser, 2)]):
        answer = SideAnswer.REPORTED if index == 0 else ""
        side = MatchSide.objects.create(match=match, index=index, placement=place, answer=answer)
        Participant.objects.create(match=match, side=side, player=user)
    return match


@pytest.fixture
def match(ladder, player, opponent):
    """alice reported a win over bob; it awaits bob's answer."""
    return pending_match(ladder, player, opponent)


def page(client, match):
    return client.get(reverse("ladder:match", args=[match.pk]))


def post_comment(client, match, body):
    return client.post(reverse("ladder:match_comment", args=[match.pk]), {"body": body})


def post_link(client, match, url):
    return client.post(reverse("ladder:match_evidence", args=[match.pk]), {"url": url})


# Who may --------------------------------------------------------------------------------


def test_players_and_moderators_comment(match, player, opponent, moderator):
    for author in (player, opponent, moderator):
        svc.comment_add(match=match, author=author, body=f"from {author.username}")

    assert [c.author.username for c in MatchComment.objects.order_by("pk")] == ["alice", "bob", "mod"]


def test_outsider_may_not_comment(match, outsider):
    with pytest.raises(ValidationError) as refused:
        svc.comment_add(match=match, author=outsider, body="hello")

    assert refused.value.messages == [svc.MAY_NOT_COMMENT]
    assert not MatchComment.objects.exists()


def test_comment_page_refuses_outsider_with_403_and_keeps_text(client, match, outsider):
    client.force_login(outsider)

    response = post_comment(client, match, "let me in")

    assert response.status_code == 403
    assert svc.MAY_NOT_COMMENT in response.content.decode()
    assert not MatchComment.objects.exists()


def test_comment_page_needs_login(client, match):
    response = post_comment(client, match, "hi")

    assert response.status_code == 302
    assert reverse("accounts:login") in response.url


# The body ---------------------------------------------------------------------------------


def test_comment_of_exactly_2000_characters_is_kept(match, player):
    comment = svc.comment_add(match=match, author=player, body="x" * 2000)

    assert len(comment.body) == 2000


def test_comment_of_2001_characters_is_refused_naming_limit_and_length(match, player):
    with pytest.raises(ValidationError) as refused:
        svc.comment_add(match=match, author=player, body="x" * 2001)

    assert refused.value.messages == ["A comment has at most 2,000 characters; this one has 2,001."]


def test_comment_is_stripped_and_a_blank_one_refused(match, player):
    assert svc.comment_add(match=match, author=player, body="  hi \n").body == "hi"
    with pytest.raises(ValidationError) as refused:
        svc.comment_add(match=match, author=player, body=" \n\t ")

    assert refused.value.messages == [svc.EMPTY_COMMENT]


def test_browser_line_breaks_count_once(match, player):
    """A browser sends CRLF; 1,000 lines of "x" are 1,999 characters as typed, not 2,998."""
    comment = svc.comment_add(match=match, author=player, body="\r\n".join(["x"] * 1000))

    assert len(comment.body) == 1999


def test_too_long_comment_on_page_shows_error_and_keeps_text(client, match, player):
    client.force_login(player)
    body = "my words " * 250  # 2,250 characters, 2,249 stripped

    response = post_comment(client, match, body)

    html = response.content.decode()
    assert response.status_code == 400
    assert "A comment has at most 2,000 characters; this one has 2,249." in html
    assert body.strip() in html  # the text typed is in the textarea again
    assert not MatchComment.objects.exists()


def test_comment_is_escaped_and_keeps_line_breaks(client, match, player):
    client.force_login(player)

    response = post_comment(client, match, "<script>alert(1)</script>\nsecond line")

    assert response.status_code == 302
    html = page(client, match).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;<br>second line" in html
    assert "<script>alert(1)" not in html


# Rate limit -------------------------------------------------------------------------------


def test_eleventh_comment_in_ten_minutes_is_refused_with_when_to_retry(match, player):
    start = timezone.now()
    for minute in range(10):
        svc.comment_add(match=match, author=player, body=f"{minute}", now=start + timedelta(minutes=minute * 0.5))

    with pytest.raises(ValidationError) as refused:
        svc.comment_add(match=match, author=player, body="one more", now=start + timedelta(minutes=5))

    error = refused.value.error_list[0]
    assert error.code == "comment_limit"
    assert error.params["retry_after"] == 300  # the first leaves the window at start + 10 minutes
    assert refused.value.messages == [
        "You wrote 10 comments in the last 10 minutes, the most allowed; you can comment again in 5 minutes."
    ]
    svc.comment_add(match=match, author=player, body="later", now=start + timedelta(minutes=10, seconds=1))


def test_rate_limit_on_page_is_429_with_retry_after(client, match, player):
    now = timezone.now()
    MatchComment.objects.bulk_create(
        [MatchComment(match=match, author=player, body="x", created_at=now) for _ in range(10)]
    )
    client.force_login(player)

    response = post_comment(client, match, "again")

    assert response.status_code == 429
    assert int(response["Retry-After"]) > 500
    assert "you can comment again in 10 minutes" in response.content.decode()


# Notifications ------------------------------------------------------------------------------


def test_comment_notifies_the_other_side_not_the_author(match, player, opponent, moderator):
    comment = svc.comment_add(match=match, author=player, body="gg " * 100)

    told = Notification.objects.filter(kind=Kind.COMMENTED)
    assert [n.recipient_id for n in told] == [opponent.pk]
    note = told.get()
    assert note.key == f"comment:{comment.pk}"
    assert note.match_id == match.pk
    assert note.data["by"] == "alice"
    assert note.data["ladder"] == "Chess"
    assert note.data["excerpt"] == comment.body[:140]


def test_comment_on_disputed_match_also_notifies_moderators(match, player, opponent, moderator):
    match_services.match_dispute(match=match, user=opponent, reason="I won")
    match.refresh_from_db()
    assert match.status == MatchStatus.DISPUTED

    svc.comment_add(match=match, author=opponent, body="see the replay")

    told = set(Notification.objects.filter(kind=Kind.COMMENTED).values_list("recipient_id", flat=True))
    assert told == {player.pk, moderator.pk}


# The page -----------------------------------------------------------------------------------


def test_page_shows_dispute_reason_then_comments_in_order(client, match, player, opponent):
    match_services.match_dispute(match=match, user=opponent, reason="I won that game")
    svc.comment_add(match=match, author=player, body="first reply")
    svc.comment_add(match=match, author=opponent, body="second reply")

    html = page(client, match).content.decode()  # anonymous: the match page is public

    section = html[html.index('id="conversation"') :]
    assert section.index("I won that game") < section.index("first reply") < section.index("second reply")
    assert 'name="body"' not in html  # no form for someone who may not comment


def test_page_form_for_player_has_counter_and_no_maxlength(client, match, player):
    client.force_login(player)

    html = page(client, match).content.decode()

    assert 'data-max="2000"' in html and "maxlength" not in html  # a browser would cut a paste silently
    assert "0 of 2,000 characters" in html
    assert "js/comment-counter.js" in html
    assert 'name="url"' in html


def test_moderator_gets_comment_form_but_no_evidence_form(client, match, moderator):
    client.force_login(moderator)

    html = page(client, match).content.decode()

    assert 'name="body"' in html
    assert 'name="url"' not in html


# Evidence -------------------------------------------------------------------------------------


def test_evidence_input_suggests_no_other_games_site(client, match, player):
    """Every ladder's page had a Pokémon Showdown replay as the example, a Widelands ladder's too."""
    client.force_login(player)

    html = page(client, match).content.decode()

    assert 'id="evidence-url" name="url" type="url" value="" placeholder="https://…"' in html
    assert "pokemonshowdown" not in html


def test_player_adds_evidence_to_own_side(match, opponent):
    link = svc.evidence_add(match=match, user=opponent, url="https://replay.pokemonshowdown.com/gen9ou-1")

    assert link.side.index == 1
    assert link.added_by == opponent


@pytest.mark.parametrize("url", ["javascript:alert(1)", "ftp://example.com/replay.wrf", "replay.wrf", ""])
def test_evidence_refuses_anything_but_http_links(match, player, url):
    with pytest.raises(ValidationError) as refused:
        svc.evidence_add(match=match, user=player, url=url)

    assert refused.value.message_dict == {"url": [svc.BAD_URL]}
    assert not Evidence.objects.exists()


def test_evidence_url_over_500_characters_is_refused(match, player):
    with pytest.raises(ValidationError) as refused:
        svc.evidence_add(match=match, user=player, url="https://example.com/" + "a" * 481)

    assert refused.value.message_dict == {"url": ["A link has at most 500 characters; this one has 501."]}


def test_moderator_and_outsider_may_not_add_evidence(match, moderator, outsider):
    with pytest.raises(ValidationError) as by_moderator:
        svc.evidence_add(match=match, user=moderator, url="https://example.com/a")
    with pytest.raises(ValidationError) as by_outsider:
        svc.evidence_add(match=match, user=outsider, url="https://example.com/a")

    assert by_moderator.value.messages == [svc.MODERATOR_EVIDENCE]
    assert by_outsider.value.messages == [svc.MAY_NOT_ADD_EVIDENCE]


def test_same_link_twice_is_refused(match, player, opponent):
    svc.evidence_add(match=match, user=player, url="https://example.com/a")

    with pytest.raises(ValidationError) as refused:
        svc.evidence_add(match=match, user=opponent, url="https://example.com/a")

    assert refused.value.message_dict == {"url": [svc.DUPLICATE_EVIDENCE]}


def test_eleventh_link_of_a_side_is_refused(match, player):
    for index in range(10):
        svc.evidence_add(match=match, user=player, url=f"https://example.com/{index}")

    with pytest.raises(ValidationError) as refused:
        svc.evidence_add(match=match, user=player, url="https://example.com/10")

    assert refused.value.messages == ["Your side already has 10 links, the most a side can attach."]


def test_evidence_page_lists_link_and_keeps_a_refused_one(client, match, player):
    client.force_login(player)

    assert post_link(client, match, "https://example.com/replay").status_code == 302
    refused = post_link(client, match, "javascript:alert(1)")

    html = refused.content.decode()
    assert refused.status_code == 400
    assert svc.BAD_URL in html
    assert 'value="javascript:alert(1)"' in html
    assert 'href="https://example.com/replay"' in html
    assert 'href="javascript:' not in html


# Admin ------------------------------------------------------------------------------------------


def test_moderator_views_and_deletes_comments_in_admin_but_cannot_edit(client, match, player, moderator):
    comment = svc.comment_add(match=match, author=player, body="rude words")
    svc.evidence_add(match=match, user=player, url="https://example.com/replay")
    client.force_login(moderator)

    assert client.get(reverse("admin:ladder_matchcomment_changelist")).status_code == 200
    assert client.get(reverse("admin:ladder_evidence_changelist")).status_code == 200
    detail = client.get(reverse("admin:ladder_matchcomment_change", args=[comment.pk]))
    assert detail.status_code == 200
    assert 'name="_save"' not in detail.content.decode()
    deleted = client.post(reverse("admin:ladder_matchcomment_delete", args=[comment.pk]), {"post": "yes"})
    assert deleted.status_code == 302
    assert not MatchComment.objects.exists()
