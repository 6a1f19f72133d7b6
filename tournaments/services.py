"""A tournament's life (docs/rules.md, "Tournaments"): registration, check-in, start, rounds, results, the end.

Every function that changes a tournament locks its row first, so two requests (a report
that ends a round and the sweep, two players checking in) change it one after the other.
A round is paired by ``tournament_advance``, which the beat runs every minute and every
tournament page and API read runs too: it reads each open board's ladder match, records
the results that are final, and once every board of the round has one, pairs the next
round or ends the tournament. Each game is a ladder match created as the queue creates
its pairings: the ladder's ready check, play window, no-show claim, report, confirmation
and dispute all apply, and the games are rated like any other game of the ladder.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from accounts.models import User
from accounts.roles import is_moderator
from ladder import formats as ladder_formats
from ladder.matches.decisions import match_correct, match_void
from ladder.models import CancelReason, Confirmation, Ladder, Match, MatchSide, MatchStatus, Participant, PlayerMark
from matchmaking import lifecycle
from matchmaking import store as queue_store
from notifications.models import Kind
from notifications.services import notify
from ratings.engines import RatingState
from ratings.engines.balance import ffa_expected
from ratings.models import PlayerRating, RatingChange
from tournaments import formats
from tournaments.models import (
    Action,
    Board,
    BoardKind,
    Entry,
    EntryMember,
    EntryStatus,
    Format,
    PodSeat,
    RequestedBye,
    Round,
    Status,
    Tournament,
)
from webhooks.models import Event
from webhooks.services import webhook_emit

NOT_OPEN = "Registration for this tournament is closed."
ALREADY_ENTERED = "%(name)s is already entered in this tournament."
TEAM_SIZE = "A team of this tournament has %(size)d players: name %(teammates)d teammates."
NOT_MEMBER = "%(name)s is not a member of this ladder: join it first."
TOO_LOW = "This tournament needs a rating of at least %(limit).0f; %(name)s has %(rating).0f."
TOO_HIGH = (
    "This tournament takes ratings up to %(limit).0f; %(name)s has %(rating).0f (the highest of the last 7 days)."
)
TOO_FEW_GAMES = "This tournament needs %(games)d rated games in this ladder; %(name)s has %(played)d."
NAME_TAKEN = "Another entry is called %(name)s: choose another team name."
NOT_ELIGIBLE = "%(name)s cannot enter tournaments."
CHECK_IN_CLOSED = "Check-in opens %(minutes)d minutes before the start and closes at the start."
NO_CHECK_IN = "This tournament has no check-in: registered entries play."
NOT_YOURS = "You are not a player of this entry."
NOT_ORGANISER = "Only moderators organise tournaments."
ALREADY_WITHDRAWN = "This entry is no longer playing."
NOT_STARTABLE = "Only a tournament whose registration is open can be started."
TOO_FEW = "A tournament needs at least two entries to start; it has %(count)d."
TOO_FEW_FOR_PODS = "A free-for-all tournament needs at least three entries to start; it has %(count)d."
TOO_LARGE_FOR_LADDER = (
    "%(count)d entries cannot be seated in pods of 3 to %(most)d players, the most this ladder takes."
)
PLACEMENTS_NEEDED = "A free-for-all game is decided by its places: one for each of its %(count)d players, 1 the best."
RESULT_NEEDED = "This game is decided by a result: 1 (the first entry wins), 0.5 (a draw) or 0."
TOO_FEW_FOR_GROUPS = "%(groups)d groups need at least %(needed)d entries, two a group; this tournament has %(count)d."
NOT_RUNNING = "This tournament is not running."
NOT_PAUSED = "This tournament is not paused."
REASON_REQUIRED = "Say why: the reason is kept in the tournament's record."
ROUND_HAS_RESULTS = "This round has results already: only a round without any can be paired again."
BOARD_DECIDED = "This game has its result already."
NO_DRAW_IN_ELIMINATION = "An elimination game needs a winner."
FINISHED = "This tournament is over."
BYE_SWISS_ONLY = "Only a Swiss round can be sat out with a bye."
BYE_ROUND = "A bye is for a round not yet paired: round %(first)d to %(last)d."
BYE_TAKEN = "%(name)s has had its bye already: an entry gets one bye at most."
NO_BYE = "%(name)s has no bye to come: a bye is cancelled only before its round is paired."

LATE_JOIN_SHARE = 0.5  # Swiss: entries are taken until half the rounds are paired
PEAK_DAYS = 7


# -- Reading -------------------------------------------------------------------------------------------


def locked(tournament: Tournament) -> Tournament:
    return Tournament.objects.select_for_update().select_related("ladder").get(pk=tournament.pk)


def _act(tournament: Tournament, actor: User | None, action: str, reason: str, now: datetime, **on: object) -> None:
    Action.objects.create(tournament=tournament, actor=actor, action=action, reason=reason[:300], at=now, **on)


def games_of(tournament: Tournament) -> list[formats.Game]:
    """Every finished board as the formats read it."""
    games = []
    finished = Board.objects.filter(tournament=tournament, result__isnull=False).exclude(kind=BoardKind.POD)
    for board in finished.select_related("round"):
        a, b, result = board.a_id, board.b_id, float(board.result if board.result is not None else 0.0)
        if board.kind == BoardKind.FORFEIT and result == 0.0 and b is not None:
            a, b, result = b, a, 1.0  # the formats write a forfeit from its winner's side
        games.append(formats.Game(round=board.round.number, a=a, b=b, result=result, kind=str(board.kind)))
    return games


def pods_of(tournament: Tournament) -> list[formats.Pod]:
    """Every free-for-all pod whose places are in, as the formats read it."""
    places: dict[int, dict[int, float]] = {}
    rounds: dict[int, int] = {}
    for board_id, number, entry_id, place in (
        PodSeat.objects.filter(tournament=tournament, board__result__isnull=False, place__isnull=False)
        .order_by("board_id", "index")
        .values_list("board_id", "board__round__number", "entry_id", "place")
    ):
        places.setdefault(board_id, {})[entry_id] = place or 0.0  # the filter leaves no empty place
        rounds[board_id] = number
    return [formats.Pod(round=rounds[board], places=seated) for board, seated in places.items()]


def members_of(entries: Iterable[Entry]) -> dict[int, list[int]]:
    ids = [entry.pk for entry in entries]
    members: dict[int, list[int]] = {pk: [] for pk in ids}
    for entry_id, player_id in (
        EntryMember.objects.filter(entry_id__in=ids).order_by("id").values_list("entry_id", "player_id")
    ):
        members[entry_id].append(player_id)
    return members


def standings_of(tournament: Tournament) -> list[formats.Standing]:
    """The standings: by points and the tie-breaks; in an elimination (and a groups tournament's
    playoffs) the bracket's places come first (the champion 1, then by the round each went out)."""
    entries = list(tournament.entries.exclude(seed__isnull=True))
    if tournament.is_free_for_all:
        byes = Board.objects.filter(tournament=tournament, kind=BoardKind.BYE).values_list("a_id", flat=True)
        return formats.ffa_standings([entry.pk for entry in entries], pods_of(tournament), tournament.rule, list(byes))
    rows = formats.standings(
        [entry.pk for entry in entries],
        games_of(tournament),
        tournament.rule,
        tournament.tiebreak_list,
        {entry.pk: entry.rating for entry in entries},
    )
    bracket = _bracket_places(tournament, entries)
    if bracket is None:
        return rows
    seeds, places = bracket
    still_in = _reranked([row for row in rows if row.id in seeds and row.id not in places])
    out = sorted((row for row in rows if row.id in places), key=lambda row: places[row.id])
    ranked = still_in + [replace(row, rank=places[row.id]) for row in out]
    others = _reranked([row for row in rows if row.id not in seeds])  # a groups tournament's non-qualifiers
    return ranked + [replace(row, rank=row.rank + len(seeds)) for row in others]


