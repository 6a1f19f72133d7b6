"""Parties: players who search together and always play on one team (docs/rules.md §13).

The leader invites members of the ladder by username; each invitation is answered (accepted
or declined) within ``PARTY_INVITE_TTL`` or it expires. A party is never larger than the
largest team of the ladder's queue formats, so it can always be placed on one side. A
player is in at most one party per ladder (a constraint in the database). While the party
searches its members cannot change: leaving the party ends its search. When the leader
leaves, the party ends; when the last other member leaves, the leader is alone again and
searches alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import User
from ladder.models import Ladder
from matchmaking import store
from matchmaking.models import Block, EntryStatus, Party, PartyMember, PartyStatus, QueueEntry
from notifications.models import Kind
from notifications.services import notify
from ratings.models import PlayerRating

PARTY_INVITE_TTL = timedelta(minutes=10)

NO_TEAM_FORMATS = "%(ladder)s's queue has no team formats, so there are no parties in it."
NO_SUCH_PLAYER = "There is no player called “%(username)s”."
NOT_MEMBER = "%(username)s is not a member of %(ladder)s."
SELF_INVITE = "You are already in your own party."
BLOCKED = "You cannot invite %(username)s."
IN_A_PARTY = "%(username)s is already in a party in %(ladder)s."
ALREADY_INVITED = "%(username)s is already invited."
TOO_LARGE = "A party in %(ladder)s has at most %(most)d players (its largest team); yours would have %(size)d."
NOT_LEADER = "Only the party's leader, %(leader)s, invites players."
SEARCHING = "Your party is searching: stop the search before changing the party."
LEADER_SEARCHING = "%(leader)s is searching for a match alone: accept when their search ends."
SEARCHING_ALONE = "You are searching for a match: stop your search before joining a party."
NO_INVITATION = "This invitation is not open any more: it was answered, withdrawn or has expired."
NOT_IN_PARTY = "You are not in a party in %(ladder)s."
YOUR_PARTY_ELSEWHERE = "You are in another party in %(ladder)s: leave it before joining this one."


@dataclass(frozen=True, slots=True)
class PartyView:
    """A party as its members see it: who is in, who is invited and until when."""

    party: Party
    members: list[PartyMember]  # accepted, leader first
    invited: list[PartyMember]  # invitations still open
    answered: list[tuple[PartyMember, str]]  # recent invitations that closed, and how: declined, expired, left

    @property
    def size(self) -> int:
        return len(self.members)

    def is_leader(self, player: User) -> bool:
        return self.party.leader_id == player.pk


def largest_party(ladder: Ladder) -> int:
    """The most players a party may have: the largest team of the ladder's team formats (1: no parties)."""
    sizes = [f.largest_team(uneven=ladder.allow_uneven_teams) for f in ladder.queue_format_list]
    return max(sizes, default=1)


def _open_invitations(now: datetime) -> Q:
    return Q(status=PartyStatus.INVITED, invited_at__gt=now - PARTY_INVITE_TTL)


def current_party(*, ladder: Ladder, player: User) -> Party | None:
    """The party the player is in (accepted) in the ladder, if any.

    Every search asks it first, so on PostgreSQL it is one statement prepared on the
    connection (``store.current_party``).
    """
    return store.current_party(ladder=ladder, player=player)


def party_view(party: Party, now: datetime | None = None) -> PartyView:
    """The party's members and open invitations, and what became of the invitations of the last
    ``PARTY_INVITE_TTL`` that closed (declined, expired, or a member who left), so the leader sees it."""
    now = now or timezone.now()
    recent = now - 2 * PARTY_INVITE_TTL
    rows = list(
        PartyMember.objects.filter(
            Q(status=PartyStatus.ACCEPTED) | Q(invited_at__gt=recent) | Q(answered_at__gt=recent), party=party
        )
        .select_related("player")
        .order_by("invited_at", "pk")
    )
    members = [row for row in rows if row.status == PartyStatus.ACCEPTED]
    members.sort(key=lambda row: row.player_id != party.leader_id)
    invited, answered = [], []
    for row in rows:
        if row.status == PartyStatus.INVITED and row.invited_at > now - PARTY_INVITE_TTL:
            invited.append(row)
        elif row.status == PartyStatus.INVITED:
            answered.append((row, PartyStatus.EXPIRED.label.lower()))
        elif row.status != PartyStatus.ACCEPTED and row.player_id != party.leader_id:
            answered.append((row, PartyStatus(row.status).label.lower()))
    return PartyView(party, members, invited, answered)