def _reranked(rows: list[formats.Standing]) -> list[formats.Standing]:
    """``rows`` (a standings' tail) ranked from 1 again, equal rows sharing a rank."""
    out: list[formats.Standing] = []
    for index, row in enumerate(rows):
        same = out and (row.points, row.tiebreaks) == (rows[index - 1].points, rows[index - 1].tiebreaks)
        out.append(replace(row, rank=out[-1].rank if same else index + 1))
    return out


def _bracket_places(tournament: Tournament, entries: list[Entry]) -> tuple[set[int], dict[int, int]] | None:
    """The bracket's entrants and the places of those out of it so far (the champion's once won)."""
    if tournament.is_elimination:
        seeds = [entry.pk for entry in sorted(entries, key=lambda entry: entry.seed or 0)]
        first_round = 0
    elif tournament.format == Format.GROUPS and Round.objects.filter(tournament=tournament, stage="playoffs").exists():
        first_round = group_rounds_of(entries)
        seeds = playoff_seeds_of(tournament, entries, [g for g in games_of(tournament) if g.round <= first_round])
    else:
        return None
    if len(seeds) < 2:
        return None
    double = tournament.format == Format.DOUBLE_ELIMINATION
    bracket = formats.double_elimination(seeds) if double else formats.single_elimination(seeds)
    return set(seeds), formats.bracket_placements(bracket, bracket_winners(tournament, first_round))


# -- Registration --------------------------------------------------------------------------------------


def _rating_row(ladder: Ladder, player: User) -> PlayerRating:
    row = PlayerRating.objects.filter(ladder=ladder, player=player, is_active=True).first()
    if row is None:
        raise ValidationError(NOT_MEMBER, code="not_member", params={"name": player.username})
    return row


def _check_conditions(tournament: Tournament, player: User, row: PlayerRating, now: datetime) -> None:
    name = player.username
    if tournament.min_rating is not None and row.rating < tournament.min_rating:
        raise ValidationError(
            TOO_LOW, code="rating_too_low", params={"limit": tournament.min_rating, "name": name, "rating": row.rating}
        )
    if tournament.max_rating is not None:
        peak = (
            RatingChange.objects.filter(
                ladder=tournament.ladder, player=player, created_at__gte=now - timedelta(days=PEAK_DAYS)
            ).aggregate(peak=Max("rating_after"))["peak"]
            or row.rating
        )
        highest = max(peak, row.rating)
        if highest > tournament.max_rating:
            raise ValidationError(
                TOO_HIGH,
                code="rating_too_high",
                params={"limit": tournament.max_rating, "name": name, "rating": highest},
            )
    if row.games < tournament.min_games:
        raise ValidationError(
            TOO_FEW_GAMES,
            code="too_few_games",
            params={"games": tournament.min_games, "name": name, "played": row.games},
        )


def _refuse_marked(players: Sequence[User]) -> None:
    """A marked account (docs/rules.md §15, "Marks") enters no tournament; the refusal does not say why."""
    marked = PlayerMark.objects.in_force().filter(player__in=players).select_related("player").first()
    if marked is not None:
        raise ValidationError(NOT_ELIGIBLE, code="not_eligible", params={"name": marked.player.username})


def late_join_open(tournament: Tournament) -> bool:
    """Swiss takes late entries until half its rounds are paired (they score the rounds missed as absences)."""
    return (
        tournament.status == Status.RUNNING
        and tournament.format == Format.SWISS
        and tournament.current_round < max(1, int(tournament.rounds * LATE_JOIN_SHARE) + 1)
    )


def registration_open(tournament: Tournament, now: datetime) -> bool:
    if tournament.status == Status.REGISTRATION:
        return now < tournament.registration_closes_at
    return late_join_open(tournament)


def entry_register(
    *,
    tournament: Tournament,
    captain: User,
    teammates: Sequence[User] = (),
    name: str = "",
    now: datetime | None = None,
) -> Entry:
    """Enter ``captain`` (and their teammates, a team registering together) if the tournament takes them."""
    now = now or timezone.now()
    with transaction.atomic():
        tournament = locked(tournament)
        if not registration_open(tournament, now):
            raise ValidationError(NOT_OPEN, code="registration_closed")
        players = [captain, *teammates]
        if len(players) != tournament.team_size or len({p.pk for p in players}) != len(players):
            raise ValidationError(
                TEAM_SIZE,
                code="team_size",
                params={"size": tournament.team_size, "teammates": tournament.team_size - 1},
            )
        rows = []
        _refuse_marked(players)
        for player in players:
            row = _rating_row(tournament.ladder, player)
            _check_conditions(tournament, player, row, now)
            if EntryMember.objects.filter(tournament=tournament, player=player).exists():
                raise ValidationError(ALREADY_ENTERED, code="already_entered", params={"name": player.username})
            rows.append(row)
        entry_name = (name.strip() if tournament.team_size > 1 else "") or captain.username
        late = tournament.status == Status.RUNNING
        try:
            with transaction.atomic():
                entry = Entry.objects.create(
                    tournament=tournament,
                    name=entry_name[:80],
                    captain=captain,
                    rating=sum(row.rating for row in rows) / len(rows),
                    registered_at=now,
                    status=EntryStatus.PLAYING if late else EntryStatus.REGISTERED,
                    joined_round=tournament.current_round + 1 if late else 1,
                    seed=_next_seed(tournament) if late else None,
                )
                EntryMember.objects.bulk_create(
                    [EntryMember(entry=entry, tournament=tournament, player=player) for player in players]
                )
        except IntegrityError as error:
            raise ValidationError(NAME_TAKEN, code="name_taken", params={"name": entry_name}) from error
        _tell(tournament, [p.pk for p in players], "registered", now, entry=entry.name)
        return entry


def _next_seed(tournament: Tournament) -> int:
    highest = tournament.entries.aggregate(top=Max("seed"))["top"]
    return (highest or 0) + 1


def entry_of(tournament: Tournament, player: User) -> Entry | None:
    """``player``'s entry in ``tournament``, if they have one."""
    return Entry.objects.filter(tournament=tournament, members__player=player).first()


def check_in_opens_at(tournament: Tournament) -> datetime:
    return tournament.starts_at - timedelta(minutes=tournament.check_in_minutes)


def entry_check_in(*, entry: Entry, player: User, now: datetime | None = None) -> Entry:
    now = now or timezone.now()
    with transaction.atomic():
        tournament = locked(entry.tournament)
        entry = Entry.objects.select_for_update().get(pk=entry.pk)
        if not EntryMember.objects.filter(entry=entry, player=player).exists():
            raise ValidationError(NOT_YOURS, code="not_yours")
        if not tournament.check_in_minutes:
            raise ValidationError(NO_CHECK_IN, code="no_check_in")
        if tournament.status != Status.REGISTRATION or not check_in_opens_at(tournament) <= now:
            raise ValidationError(
                CHECK_IN_CLOSED, code="check_in_closed", params={"minutes": tournament.check_in_minutes}
            )
        if entry.status == EntryStatus.REGISTERED:
            entry.status, entry.checked_in_at = EntryStatus.CHECKED_IN, now
            entry.save(update_fields=["status", "checked_in_at"])
        return entry


def entry_withdraw(*, entry: Entry, by: User, reason: str = "", now: datetime | None = None) -> Entry:
    """A player withdraws their entry, or an organiser withdraws it with a reason.

    In a running tournament an open game of the entry is lost by forfeit: its match is voided
    (it is not played) and the opponent scores the win. Elimination games already decided stand.
    """
    now = now or timezone.now()
    organiser = is_moderator(by)
    with transaction.atomic():
        tournament = locked(entry.tournament)
        entry = Entry.objects.select_for_update().get(pk=entry.pk)
        own = EntryMember.objects.filter(entry=entry, player=by).exists()
        if not own and not organiser:
            raise ValidationError(NOT_YOURS, code="not_yours")
        if not own and not reason.strip():
            raise ValidationError(REASON_REQUIRED, code="reason_required")
        if not entry.is_active:
            raise ValidationError(ALREADY_WITHDRAWN, code="entry_withdrawn")
        if tournament.status in (Status.FINISHED, Status.CANCELLED):
            raise ValidationError(FINISHED, code="tournament_over")
        why = reason.strip() or "withdrew"
        _withdraw(tournament, entry, by, why, now)
        if not own:
            _act(tournament, by, "withdraw", why, now, entry=entry)
        return entry


def _withdraw(tournament: Tournament, entry: Entry, by: User | None, reason: str, now: datetime) -> None:
    entry.status, entry.withdrawn_at, entry.withdrawn_reason = EntryStatus.WITHDRAWN, now, reason[:300]
    entry.save(update_fields=["status", "withdrawn_at", "withdrawn_reason"])
    open_games = Board.objects.filter(Q(a=entry) | Q(b=entry), tournament=tournament, result__isnull=True)
    for board in open_games.exclude(kind=BoardKind.POD):  # a pod goes on: its match places everyone
        _forfeit_board(board, loser=entry.pk, by=by, reason=reason, now=now)
    members = [m for ms in members_of([entry]).values() for m in ms]
    _tell(tournament, members, "withdrawn", now, reason=reason)


def _forfeit_board(board: Board, *, loser: int, by: User | None, reason: str, now: datetime) -> None:
    """``loser`` does not play ``board``: the other entry wins by forfeit; an unplayed match is voided."""
    match = board.match
    if match is not None and match.status in (MatchStatus.READY_CHECK, MatchStatus.SCHEDULED, MatchStatus.CLAIMED):
        match_void(match=match, moderator=by or board.a.captain, reason=f"Tournament: {reason}", now=now)
    board.result = 0.0 if board.a_id == loser else 1.0
    board.kind = BoardKind.FORFEIT
    board.finished_at = now
    board.decision_reason = reason[:300]
    board.save(update_fields=["result", "kind", "finished_at", "decision_reason"])
    _emit_result(board.tournament, board, now)


def entry_bye(*, entry: Entry, round: int, by: User, reason: str = "", now: datetime | None = None) -> RequestedBye:
    """Entry sits out Swiss round ``round``, not yet paired, with a bye worth a draw.

    A player of the entry asks for it; an organiser gives it with a reason (kept in the
    record). An entry has one bye at most: none once it had the pairing's bye or a requested one.
    """
    now = now or timezone.now()
    organiser = is_moderator(by)
    with transaction.atomic():
        tournament = locked(entry.tournament)
        entry = Entry.objects.select_for_update().get(pk=entry.pk)
        own = EntryMember.objects.filter(entry=entry, player=by).exists()
        if not own and not organiser:
            raise ValidationError(NOT_YOURS, code="not_yours")
        if not own and not reason.strip():
            raise ValidationError(REASON_REQUIRED, code="reason_required")
        if tournament.format != Format.SWISS:
            raise ValidationError(BYE_SWISS_ONLY, code="not_swiss")
        if tournament.status in (Status.FINISHED, Status.CANCELLED):
            raise ValidationError(FINISHED, code="tournament_over")
        if not entry.is_active:
            raise ValidationError(ALREADY_WITHDRAWN, code="entry_withdrawn")
        first = max(tournament.current_round + 1, entry.joined_round)
        if not first <= round <= tournament.rounds:
            raise ValidationError(
                BYE_ROUND, code="bye_round", params={"first": first, "last": max(first, tournament.rounds)}
            )
        if (
            RequestedBye.objects.filter(entry=entry).exists()
            or Board.objects.filter(a=entry, kind__in=[BoardKind.BYE, BoardKind.REQUESTED]).exists()
        ):
            raise ValidationError(BYE_TAKEN, code="bye_taken", params={"name": entry.name})
        why = reason.strip()
        bye = RequestedBye.objects.create(
            tournament=tournament, entry=entry, round=round, given_by=by, reason=why[:300], at=now
        )
        if not own:
            _act(tournament, by, "bye", f"round {round}: {why}", now, entry=entry)
        return bye


def bye_cancel(*, entry: Entry, by: User, reason: str = "", now: datetime | None = None) -> None:
    """The entry plays the round after all: its requested bye, not yet used, is cancelled.

    A player of the entry cancels it; an organiser does so with a reason (kept in the record).
    """
    now = now or timezone.now()
    organiser = is_moderator(by)
    with transaction.atomic():
        tournament = locked(entry.tournament)
        own = EntryMember.objects.filter(entry=entry, player=by).exists()
        if not own and not organiser:
            raise ValidationError(NOT_YOURS, code="not_yours")
        if not own and not reason.strip():
            raise ValidationError(REASON_REQUIRED, code="reason_required")
        bye = RequestedBye.objects.filter(entry=entry, round__gt=tournament.current_round).first()
        if bye is None or tournament.status in (Status.FINISHED, Status.CANCELLED):
            raise ValidationError(NO_BYE, code="no_bye", params={"name": entry.name})
        bye.delete()
        if not own:
            _act(tournament, by, "unbye", f"round {bye.round}: {reason.strip()}", now, entry=entry)


# -- Organising ----------------------------------------------------------------------------------------


def _organiser(user: User) -> None:
    if not is_moderator(user):
        raise ValidationError(NOT_ORGANISER, code="not_organiser")


def _reason(reason: str) -> str:
    if not reason.strip():
        raise ValidationError(REASON_REQUIRED, code="reason_required")
    return reason.strip()