def invitations_for(*, ladder: Ladder, player: User, now: datetime | None = None) -> list[PartyMember]:
    """The player's open invitations in the ladder, newest first, with their parties' leaders."""
    now = now or timezone.now()
    return list(
        PartyMember.objects.filter(_open_invitations(now), ladder=ladder, player=player)
        .select_related("party__leader")
        .order_by("-invited_at")
    )


def _searching(party: Party) -> bool:
    return QueueEntry.objects.filter(party=party, status=EntryStatus.WAITING).exists()


def _blocked(members: list[int], invitee: int) -> bool:
    """Whether the invitee blocked any member of the party, or any member blocked them."""
    return Block.objects.filter(
        Q(blocker_id__in=members, blocked_id=invitee) | Q(blocker_id=invitee, blocked_id__in=members)
    ).exists()


def _searching_alone(ladder: Ladder, player: User | int) -> bool:
    return QueueEntry.objects.filter(ladder=ladder, player=player, status=EntryStatus.WAITING).exists()


def party_invite(*, ladder: Ladder, leader: User, username: str, now: datetime | None = None) -> PartyMember:
    """Invite ``username`` to the leader's party in ``ladder`` (made now if the leader has none)."""
    now = now or timezone.now()
    params: dict[str, object] = {"ladder": ladder.name, "username": username}
    most = largest_party(ladder)
    if most < 2:
        raise ValidationError(NO_TEAM_FORMATS, code="no_team_formats", params=params)
    invitee = User.objects.filter(username__iexact=username.strip(), is_active=True).first()
    if invitee is None:
        raise ValidationError(NO_SUCH_PLAYER, code="no_such_player", params=params)
    params["username"] = invitee.username
    if invitee.pk == leader.pk:
        raise ValidationError(SELF_INVITE, code="self_invite")
    if not PlayerRating.objects.filter(ladder=ladder, player=invitee, is_active=True).exists():
        raise ValidationError(NOT_MEMBER, code="not_member", params=params)
    with transaction.atomic():
        party = _leaders_party(ladder, leader, now)
        if _searching(party) or _searching_alone(ladder, leader):
            raise ValidationError(SEARCHING, code="party_searching")
        view = party_view(party, now)
        if _blocked([row.player_id for row in view.members] or [leader.pk], invitee.pk):
            raise ValidationError(BLOCKED, code="blocked", params=params)
        if any(row.player_id == invitee.pk for row in view.members):
            raise ValidationError(IN_A_PARTY, code="in_a_party", params=params)
        if any(row.player_id == invitee.pk for row in view.invited):
            raise ValidationError(ALREADY_INVITED, code="already_invited", params=params)
        if PartyMember.objects.filter(ladder=ladder, player=invitee, status=PartyStatus.ACCEPTED).exists():
            raise ValidationError(IN_A_PARTY, code="in_a_party", params=params)
        size = view.size + len(view.invited) + 1
        if size > most:
            raise ValidationError(TOO_LARGE, code="party_too_large", params={**params, "most": most, "size": size})
        place, _ = PartyMember.objects.update_or_create(
            party=party,
            player=invitee,
            defaults={"ladder": ladder, "status": PartyStatus.INVITED, "invited_at": now, "answered_at": None},
        )
        notify(
            Kind.PARTY_INVITED,
            [invitee.pk],
            key=f"party:{party.pk}:{now.timestamp():.0f}",
            ladder_id=ladder.pk,
            data={
                "ladder": ladder.name,
                "ladder_slug": ladder.slug,
                "by": leader.username,
                "deadline": (now + PARTY_INVITE_TTL).isoformat(),
            },
            now=now,
        )
    return place