def tournament_create(*, ladder: Ladder, by: User, now: datetime | None = None, **fields: object) -> Tournament:
    _organiser(by)
    now = now or timezone.now()
    tournament = Tournament(ladder=ladder, created_by=by, **fields)
    tournament.full_clean()
    unknown = [code for code in tournament.tiebreak_list if code not in formats.TIEBREAKS]
    if unknown:
        raise ValidationError(
            {"tiebreaks": f"Unknown tie-break {unknown[0]}: choose from {', '.join(formats.TIEBREAKS)}."}
        )
    with transaction.atomic():
        tournament.save()
        _act(tournament, by, "create", "created", now)
    return tournament


def tournament_start(*, tournament: Tournament, by: User | None = None, now: datetime | None = None) -> Tournament:
    """Seed the entries by rating and pair the first round; entries that did not check in do not play."""
    now = now or timezone.now()
    if by is not None:
        _organiser(by)
    with transaction.atomic():
        tournament = locked(tournament)
        if tournament.status != Status.REGISTRATION:
            raise ValidationError(NOT_STARTABLE, code="not_startable")
        entries = list(tournament.entries.filter(status__in=[EntryStatus.REGISTERED, EntryStatus.CHECKED_IN]))
        if tournament.check_in_minutes:
            for entry in entries:
                if entry.status == EntryStatus.REGISTERED:
                    _withdraw(tournament, entry, None, "did not check in", now)
            entries = [entry for entry in entries if entry.status == EntryStatus.CHECKED_IN]
        if len(entries) < 2:
            raise ValidationError(TOO_FEW, code="too_few_entries", params={"count": len(entries)})
        if tournament.is_free_for_all and len(entries) < 3:
            raise ValidationError(TOO_FEW_FOR_PODS, code="too_few_entries", params={"count": len(entries)})
        if tournament.format == Format.GROUPS and len(entries) < 2 * tournament.groups:
            raise ValidationError(
                TOO_FEW_FOR_GROUPS,
                code="too_few_entries",
                params={"count": len(entries), "groups": tournament.groups, "needed": 2 * tournament.groups},
            )
        ratings = _current_ratings(tournament.ladder, entries)
        entries.sort(key=lambda entry: (-ratings[entry.pk], entry.registered_at, entry.pk))
        groups: dict[int, int] = {}
        if tournament.format == Format.GROUPS:
            for index, group in enumerate(formats.snake_groups([e.pk for e in entries], tournament.groups)):
                groups.update({pk: index + 1 for pk in group})
        for seed, entry in enumerate(entries, start=1):
            entry.rating, entry.seed, entry.status = ratings[entry.pk], seed, EntryStatus.PLAYING
            entry.group = groups.get(entry.pk)
        Entry.objects.bulk_update(entries, ["rating", "seed", "status", "group"])
        tournament.status, tournament.started_at = Status.RUNNING, now
        tournament.save(update_fields=["status", "started_at"])
        if by is not None:
            _act(tournament, by, "start", "started", now)
        _pair_next(tournament, now)
        return tournament


def _current_ratings(ladder: Ladder, entries: Sequence[Entry]) -> dict[int, float]:
    members = members_of(entries)
    rows = dict(
        PlayerRating.objects.filter(
            ladder=ladder, player_id__in=[p for ps in members.values() for p in ps]
        ).values_list("player_id", "rating")
    )
    return {pk: (sum(rows.get(p, 0.0) for p in ps) / len(ps)) if ps else 0.0 for pk, ps in members.items()}


def tournament_pause(*, tournament: Tournament, by: User, reason: str, now: datetime | None = None) -> Tournament:
    _organiser(by)
    now = now or timezone.now()
    with transaction.atomic():
        tournament = locked(tournament)
        if tournament.status != Status.RUNNING:
            raise ValidationError(NOT_RUNNING, code="not_running")
        tournament.status = Status.PAUSED
        tournament.save(update_fields=["status"])
        _act(tournament, by, "pause", _reason(reason), now)
    return tournament


def tournament_resume(*, tournament: Tournament, by: User, reason: str, now: datetime | None = None) -> Tournament:
    _organiser(by)
    now = now or timezone.now()
    with transaction.atomic():
        tournament = locked(tournament)
        if tournament.status != Status.PAUSED:
            raise ValidationError(NOT_PAUSED, code="not_paused")
        tournament.status = Status.RUNNING
        tournament.save(update_fields=["status"])
        _act(tournament, by, "resume", _reason(reason), now)
    return tournament_advance(tournament=tournament, now=now)


def tournament_cancel(*, tournament: Tournament, by: User, reason: str, now: datetime | None = None) -> Tournament:
    """Call the tournament off: its unplayed games are voided; played games keep their ratings."""
    _organiser(by)
    now = now or timezone.now()
    why = _reason(reason)
    with transaction.atomic():
        tournament = locked(tournament)
        if tournament.status in (Status.FINISHED, Status.CANCELLED):
            raise ValidationError(FINISHED, code="tournament_over")
        for board in Board.objects.filter(tournament=tournament, result__isnull=True).select_related("match"):
            match = board.match
            if match is not None and match.status in (
                MatchStatus.READY_CHECK,
                MatchStatus.SCHEDULED,
                MatchStatus.CLAIMED,
            ):
                match_void(match=match, moderator=by, reason=f"Tournament cancelled: {why}", now=now)
        tournament.status, tournament.finished_at = Status.CANCELLED, now
        tournament.save(update_fields=["status", "finished_at"])
        _act(tournament, by, "cancel", why, now)
        players = list(EntryMember.objects.filter(tournament=tournament).values_list("player_id", flat=True))
        _tell(tournament, players, "cancelled", now, reason=why)
    return tournament


def board_decide(
    *,
    board: Board,
    by: User,
    result: float | None = None,
    reason: str,
    placements: Sequence[int] | None = None,
    now: datetime | None = None,
) -> Board:
    """An organiser decides a game: ``result`` is entry a's (1 a wins, 0.5 a draw, 0 b wins); a
    free-for-all pod's ``placements`` are its seats' places in seat order (1 best, ties equal).

    A game with a ladder match gets the result through the moderator's correction of the
    match, which rates it like any decided match.
    """
    _organiser(by)
    now = now or timezone.now()
    why = _reason(reason)
    with transaction.atomic():
        tournament = locked(board.tournament)
        board = Board.objects.select_for_update(of=("self",)).select_related("match", "round").get(pk=board.pk)
        if board.result is not None:
            raise ValidationError(BOARD_DECIDED, code="board_decided")
        if board.kind == BoardKind.POD:
            return _decide_pod(tournament, board, by, placements, why, now)
        if result not in (0.0, 0.5, 1.0) or board.b_id is None:
            raise ValidationError({"result": RESULT_NEEDED})
        if result == 0.5 and (tournament.is_elimination or board.round.stage == "playoffs"):
            raise ValidationError(NO_DRAW_IN_ELIMINATION, code="draw_in_elimination")
        match = board.match
        if match is not None and match.status not in (MatchStatus.CONFIRMED, MatchStatus.VOID):
            placements = [1, 1] if result == 0.5 else [1, 2] if result == 1.0 else [2, 1]
            match_correct(match=match, moderator=by, placements=placements, reason=f"Tournament: {why}", now=now)
        board.result, board.kind, board.finished_at = result, BoardKind.PLAYED, now
        board.decided_by, board.decision_reason = by, why[:300]
        board.save(update_fields=["result", "kind", "finished_at", "decided_by", "decision_reason"])
        _act(tournament, by, "decide", why, now, board=board)
        _emit_result(tournament, board, now)
    return board


def _decide_pod(
    tournament: Tournament, board: Board, by: User, placements: Sequence[int] | None, why: str, now: datetime
) -> Board:
    seats = list(PodSeat.objects.filter(board=board).order_by("index"))
    count = len(seats)
    if (
        placements is None
        or len(placements) != count
        or any(not isinstance(p, int) or isinstance(p, bool) or not 1 <= p <= count for p in placements)
        or min(placements) != 1
    ):
        raise ValidationError({"placements": PLACEMENTS_NEEDED % {"count": count}})
    match = board.match
    if match is not None and match.status not in (MatchStatus.CONFIRMED, MatchStatus.VOID):
        by_side = [0] * count
        for seat, placement in zip(seats, placements, strict=True):
            by_side[seat.index] = placement
        match_correct(match=match, moderator=by, placements=by_side, reason=f"Tournament: {why}", now=now)
    _place_pod(seats, {seat.entry_id: placement for seat, placement in zip(seats, placements, strict=True)})
    board.result, board.finished_at = 1.0, now
    board.decided_by, board.decision_reason = by, why[:300]
    board.save(update_fields=["result", "finished_at", "decided_by", "decision_reason"])
    _act(tournament, by, "decide", why, now, board=board)
    _emit_result(tournament, board, now)
    return board


def _place_pod(seats: Sequence[PodSeat], placements: dict[int, int]) -> None:
    """The pod's seats get their places from the game's placements (ties share places)."""
    places = formats.pod_places(placements)
    for seat in seats:
        seat.place = places[seat.entry_id]
    PodSeat.objects.bulk_update(seats, ["place"])


def round_repair(*, round: Round, by: User, reason: str, now: datetime | None = None) -> Round:
    """Pair a round again (a mistake in the entries, a no-show found before anyone played): its
    unplayed matches are voided and the round paired anew. Only a round without results."""
    _organiser(by)
    now = now or timezone.now()
    why = _reason(reason)
    with transaction.atomic():
        tournament = locked(round.tournament)
        if tournament.status not in (Status.RUNNING, Status.PAUSED):
            raise ValidationError(NOT_RUNNING, code="not_running")
        boards = list(Board.objects.filter(round=round).select_related("match"))
        if round.number != tournament.current_round or any(
            b.result is not None and b.kind == BoardKind.PLAYED for b in boards
        ):
            raise ValidationError(ROUND_HAS_RESULTS, code="round_has_results")
        for board in boards:
            if board.match is not None and board.match.status != MatchStatus.VOID:
                match_void(match=board.match, moderator=by, reason=f"Tournament round paired again: {why}", now=now)
        Board.objects.filter(round=round).delete()
        Round.objects.filter(pk=round.pk).delete()
        tournament.current_round -= 1
        tournament.save(update_fields=["current_round"])
        _act(tournament, by, "repair", why, now)
        _pair_next(tournament, now)
        return Round.objects.get(tournament=tournament, number=tournament.current_round)


# -- Rounds ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pairing:
    pairs: list[tuple[int, int, str]]  # entry a, entry b, bracket key
    byes: list[int]
    absent: list[int]
    stage: str
    walkovers: tuple[tuple[int, int, str], ...] = ()  # winner, withdrawn loser, bracket key: no game
    requested: tuple[int, ...] = ()  # Swiss: entries sitting the round out with a requested bye
    pods: tuple[tuple[int, ...], ...] = ()  # free-for-all: each pod's entries, in seat order


def tournament_advance(*, tournament: Tournament, now: datetime | None = None) -> Tournament:
    """Record the results of the current round's finished games; once all are in, pair the next round or finish.

    Idempotent and cheap when nothing changed: the sweep and every read call it.
    """
    now = now or timezone.now()
    if _waiting_on_play(tournament):
        return Tournament.objects.select_related("ladder").get(pk=tournament.pk)  # as it is, unlocked
    with transaction.atomic():
        tournament = locked(tournament)
        if tournament.status != Status.RUNNING:
            return tournament
        open_boards = list(
            Board.objects.filter(tournament=tournament, result__isnull=True).select_related("match", "a", "b")
        )
        for board in open_boards:
            _settle_board(tournament, board, now)
        if any(board.result is None for board in open_boards):
            return tournament
        Round.objects.filter(tournament=tournament, finished_at__isnull=True).update(finished_at=now)
        _pair_next(tournament, now)
        return tournament


def _waiting_on_play(tournament: Tournament) -> bool:
    """Whether the round has open games and none of their matches is over: then nothing is to be
    recorded or paired, and one query (no lock) says so, for every page read and API poll."""
    counts = Board.objects.filter(tournament=tournament, result__isnull=True).aggregate(
        open=Count("id"), over=Count("id", filter=Q(match__status__in=[MatchStatus.CONFIRMED, MatchStatus.CANCELLED]))
    )
    return counts["open"] > 0 and counts["over"] == 0


def _settle_board(tournament: Tournament, board: Board, now: datetime) -> None:
    """Read the board's match; a final result goes on the board. A missed game withdraws the absent entry."""
    match = board.match
    if match is None or match.status not in (MatchStatus.CONFIRMED, MatchStatus.CANCELLED):
        return  # still to be played, reported, disputed or voided: nothing final to read yet
    if board.kind == BoardKind.POD:
        _settle_pod(tournament, board, match, now)
        return
    sides = {side.index: side for side in MatchSide.objects.filter(match=match)}
    status = match.status
    if status == MatchStatus.CONFIRMED or (
        status == MatchStatus.CANCELLED and match.cancel_reason == CancelReason.FORFEIT
    ):
        a, b = sides[0].placement or 0, sides[1].placement or 0
        result = 1.0 if a < b else 0.5 if a == b else 0.0
        if result == 0.5 and (tournament.is_elimination or board.round.stage == "playoffs"):
            return  # an elimination game needs a winner: an organiser decides
        forfeit = match.confirmation == Confirmation.FORFEIT or match.cancel_reason == CancelReason.FORFEIT
        board.result, board.finished_at = result, now
        board.kind = BoardKind.FORFEIT if forfeit else BoardKind.PLAYED
        board.save(update_fields=["result", "kind", "finished_at"])
        _emit_result(tournament, board, now)
        if forfeit:
            loser = board.b if result == 1.0 else board.a
            if loser is not None and loser.is_active:
                _withdraw(tournament, loser, None, "missed a game", now)
        return
    if status == MatchStatus.CANCELLED and match.cancel_reason == CancelReason.READY_MISSED:
        ready = _ready_sides(match)
        if ready.get(0) != ready.get(1):
            winner_a = bool(ready.get(0))
            board.result, board.kind, board.finished_at = (1.0 if winner_a else 0.0), BoardKind.FORFEIT, now
            board.decision_reason = "not ready in time"
            board.save(update_fields=["result", "kind", "finished_at", "decision_reason"])
            _emit_result(tournament, board, now)
            loser = board.b if winner_a else board.a
            if loser is not None and loser.is_active:
                _withdraw(tournament, loser, None, "missed a game", now)
    # Anything else (a dispute, a cancelled or voided game, a round past its deadline) waits for an organiser.