def _leaders_party(ladder: Ladder, leader: User, now: datetime) -> Party:
    """The leader's party, locked; a new one if they are in none; refused if they follow someone else's."""
    party = current_party(ladder=ladder, player=leader)
    if party is None:
        party = Party.objects.create(ladder=ladder, leader=leader, created_at=now)
        try:
            with transaction.atomic():
                PartyMember.objects.create(
                    party=party, ladder=ladder, player=leader, status=PartyStatus.ACCEPTED, invited_at=now
                )
        except IntegrityError:  # a party of theirs was made meanwhile
            raise ValidationError(IN_A_PARTY, code="in_a_party", params={"username": leader.username}) from None
        return party
    party = Party.objects.select_for_update().get(pk=party.pk)
    if party.leader_id != leader.pk:
        raise ValidationError(NOT_LEADER, code="not_leader", params={"leader": party.leader.username})
    return party


def party_answer(*, party: Party, player: User, accept: bool, now: datetime | None = None) -> PartyMember:
    """Accept or decline an open invitation to ``party``."""
    now = now or timezone.now()
    with transaction.atomic():
        Party.objects.select_for_update().filter(pk=party.pk).first()
        place = PartyMember.objects.filter(_open_invitations(now), party=party, player=player).first()
        if place is None or party.ended_at is not None:
            raise ValidationError(NO_INVITATION, code="no_invitation")
        if accept and _searching(party):
            raise ValidationError(SEARCHING, code="party_searching")
        if accept and _searching_alone(party.ladder, player):
            raise ValidationError(SEARCHING_ALONE, code="already_searching")
        if accept and _searching_alone(party.ladder, party.leader_id):
            raise ValidationError(LEADER_SEARCHING, code="party_searching", params={"leader": party.leader.username})
        place.status = PartyStatus.ACCEPTED if accept else PartyStatus.DECLINED
        place.answered_at = now
        try:
            with transaction.atomic():
                place.save(update_fields=["status", "answered_at"])
        except IntegrityError:  # already in another party of this ladder
            raise ValidationError(
                YOUR_PARTY_ELSEWHERE, code="in_a_party", params={"ladder": party.ladder.name}
            ) from None
    return place


def party_leave(*, ladder: Ladder, player: User, now: datetime | None = None) -> Party:
    """Leave the player's party; the leader leaving ends it. Its search, if any, ends too."""
    now = now or timezone.now()
    party = current_party(ladder=ladder, player=player)
    if party is None:
        raise ValidationError(NOT_IN_PARTY, code="not_in_party", params={"ladder": ladder.name})
    with transaction.atomic():
        party = Party.objects.select_for_update().get(pk=party.pk)
        QueueEntry.objects.filter(party=party, status=EntryStatus.WAITING).update(status=EntryStatus.LEFT, ended_at=now)
        ending = party.leader_id == player.pk
        if ending:  # the party ends: its open invitations are withdrawn, everyone leaves it
            PartyMember.objects.filter(party=party, status=PartyStatus.INVITED).update(
                status=PartyStatus.WITHDRAWN, answered_at=now
            )
            leaving = PartyMember.objects.filter(party=party, status=PartyStatus.ACCEPTED)
        else:
            leaving = PartyMember.objects.filter(party=party, status=PartyStatus.ACCEPTED, player=player)
        leaving.update(status=PartyStatus.LEFT, answered_at=now)
        if ending:
            party.ended_at = now
            party.save(update_fields=["ended_at"])
    return party


def party_withdraw(*, party: Party, leader: User, username: str, now: datetime | None = None) -> None:
    """The leader withdraws an open invitation."""
    now = now or timezone.now()
    if party.leader_id != leader.pk:
        raise ValidationError(NOT_LEADER, code="not_leader", params={"leader": party.leader.username})
    withdrawn = PartyMember.objects.filter(
        _open_invitations(now), party=party, player__username__iexact=username
    ).update(status=PartyStatus.WITHDRAWN, answered_at=now)
    if not withdrawn:
        raise ValidationError(NO_INVITATION, code="no_invitation")


def members_of(party: Party) -> list[int]:
    """The party's accepted members, leader first."""
    ids = list(PartyMember.objects.filter(party=party, status=PartyStatus.ACCEPTED).values_list("player_id", flat=True))
    ids.sort(key=lambda pk: pk != party.leader_id)
    return ids


def searching_party(*, ladder: Ladder, player: User) -> tuple[Party | None, list[int]]:
    """The player's party and its accepted members (leader first), or (None, [the player]) when in none."""
    party = current_party(ladder=ladder, player=player)
    if party is None:
        return None, [player.pk]
    return party, members_of(party)