def _ready_sides(match: Match) -> dict[int, bool]:
    """Whether every player of each side pressed Ready in the match's ready check, by side index."""
    ready: dict[int, bool] = {}
    for index, ready_at in Participant.objects.filter(side__match=match).values_list("side__index", "ready_at"):
        ready[index] = ready.get(index, True) and ready_at is not None
    return ready


def _settle_pod(tournament: Tournament, board: Board, match: Match, now: datetime) -> None:
    """A pod's places from its confirmed match; from a missed ready check, those ready ahead of
    those not (who share the last places and are withdrawn). Anything else waits for an organiser."""
    seats = list(PodSeat.objects.filter(board=board).order_by("index"))
    sides = {side.index: side for side in MatchSide.objects.filter(match=match)}
    if match.status == MatchStatus.CONFIRMED:
        placements = {seat.entry_id: sides[seat.index].placement or len(seats) for seat in seats}
        missed: list[int] = []
    elif match.cancel_reason == CancelReason.READY_MISSED:
        ready = _ready_sides(match)
        missed = [seat.entry_id for seat in seats if not ready.get(seat.index)]
        if not missed or len(missed) == len(seats):
            return  # nobody, or everybody, missed it: an organiser decides
        placements = {seat.entry_id: (len(seats) - len(missed) + 1 if seat.entry_id in missed else 1) for seat in seats}
    else:
        return
    _place_pod(seats, placements)
    board.result, board.finished_at = 1.0, now
    if missed:
        board.decision_reason = "not ready in time"
    board.save(update_fields=["result", "finished_at", "decision_reason"])
    _emit_result(tournament, board, now)
    entries = {entry.pk: entry for entry in Entry.objects.filter(pk__in=missed)}
    for entry_id in missed:
        if entries[entry_id].is_active:
            _withdraw(tournament, entries[entry_id], None, "missed a game", now)


def _pair_next(tournament: Tournament, now: datetime) -> None:
    pairing = _next_pairing(tournament)
    if pairing is None:
        _finish(tournament, now)
        return
    number = tournament.current_round + 1
    round = Round.objects.create(
        tournament=tournament,
        number=number,
        stage=pairing.stage,
        started_at=now,
        deadline=now + timedelta(minutes=tournament.round_minutes),
    )
    tournament.current_round = number
    tournament.save(update_fields=["current_round"])
    entries = {entry.pk: entry for entry in tournament.entries.all()}
    members = members_of(entries.values())
    players = [player for a, b, _ in pairing.pairs for player in (*members[a], *members[b])]
    players += [player for pod in pairing.pods for entry in pod for player in members[entry]]
    states = {
        row.player_id: row.state()
        for row in PlayerRating.objects.filter(ladder=tournament.ladder, player_id__in=players)
    }
    boards = [
        Board(a_id=a, b_id=b, bracket_key=key, match=_create_match(tournament, [members[a], members[b]], states, now))
        for a, b, key in pairing.pairs
    ]
    boards += [
        Board(a_id=pod[0], kind=BoardKind.POD, match=_create_match(tournament, [members[e] for e in pod], states, now))
        for pod in pairing.pods
    ]
    boards += [Board(a_id=entry, kind=BoardKind.BYE, result=1.0, finished_at=now) for entry in pairing.byes]
    boards += [Board(a_id=entry, kind=BoardKind.REQUESTED, result=0.5, finished_at=now) for entry in pairing.requested]
    boards += [
        Board(
            a_id=winner,
            b_id=loser,
            bracket_key=key,
            kind=BoardKind.FORFEIT,
            result=1.0,
            finished_at=now,
            decision_reason="the opponent withdrew",
        )
        for winner, loser, key in pairing.walkovers
    ]
    boards += [Board(a_id=entry, kind=BoardKind.ABSENT, result=0.5, finished_at=now) for entry in pairing.absent]
    for number, board in enumerate(boards, start=1):
        board.round, board.tournament, board.number = round, tournament, number
    Board.objects.bulk_create(boards)
    pods = iter(pairing.pods)
    seated = {board.pk: list(next(pods)) for board in boards if board.kind == BoardKind.POD}
    PodSeat.objects.bulk_create(
        PodSeat(board_id=board, tournament=tournament, entry_id=entry, index=index)
        for board, pod in seated.items()
        for index, entry in enumerate(pod)
    )
    for board in boards:
        if board.match_id is not None:  # a game to play; byes, absences and walkovers need nobody
            _tell_pairing(tournament, board, entries, members, round, now, seated.get(board.pk, []))
    _emit_paired(tournament, round, boards, entries, now, seated)
    if not pairing.pairs and not pairing.pods:  # a round without games (byes, walkovers): go on at once
        Round.objects.filter(pk=round.pk).update(finished_at=now)
        _pair_next(tournament, now)


def _create_match(
    tournament: Tournament, lineup: list[list[int]], states: dict[int, RatingState], now: datetime
) -> Match:
    """A board's ladder match, created as the queue creates a pairing (``states``: the players' ratings)."""
    ladder = tournament.ladder
    size = tournament.team_size
    engine = ladder.get_engine()
    if len(lineup) > 2:  # a free-for-all pod: each player's mean chance against each other, as the queue's
        kind = ladder_formats.FORMATS[f"ffa{len(lineup)}"]
        known = [states[side[0]] for side in lineup]
        chances = ffa_expected(
            [(state.rating, engine.rd_at(state, now.timestamp())) for state in known], engine.summed_beta
        )
    else:
        kind = ladder_formats.DUEL if size == 1 else ladder_formats.FORMATS[f"{size}v{size}"]
        p = engine.win_probability(
            [states[p] for p in lineup[0] if p in states],
            [states[p] for p in lineup[1] if p in states],
            now.timestamp(),
        )
        p = ladder.shown_chance(p)
        chances = [p, 1.0 - p]
    match = Match(ladder=ladder, played_at=now, paired_by_queue=True, queue_format=kind.code, rated=tournament.rated)
    lifecycle.start(match, ladder, now)
    queue_store.formed_create(
        match,
        [MatchSide(index=index, win_probability=chance) for index, chance in enumerate(chances)],
        [Participant(player_id=player) for side in lineup for player in side],
        [index for index, side in enumerate(lineup) for _ in side],
        [],
        [],
        now,
    )
    return match


def _next_pairing(tournament: Tournament) -> Pairing | None:
    entries = list(tournament.entries.exclude(seed__isnull=True).order_by("seed"))
    active = [entry for entry in entries if entry.is_active]
    number = tournament.current_round + 1
    games = games_of(tournament)
    if tournament.format == Format.SWISS:
        if number > tournament.rounds or len(active) < 2:
            return None
        byes = dict(RequestedBye.objects.filter(tournament=tournament).values_list("entry_id", "round"))
        sitting = tuple(e.pk for e in active if byes.get(e.pk) == number and e.joined_round <= number)
        playing = [e for e in active if e.joined_round <= number and e.pk not in sitting]
        absent = _absences(entries, games, number)
        paired = formats.swiss_pairings(
            [formats.Entrant(e.pk, e.rating) for e in playing],
            games,
            tournament.rule,
            byes_to_come=[pk for pk, later in byes.items() if later > number],
        )
        return Pairing(
            [(a, b, "") for a, b in paired.pairs],
            [paired.bye] if paired.bye else [],
            absent,
            "main",
            requested=sitting,
        )
    if tournament.is_free_for_all:
        if number > tournament.rounds or len(active) < 3:
            return None
        standing = {row.id: row.points for row in standings_of(tournament)} if number > 1 else None
        most = min(formats.MAX_POD, tournament.ladder.max_players or formats.MAX_POD)
        had_bye = set(Board.objects.filter(tournament=tournament, kind=BoardKind.BYE).values_list("a_id", flat=True))
        try:
            pods, left_out = formats.ffa_seating(
                [formats.Entrant(e.pk, e.rating) for e in active],
                max(3, min(tournament.pod_size, most)),
                points=standing,
                most=max(3, most),
                had_bye=had_bye,
            )
        except ValueError:
            raise ValidationError(
                TOO_LARGE_FOR_LADDER, code="too_few_entries", params={"count": len(active), "most": most}
            ) from None
        return Pairing([], left_out, [], "main", pods=tuple(tuple(pod) for pod in pods))
    if tournament.format == Format.ROUND_ROBIN:
        schedule = formats.round_robin_rounds([e.pk for e in entries], double=tournament.double_round_robin)
        return _scheduled(schedule, number, active, "main")
    if tournament.format == Format.GROUPS:
        return _groups_then_playoffs(tournament, entries, active, number, games)
    seeds = [e.pk for e in entries]
    return _elimination(tournament, seeds, "main")


def _absences(entries: Sequence[Entry], games: Sequence[formats.Game], number: int) -> list[int]:
    """Late entries score each round they missed as an absence, recorded with the round they join."""
    absent = []
    for entry in entries:
        if entry.is_active and entry.joined_round == number and number > 1:
            missed = number - 1 - sum(1 for g in games if entry.pk in (g.a, g.b))
            absent.extend([entry.pk] * max(0, missed))
    return absent


def _scheduled(
    schedule: list[list[tuple[int, int | None]]], number: int, active: Sequence[Entry], stage: str
) -> Pairing | None:
    if number > len(schedule):
        return None
    playing = {entry.pk for entry in active}
    pairs, walkovers = [], []
    for a, b in schedule[number - 1]:
        if b is None:
            continue  # sits out this round: no points, as everyone sits out once in an odd field
        if a in playing and b in playing:
            pairs.append((a, b, ""))
        elif a in playing:
            walkovers.append((a, b, ""))  # the opponent withdrew: a wins by forfeit
        elif b in playing:
            walkovers.append((b, a, ""))
    return Pairing(pairs, [], [], stage, tuple(walkovers))


def _group_schedules(entries: Sequence[Entry]) -> dict[int, list[list[tuple[int, int | None]]]]:
    by_group: dict[int, list[int]] = {}
    for entry in entries:
        by_group.setdefault(entry.group or 1, []).append(entry.pk)
    return {group: formats.round_robin_rounds(ids) for group, ids in sorted(by_group.items())}


def group_rounds_of(entries: Sequence[Entry]) -> int:
    schedules = _group_schedules(entries)
    return max((len(s) for s in schedules.values()), default=0)


def playoff_seeds_of(tournament: Tournament, entries: Sequence[Entry], games: Sequence[formats.Game]) -> list[int]:
    """The top ``advance`` of each group (withdrawn entries left out), ordered by ``formats.playoff_seeds``."""
    rounds = group_rounds_of(entries)
    ratings = {entry.pk: entry.rating for entry in entries}
    active = {entry.pk for entry in entries if entry.is_active}
    tables = []
    by_group: dict[int, list[int]] = {}
    for entry in entries:
        by_group.setdefault(entry.group or 1, []).append(entry.pk)
    for _, ids in sorted(by_group.items()):
        members = set(ids)
        played = [g for g in games if g.round <= rounds and g.a in members]
        ranked = formats.standings(ids, played, tournament.rule, tournament.tiebreak_list, ratings)
        tables.append([row.id for row in ranked if row.id in active])
    # A group left with fewer active entries than ``advance`` (withdrawals) sends all it has, and
    # every group then sends that many, so the bracket stays even.
    advance = min(tournament.advance, *(len(table) for table in tables))
    if advance < 1:
        return []
    return formats.playoff_seeds(tables, advance)


def _groups_then_playoffs(
    tournament: Tournament, entries: list[Entry], active: list[Entry], number: int, games: list[formats.Game]
) -> Pairing | None:
    schedules = list(_group_schedules(entries).values())
    rounds = max(len(s) for s in schedules)
    if number <= rounds:
        pairs: list[tuple[int, int, str]] = []
        walkovers: list[tuple[int, int, str]] = []
        for schedule in schedules:
            part = _scheduled(schedule, number, active, "groups") if number <= len(schedule) else None
            if part is not None:
                pairs += part.pairs
                walkovers += part.walkovers
        return Pairing(pairs, [], [], "groups", tuple(walkovers))
    seeds = playoff_seeds_of(tournament, entries, games)
    return _elimination(tournament, seeds, "playoffs", first_round=rounds)


def _elimination(tournament: Tournament, seeds: list[int], stage: str, first_round: int = 0) -> Pairing | None:
    if len(seeds) < 2:
        return None
    double = tournament.format == Format.DOUBLE_ELIMINATION
    bracket = formats.double_elimination(seeds) if double else formats.single_elimination(seeds)
    winners = bracket_winners(tournament, first_round)
    boarded = set(
        Board.objects.filter(tournament=tournament, round__number__gt=first_round)
        .exclude(bracket_key="")
        .values_list("bracket_key", flat=True)
    )
    playable = [key for key in formats.playable_games(bracket, winners) if key not in boarded]
    if not playable:
        return None
    progress = formats.bracket_progress(bracket, winners)
    active = {entry.pk for entry in tournament.entries.all() if entry.is_active}
    pairs, walkovers = [], []
    for key in playable:
        a, b = progress[key]
        assert a is not None and b is not None
        if a in active and b in active:
            pairs.append((a, b, key))
        elif b in active or a not in active:
            walkovers.append((b, a, key))  # a withdrew (or both did: b goes through, on paper)
        else:
            walkovers.append((a, b, key))
    return Pairing(pairs, [], [], stage, tuple(walkovers))


def bracket_winners(tournament: Tournament, after_round: int = 0) -> dict[str, int]:
    winners = {}
    for board in Board.objects.filter(
        tournament=tournament, round__number__gt=after_round, result__isnull=False
    ).exclude(bracket_key=""):
        if board.result == 1.0 or board.b_id is None:
            winners[board.bracket_key] = board.a_id
        elif board.result == 0.0 and board.b_id is not None:
            winners[board.bracket_key] = board.b_id
    return winners


def _finish(tournament: Tournament, now: datetime) -> None:
    tournament.status, tournament.finished_at = Status.FINISHED, now
    tournament.save(update_fields=["status", "finished_at"])
    standings = standings_of(tournament)
    rank = {row.id: row.rank for row in standings}
    names = dict(tournament.entries.values_list("pk", "name"))
    top = ", ".join(f"#{row.rank} {names.get(row.id, '')}" for row in standings[:3])
    webhook_emit(
        ladder_id=tournament.ladder_id,
        event=Event.TOURNAMENT_FINISHED,
        data={
            "tournament": tournament.name,
            "winner": names.get(standings[0].id, "") if standings else "",
            "standings": [
                {"rank": row.rank, "entry": names.get(row.id, ""), "points": row.points} for row in standings
            ],
        },
        summary=f"{tournament.name} is over: {top}.",
        url=tournament.get_absolute_url(),
        now=now,
    )
    members = members_of(tournament.entries.all())
    for entry_id, players in members.items():
        if entry_id in rank:
            _tell(tournament, players, "finished", now, rank=rank[entry_id], entries=len(standings))


def _emit_paired(
    tournament: Tournament,
    round: Round,
    boards: list[Board],
    entries: dict[int, Entry],
    now: datetime,
    seated: dict[int, list[int]],
) -> None:
    games: list[dict[str, object]] = []
    lines = []
    for b in boards:
        game: dict[str, object] = {
            "board": b.number,
            "a": entries[b.a_id].name,
            "b": entries[b.b_id].name if b.b_id else None,
            "kind": b.kind,
        }
        if b.kind == BoardKind.POD:
            game["players"] = players = [entries[e].name for e in seated[b.pk]]
            lines.append(", ".join(players))
        else:
            lines.append(f"{game['a']} – {game['b']}" if b.b_id else f"{game['a']}: {b.kind}")
        games.append(game)
    webhook_emit(
        ladder_id=tournament.ladder_id,
        event=Event.TOURNAMENT_PAIRED,
        data={
            "tournament": tournament.name,
            "round": round.number,
            "deadline": round.deadline.isoformat(),
            "games": games,
        },
        summary=f"{tournament.name}, round {round.number}: {'; '.join(lines)}",
        url=tournament.get_absolute_url(),
        now=now,
    )


def _emit_result(tournament: Tournament, board: Board, now: datetime) -> None:
    """A game of the tournament has its result (played, decided or forfeited)."""
    if board.kind == BoardKind.POD:
        seated = list(
            PodSeat.objects.filter(board=board).order_by("place", "index").values_list("entry__name", "place")
        )
        places = [{"entry": name, "place": place} for name, place in seated]
        text = ", ".join(f"{_place_text(place or 0.0)} {name}" for name, place in seated)
        webhook_emit(
            ladder_id=tournament.ladder_id,
            event=Event.TOURNAMENT_RESULT,
            data={"tournament": tournament.name, "round": tournament.current_round, "places": places, "kind": "pod"},
            summary=f"{tournament.name}, round {tournament.current_round}: {text}",
            url=tournament.get_absolute_url(),
            now=now,
        )
        return
    a, b = board.a.name, board.b.name if board.b is not None else ""
    score = {1.0: "1–0", 0.5: "½–½", 0.0: "0–1"}.get(float(board.result or 0.0), "")
    webhook_emit(
        ladder_id=tournament.ladder_id,
        event=Event.TOURNAMENT_RESULT,
        data={
            "tournament": tournament.name,
            "round": tournament.current_round,
            "a": a,
            "b": b,
            "result": board.result,
            "kind": board.kind,
        },
        summary=f"{tournament.name}, round {tournament.current_round}: {a} {score} {b}"
        + (" (forfeit)" if board.kind == BoardKind.FORFEIT else ""),
        url=tournament.get_absolute_url(),
        now=now,
    )


def _place_text(place: float) -> str:
    """A pod's place as told: 1 → "1.", a shared 2nd and 3rd (2.5) → "2.5."."""
    return f"{place:g}."


# -- Telling ----------------------------------------------------------------------------------------------


def _tell(tournament: Tournament, players: Sequence[int], event: str, now: datetime, **data: object) -> None:
    notify(
        Kind.TOURNAMENT,
        players,
        key=f"tournament:{tournament.pk}:{event}:{tournament.current_round}",
        ladder_id=tournament.ladder_id,
        data={
            "event": event,
            "tournament": tournament.name,
            "tournament_url": tournament.get_absolute_url(),
            "ladder": tournament.ladder.name,
            "ladder_slug": tournament.ladder.slug,
            **data,
        },
        now=now,
    )


def _tell_pairing(
    tournament: Tournament,
    board: Board,
    entries: dict[int, Entry],
    members: dict[int, list[int]],
    round: Round,
    now: datetime,
    pod: list[int],
) -> None:
    if pod:
        sides = {entry: [other for other in pod if other != entry] for entry in pod}
    else:
        assert board.b_id is not None
        sides = {board.a_id: [board.b_id], board.b_id: [board.a_id]}
    for entry_id, others in sides.items():
        notify(
            Kind.TOURNAMENT,
            members[entry_id],
            key=f"tournament:{tournament.pk}:paired:{round.number}",
            ladder_id=tournament.ladder_id,
            match_id=board.match_id,
            data={
                "event": "paired",
                "tournament": tournament.name,
                "tournament_url": tournament.get_absolute_url(),
                "ladder": tournament.ladder.name,
                "ladder_slug": tournament.ladder.slug,
                "round": round.number,
                "opponent": _listed([entries[other].name for other in others]),
                "deadline": round.deadline.isoformat(),
            },
            now=now,
        )


def _listed(names: list[str]) -> str:
    """ "A", "A and B", "A, B and C"."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# -- The sweep ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Swept:
    started: int
    advanced: int
    check_ins: int


def tournaments_sweep(*, now: datetime | None = None) -> Swept:
    """Every minute: open check-ins (telling the entries), start tournaments due, advance running ones."""
    now = now or timezone.now()
    started = advanced = check_ins = 0
    for tournament in Tournament.objects.filter(status=Status.REGISTRATION).select_related("ladder"):
        if tournament.check_in_minutes and check_in_opens_at(tournament) <= now < tournament.starts_at:
            players = list(
                EntryMember.objects.filter(tournament=tournament, entry__status=EntryStatus.REGISTERED).values_list(
                    "player_id", flat=True
                )
            )
            if players:
                check_ins += 1
                _tell(tournament, players, "check_in", now, starts_at=tournament.starts_at.isoformat())
        if tournament.starts_at <= now:
            try:
                tournament_start(tournament=tournament, now=now)
                started += 1
            except ValidationError as error:
                if error.code == "too_few_entries":
                    _call_off(tournament, error.messages[0], now)
    for tournament in Tournament.objects.filter(status=Status.RUNNING):
        before = tournament.current_round
        after = tournament_advance(tournament=tournament, now=now)
        advanced += after.current_round != before or after.status != Status.RUNNING
    return Swept(started=started, advanced=advanced, check_ins=check_ins)


def _call_off(tournament: Tournament, reason: str, now: datetime) -> None:
    with transaction.atomic():
        tournament = locked(tournament)
        if tournament.status != Status.REGISTRATION:
            return
        tournament.status, tournament.finished_at = Status.CANCELLED, now
        tournament.save(update_fields=["status", "finished_at"])
        _act(tournament, None, "cancel", reason, now)
        players = list(EntryMember.objects.filter(tournament=tournament).values_list("player_id", flat=True))
        _tell(tournament, players, "cancelled", now, reason=reason)
