"""Input and output serializers: one pair per operation, with explicit fields.

Inputs reject unknown fields, so a typo ("placment") is a 400 naming it instead of a
silently ignored value.
"""

from __future__ import annotations

from typing import Any, ClassVar

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ladder.formats import FORMATS
from ladder.models import (
    MAX_PLAYERS_PER_MATCH,
    CancelReason,
    FieldKind,
    FieldScope,
    MatchStatus,
    ReportReason,
    ReportStatus,
    SideAnswer,
)
from ladder.standings.ranking import UnrankedCode
from notifications.models import Kind as NotificationKind

# The codes of a hold's reasons (``Match.review_evidence``; docs/rules.md §15).
HOLD_CODES = [
    "many_opponents",
    "unanswered_reports",
    "one_sided_series",
    "quick_wins_over_new_accounts",
    "quick_one_sided_series",
    "shared_sign_in_print",
]

UNKNOWN_FIELD = "Unknown field."


class StrictSerializer(serializers.Serializer):
    """A serializer that refuses fields it does not declare."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: [UNKNOWN_FIELD] for name in unknown}, code="unknown_field")
        return super().to_internal_value(data)


# Match fields (docs/match-fields.md) -----------------------------------------------------------

FIELD_VALUE_SCHEMA = {
    "oneOf": [{"type": "string", "maxLength": 500}, {"type": "integer"}, {"type": "boolean"}],
    "description": "Text for a choice, text or link; whole seconds (or text such as `1:23:45`) for a duration; "
    "`yes`/`no` (or true/false) for a yes/no field.",
}


@extend_schema_field(FIELD_VALUE_SCHEMA)
class FieldValueIn(serializers.Field):
    """One value of a match field as sent: the ladder's fields decide what it may be (``ladder.fields.answers``)."""

    default_error_messages = {"invalid": "A field's value is text, a whole number or true/false."}

    def to_internal_value(self, data: Any) -> Any:
        if data is None or isinstance(data, str | int | bool):
            return data
        self.fail("invalid")

    def to_representation(self, value: Any) -> Any:
        return value


@extend_schema_field({"oneOf": [{"type": "string"}, {"type": "integer"}]})
class FieldValueOut(serializers.Field):
    def to_representation(self, value: Any) -> Any:
        return value


def fields_in() -> serializers.DictField:
    return serializers.DictField(
        child=FieldValueIn(allow_null=True),
        required=False,
        help_text="The ladder's match fields (its `fields` with scope `match`), by name: "
        '`{"map": "Crater", "game_length": 1830}`. Required ones must be given; unknown names are a 400.',
    )


def player_fields_in() -> serializers.DictField:
    return serializers.DictField(
        child=serializers.DictField(child=FieldValueIn(allow_null=True)),
        required=False,
        help_text="The ladder's per-player fields (scope `player`), by username then field name: "
        '`{"alice": {"tribe": "Empire"}}`.',
    )


class MatchFieldOut(serializers.Serializer):
    # label, help_text and required are also Field's own attributes; DRF's metaclass takes these out of the class.
    name = serializers.SlugField(help_text="The key to send in `fields` or `player_fields` and to filter lists by.")
    label = serializers.CharField()  # type: ignore[assignment]
    help_text = serializers.CharField()  # type: ignore[assignment]
    kind = serializers.ChoiceField(choices=FieldKind.choices)
    scope = serializers.ChoiceField(choices=FieldScope.choices)
    required = serializers.BooleanField()  # type: ignore[assignment]
    choices = serializers.ListField(child=serializers.CharField(), help_text="A choice field's values; else empty.")
    unrated_when_yes = serializers.BooleanField(help_text="A yes/no field: a report answering yes is refused.")


# Inputs ------------------------------------------------------------------------------------


class SideIn(StrictSerializer):
    players = serializers.ListField(
        child=serializers.CharField(max_length=30),
        min_length=1,
        max_length=MAX_PLAYERS_PER_MATCH,
        help_text="Usernames (any case).",
    )
    placement = serializers.IntegerField(
        min_value=1, max_value=MAX_PLAYERS_PER_MATCH, help_text="1 is best; equal placements draw."
    )


class ReportIn(StrictSerializer):
    ladder = serializers.SlugField(max_length=80)
    # many=True hands min_length and max_length to the ListSerializer; the stubs only know the child's arguments.
    sides = SideIn(many=True, min_length=2, max_length=MAX_PLAYERS_PER_MATCH)  # type: ignore[call-arg]
    played_at = serializers.DateTimeField(required=False, help_text="When the game was played; default now.")
    # DRF's metaclass takes declared fields out of the class, so "fields" does not hide Serializer.fields.
    fields = fields_in()  # type: ignore[assignment]
    player_fields = player_fields_in()


class ResultIn(StrictSerializer):
    placements = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_PLAYERS_PER_MATCH),
        min_length=2,
        max_length=MAX_PLAYERS_PER_MATCH,
    )
    # DRF's metaclass takes declared fields out of the class, so "fields" does not hide Serializer.fields.
    fields = fields_in()  # type: ignore[assignment]
    player_fields = player_fields_in()


class DisputeIn(StrictSerializer):
    reason = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")


class DisputeAllIn(StrictSerializer):
    reporter = serializers.CharField(max_length=30, help_text="The player whose unanswered reports you dispute.")
    ladder = serializers.SlugField(max_length=80, required=False, help_text="Only reports in this ladder.")
    reason = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")


class DisputeAllOut(serializers.Serializer):
    count = serializers.IntegerField(help_text="How many results became disputed (0 if none was waiting).")
    matches = serializers.ListField(child=serializers.IntegerField(), help_text="Their ids, oldest first.")


class VoidIn(StrictSerializer):
    reason = serializers.CharField(max_length=2000)


class CorrectIn(ResultIn):
    reason = serializers.CharField(max_length=2000)


class LadderFilterIn(StrictSerializer):
    page = serializers.IntegerField(min_value=1, required=False)
    page_size = serializers.IntegerField(min_value=1, max_value=200, required=False)


class EmptyIn(StrictSerializer):
    pass


FORMAT_CODES = list(FORMATS)
REPEATED_FORMAT = "Name each format once."
MAX_ID = 2**31 - 1


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "string", "enum": FORMAT_CODES},
        "minItems": 1,
        "maxItems": len(FORMAT_CODES),
        "uniqueItems": True,
    }
)
class FormatListField(serializers.ListField):
    """Queue format codes (``ladder.formats``), each at most once; the enum stays inline for Redoc."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            child=serializers.ChoiceField(choices=FORMAT_CODES), min_length=1, max_length=len(FORMAT_CODES), **kwargs
        )

    def to_internal_value(self, data: Any) -> list[str]:
        codes: list[str] = super().to_internal_value(data)
        if len(set(codes)) < len(codes):
            raise serializers.ValidationError(REPEATED_FORMAT, code="repeated_format")
        return codes


class QueueJoinIn(StrictSerializer):
    max_rating_gap = serializers.IntegerField(
        min_value=1,
        max_value=10_000,
        required=False,
        allow_null=True,
        help_text="Only opponents within ± this many rating points.",
    )
    formats = FormatListField(
        required=False,
        help_text="The formats to search, among the ladder's `queue_formats` (another is a 400 `bad_format`); "
        "the first game formed ends the search in all of them. Default: 1 v 1, or every format the ladder "
        "offers when it has no 1 v 1.",
    )
    party = serializers.IntegerField(
        min_value=1,
        max_value=MAX_ID,
        required=False,
        help_text="Your party's id (optional: a party member always searches with their party, and every "
        "member's search starts). Another party's id is a 409 `not_in_party`.",
    )


class MatchFilterIn(StrictSerializer):
    ladder = serializers.SlugField(max_length=80, required=False)
    player = serializers.CharField(max_length=30, required=False)
    status = serializers.ChoiceField(choices=MatchStatus.choices, required=False)
    since = serializers.DateTimeField(required=False, help_text="Played at or after this instant.")
    page = serializers.IntegerField(min_value=1, required=False)
    page_size = serializers.IntegerField(min_value=1, max_value=200, required=False)


class HistoryFilterIn(StrictSerializer):
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    page = serializers.IntegerField(min_value=1, required=False)
    page_size = serializers.IntegerField(min_value=1, max_value=200, required=False)


class LeaderboardFilterIn(StrictSerializer):
    q = serializers.CharField(max_length=30, required=False, allow_blank=True, help_text="Part of a username.")
    bots = serializers.ChoiceField(choices=["hide", "only"], required=False, help_text="Hide bots or show only bots.")
    page = serializers.IntegerField(min_value=1, required=False)
    page_size = serializers.IntegerField(min_value=1, max_value=200, required=False)


class PageIn(StrictSerializer):
    page = serializers.IntegerField(min_value=1, required=False)
    page_size = serializers.IntegerField(min_value=1, max_value=200, required=False)


class WinProbabilityIn(StrictSerializer):
    a = serializers.CharField(max_length=30, help_text="Username of the first player.")
    b = serializers.CharField(max_length=30, help_text="Username of the second player.")


# Outputs -----------------------------------------------------------------------------------


class PlayerRefOut(serializers.Serializer):
    username = serializers.CharField()
    is_bot = serializers.BooleanField()


class LadderOut(serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.CharField()
    game = serializers.CharField()
    description = serializers.CharField()
    engine = serializers.CharField()
    leaderboard_scale = serializers.CharField()
    formats = serializers.ListField(child=serializers.CharField())
    queue_formats = serializers.ListField(
        child=serializers.ChoiceField(choices=FORMAT_CODES),
        help_text="The formats its queue forms (`1v1`, `2v2`, `ffa4`, `teams4`…); empty: no queue.",
    )
    url = serializers.CharField()


class LadderSettingsOut(serializers.Serializer):
    initial_rating = serializers.FloatField()
    initial_rd = serializers.FloatField()
    rd_max = serializers.FloatField()
    rd_growth_per_day = serializers.FloatField()
    luck_p = serializers.FloatField()
    glicko_c = serializers.FloatField()
    rating_period_days = serializers.FloatField()
    initial_volatility = serializers.FloatField()
    tau = serializers.FloatField()
    elo_k = serializers.FloatField()
    trueskill_beta = serializers.FloatField()
    trueskill_tau = serializers.FloatField()
    draw_probability = serializers.FloatField()
    team_update = serializers.CharField()
    newcomer_games = serializers.IntegerField(
        help_text="A player whose every opponent has fewer rated games than this moves at most `newcomer_cap` "
        "points in that game; 0: no limit."
    )
    newcomer_cap = serializers.FloatField()
    provisional_rd = serializers.FloatField()
    show_provisional = serializers.BooleanField()
    time_zone = serializers.CharField()
    queue_min_win_probability = serializers.FloatField()
    queue_widening_per_minute = serializers.FloatField()
    queue_widest_min_win_probability = serializers.FloatField()
    queue_timeout_seconds = serializers.IntegerField()
    rematch_cooldown_minutes = serializers.IntegerField()
    confirmation_hours = serializers.IntegerField()
    ranked_min_games = serializers.IntegerField()
    ranked_max_idle_days = serializers.IntegerField()
    allow_draws = serializers.BooleanField()
    allow_one_vs_one = serializers.BooleanField()
    allow_teams = serializers.BooleanField()
    allow_uneven_teams = serializers.BooleanField()
    allow_free_for_all = serializers.BooleanField()
    max_players = serializers.IntegerField()
    best_of = serializers.IntegerField(help_text="A match the queue pairs is a series of at most this many games.")
    rate_each_game = serializers.BooleanField(help_text="Each game of a series is rated; off: the series once.")


class LadderDetailOut(LadderOut):
    member_count = serializers.IntegerField()
    settings = LadderSettingsOut()
    fields = MatchFieldOut(  # type: ignore[assignment]  # taken out of the class by DRF's metaclass
        many=True, help_text="What a report of this ladder may (or must) say about the game."
    )


class UnrankedReasonOut(serializers.Serializer):
    code = serializers.ChoiceField(choices=UnrankedCode.choices)
    message = serializers.CharField(help_text="The reason in words, as the leaderboard shows it.")


class StandingOut(serializers.Serializer):
    """A rating as leaderboards show it: numbers at the moment of the request."""

    rank = serializers.IntegerField(allow_null=True, help_text="Null when not ranked (see unranked_reasons).")
    rank_change = serializers.IntegerField(
        allow_null=True,
        help_text="Places gained since the latest leaderboard snapshot; null when not ranked, not in "
        "the snapshot (new to the ranking or below a partial snapshot's top N) or without a snapshot.",
    )
    player = PlayerRefOut()
    rating = serializers.FloatField()
    rd = serializers.FloatField(help_text="The RD now (grown with idle time).")
    gxe = serializers.FloatField()
    tr = serializers.FloatField()
    conservative = serializers.FloatField()
    provisional = serializers.BooleanField()
    games = serializers.IntegerField()
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    draws = serializers.IntegerField()
    last_played_at = serializers.DateTimeField(allow_null=True)
    unranked_reasons = serializers.ListField(
        child=serializers.CharField(), help_text="Why not ranked, in words; empty when ranked (see `unranked`)."
    )
    unranked = UnrankedReasonOut(many=True, help_text="The same reasons as codes, each with its words.")


class PlayerLadderOut(StandingOut):
    ladder = serializers.SlugField()
    is_member = serializers.BooleanField()


class PlayerOut(serializers.Serializer):
    username = serializers.CharField()
    is_bot = serializers.BooleanField()
    about = serializers.CharField()
    date_joined = serializers.DateTimeField()
    ratings = PlayerLadderOut(many=True)


class RatingChangeOut(serializers.Serializer):
    event = serializers.IntegerField()
    kind = serializers.CharField()
    match = serializers.IntegerField(allow_null=True)
    at = serializers.DateTimeField(help_text="The instant the change was computed for.")
    rating_before = serializers.FloatField()
    rating_after = serializers.FloatField()
    rd_before = serializers.FloatField()
    rd_after = serializers.FloatField()
    delta = serializers.FloatField()
    expected = serializers.FloatField(allow_null=True)
    score = serializers.FloatField(allow_null=True)


class MatchPlayerOut(serializers.Serializer):
    username = serializers.CharField()
    is_bot = serializers.BooleanField()
    rating_before = serializers.FloatField(allow_null=True)
    rating_after = serializers.FloatField(allow_null=True)
    rd_after = serializers.FloatField(allow_null=True)
    delta = serializers.FloatField(allow_null=True, help_text="Null until the match is rated.")


class MatchSideOut(serializers.Serializer):
    index = serializers.IntegerField()
    placement = serializers.IntegerField(allow_null=True)
    outcome = serializers.CharField(help_text="Won, Lost, Draw, or a place such as “2nd”.")
    answer = serializers.ChoiceField(
        choices=SideAnswer.choices, allow_blank=True, help_text="This side's answer to the report; empty: none yet."
    )
    dispute_reason = serializers.CharField()
    ready = serializers.BooleanField(help_text="This side pressed Ready in the ready check.")
    cancel_requested = serializers.BooleanField(help_text="This side agreed to cancel the match.")
    no_show_claimed = serializers.BooleanField(help_text="This side claimed the other did not play.")
    win_probability = serializers.FloatField(
        allow_null=True,
        help_text="Formed by the queue: this side's predicted chance to win then (in a free-for-all, its mean "
        "chance against each other player); else null.",
    )
    players = MatchPlayerOut(many=True)


class SeriesGameOut(serializers.Serializer):
    number = serializers.IntegerField(help_text="1 for the series' first game.")
    winner_side = serializers.IntegerField(
        allow_null=True, help_text="The index of the side that won it; null: a draw."
    )
    match = serializers.IntegerField(
        allow_null=True, help_text="The game's own rated match, in a ladder that rates each game; else null."
    )


class SeriesOut(serializers.Serializer):
    best_of = serializers.IntegerField(help_text="The series is at most this many games (the ladder's `best_of`).")
    games = SeriesGameOut(many=True)
    wins = serializers.ListField(
        child=serializers.IntegerField(), min_length=2, max_length=2, help_text="Games won by side 0 and side 1."
    )
    decided = serializers.BooleanField(help_text="A side won a majority, or every game was played.")


class MatchOut(serializers.Serializer):
    id = serializers.IntegerField()
    ladder = serializers.SlugField()
    status = serializers.ChoiceField(choices=MatchStatus.choices)
    format = serializers.CharField()
    queue_format = serializers.ChoiceField(
        choices=FORMAT_CODES, allow_null=True, help_text="Formed by the queue: the format searched for; else null."
    )
    played_at = serializers.DateTimeField()
    reported_by = serializers.CharField(allow_null=True)
    reported_at = serializers.DateTimeField(allow_null=True)
    confirmed_at = serializers.DateTimeField(allow_null=True)
    confirmation = serializers.CharField()
    confirms_at = serializers.DateTimeField(
        allow_null=True, help_text="A pending match confirms itself then (never when held for review)."
    )
    held_for_review = serializers.BooleanField(
        help_text="The ladder's fair-play checks flagged this result when it was reported: it does not confirm "
        "itself and waits for the other side or a moderator."
    )
    held_for_moderator = serializers.BooleanField(
        help_text="The fair-play watch held this result: the players' answers are recorded, and only a moderator "
        "confirms it."
    )
    held_because = serializers.ListField(
        child=serializers.ChoiceField(choices=HOLD_CODES),
        help_text="Why it is held, naming nobody (docs/rules.md §15): a report naming several opponents, the "
        "reporter's unanswered reports against the same player, a one-sided series, a winner's quick wins over "
        "new accounts, a one-sided series of quick games, opponents who signed in from one address, an account "
        "a moderator marked playing unmarked opponents. Empty when not held.",
    )
    rated = serializers.BooleanField(help_text="Its result has changed the players' ratings.")
    unrated = serializers.BooleanField(
        help_text="A game that never changes ratings (an unrated tournament's): confirmed like any other, "
        "it counts in its tournament only."
    )
    ready_deadline = serializers.DateTimeField(
        allow_null=True, help_text="In the ready check: every player presses Ready before this, or it is cancelled."
    )
    play_deadline = serializers.DateTimeField(
        allow_null=True, help_text="Scheduled: a result (or a no-show claim) before this, or it is cancelled."
    )
    claim_deadline = serializers.DateTimeField(
        allow_null=True, help_text="A no-show claimed: the other side answers before this, or forfeits."
    )
    cancelled_at = serializers.DateTimeField(allow_null=True)
    cancel_reason = serializers.ChoiceField(
        choices=CancelReason.choices, allow_null=True, help_text="Why a cancelled match was cancelled; else null."
    )
    sides = MatchSideOut(many=True)
    fields = serializers.DictField(  # type: ignore[assignment]  # taken out of the class by DRF's metaclass
        child=FieldValueOut(), help_text="The match's fields as reported, by name (a duration in whole seconds)."
    )
    player_fields = serializers.DictField(
        child=serializers.DictField(child=FieldValueOut()),
        help_text="The per-player fields as reported, by username then field name.",
    )
    series = SeriesOut(
        allow_null=True,
        help_text="A match the queue paired in a ladder of best-of-N series: its games so far; else null.",
    )
    url = serializers.CharField()


class ReplayJobOut(serializers.Serializer):
    id = serializers.IntegerField()
    ladder = serializers.SlugField()
    kind = serializers.ChoiceField(
        choices=["void", "correct", "replay", "withdraw"], help_text="withdraw: a rating adjustment taken back."
    )
    match = serializers.IntegerField(allow_null=True, help_text="The match decided, if the job is about one.")
    status = serializers.ChoiceField(
        choices=["queued", "running", "done", "failed"],
        help_text="queued and running: ratings in the ladder may still change; done: they are final; failed: "
        "see error (a moderator runs it again).",
    )
    events_done = serializers.IntegerField(help_text="Rating events replayed so far.")
    events_total = serializers.IntegerField(allow_null=True, help_text="Known once the replay starts.")
    percent = serializers.IntegerField(allow_null=True)
    error = serializers.CharField(help_text="Why the last run failed; empty otherwise.")
    requested_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    url = serializers.CharField()


class DecisionOut(serializers.Serializer):
    match = MatchOut()
    job = ReplayJobOut(allow_null=True, help_text="The replay that re-rates the ladder; null when none was needed.")
    status_url = serializers.CharField(allow_null=True, help_text="Poll this for the job's progress.")


class QueueSideOut(serializers.Serializer):
    index = serializers.IntegerField()
    mine = serializers.BooleanField(help_text="You play on this side.")
    win_probability = serializers.FloatField(
        allow_null=True, help_text="The side's predicted chance to win when the game was formed."
    )
    players = PlayerRefOut(many=True)


class HeldBackOut(serializers.Serializer):
    username = serializers.CharField()
    until = serializers.DateTimeField(help_text="When the rematch cooldown lets you two meet again.")


class QueueOut(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=["idle", "waiting", "matched", "expired", "left"],
        help_text="idle: no search yet in this ladder.",
    )
    joined_at = serializers.DateTimeField(allow_null=True)
    waited_seconds = serializers.IntegerField(allow_null=True)
    timeout_seconds = serializers.IntegerField()
    window_low = serializers.FloatField(allow_null=True, help_text="Lowest opponent rating acceptable now.")
    window_high = serializers.FloatField(allow_null=True)
    searching = serializers.IntegerField(help_text="Players searching in this ladder.")
    match = serializers.IntegerField(allow_null=True)
    opponent = PlayerRefOut(allow_null=True)
    win_probability = serializers.FloatField(allow_null=True, help_text="Your chance against the opponent.")
    match_status = serializers.ChoiceField(
        choices=MatchStatus.choices,
        allow_null=True,
        help_text="Matched: the match's status; `ready_check` until both players press Ready (`POST "
        "/api/v1/matches/{id}/ready/`). Null when not matched.",
    )
    ready_deadline = serializers.DateTimeField(
        allow_null=True, help_text="In the ready check: press Ready before this. Null otherwise."
    )
    ready = serializers.BooleanField(
        allow_null=True, help_text="In the ready check: whether you pressed Ready. Null otherwise."
    )
    formats = serializers.ListField(
        child=serializers.ChoiceField(choices=FORMAT_CODES), help_text="The formats searched; empty when idle."
    )
    party = serializers.IntegerField(allow_null=True, help_text="The party searching together, if any.")
    searching_by_format = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Players searching in each of the ladder's queue formats (a search of several counts in each).",
    )
    found = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Waiting: for each team or free-for-all format searched, how many players the last attempt "
        'found for a game with you, you and your party included ("3 of 4 found"); else empty.',
    )
    queue_format = serializers.ChoiceField(
        choices=FORMAT_CODES, allow_null=True, help_text="Matched: the format of the game formed; else null."
    )
    sides = QueueSideOut(
        many=True, help_text="Matched: the game's sides (teams, or each player of a free-for-all); else empty."
    )
    held_back = HeldBackOut(
        many=True,
        help_text="Waiting: players searching now whom the ladder's rematch cooldown keeps from you (you played "
        "them within it), and when each is free; else empty. A match cancelled unplayed does not count.",
    )


class WinProbabilityOut(serializers.Serializer):
    ladder = serializers.SlugField()
    a = StandingOut()
    b = StandingOut()
    probability_a = serializers.FloatField(
        help_text="P(a beats b), both RDs at now, through the ladder's win-chance slope (1: the engine's own)."
    )
    probability_b = serializers.FloatField()


class MembershipOut(serializers.Serializer):
    ladder = serializers.SlugField()
    is_member = serializers.BooleanField()
    joined_at = serializers.DateTimeField()


class SnapshotDateOut(serializers.Serializer):
    date = serializers.DateField()
    url = serializers.CharField()


class SnapshotEntryOut(serializers.Serializer):
    rank = serializers.IntegerField()
    player = serializers.CharField()
    is_bot = serializers.BooleanField()
    rating = serializers.FloatField()
    rd = serializers.FloatField(help_text="The RD at the snapshot's midnight.")
    value = serializers.FloatField(help_text="The value on the ladder's leaderboard scale.")


class SnapshotOut(serializers.Serializer):
    date = serializers.DateField()
    midnight = serializers.DateTimeField()
    scale = serializers.CharField()
    size = serializers.IntegerField(help_text="How many ranked players the snapshot keeps at most.")
    member_count = serializers.IntegerField()
    ranked_count = serializers.IntegerField()
    provisional_count = serializers.IntegerField()
    rows = SnapshotEntryOut(many=True)


class HeldMatchOut(serializers.Serializer):
    match = serializers.IntegerField(help_text="The match's id: /api/v1/matches/{id}/ has the rest.")
    ladder = serializers.CharField(help_text="The ladder's slug.")
    reported_at = serializers.DateTimeField(allow_null=True)
    held_for_moderator = serializers.BooleanField(
        help_text="Held by the fair-play watch: only a moderator confirms it. Otherwise the other side's "
        "confirmation is enough."
    )
    held_because = serializers.ListField(child=serializers.ChoiceField(choices=HOLD_CODES))


class FairPlayWarningOut(serializers.Serializer):
    ladder = serializers.CharField(help_text="The ladder's slug.")
    at = serializers.DateTimeField()
    match = serializers.IntegerField(allow_null=True, help_text="The result that brought the warning.")
    marks = serializers.IntegerField(help_text="Quick losses and repeated quick wins among the last results.")
    of = serializers.IntegerField(help_text="How many of the player's last results were read.")


class ReportMadeOut(serializers.Serializer):
    player = serializers.CharField(help_text="Whom the report is about.")
    ladder = serializers.CharField(help_text="The ladder's slug.")
    reason = serializers.ChoiceField(choices=ReportReason.choices)
    status = serializers.ChoiceField(
        choices=ReportStatus.choices, help_text="`acted`: a moderator acted on it; `dismissed`: nothing to act on."
    )
    created_at = serializers.DateTimeField()
    decided_at = serializers.DateTimeField(allow_null=True)


class MeFairPlayOut(serializers.Serializer):
    held = HeldMatchOut(many=True, help_text="Your results that wait for a moderator or for the other side.")
    warnings = FairPlayWarningOut(many=True, help_text="The fair-play warnings you were sent, newest first.")
    reports_made = ReportMadeOut(many=True, help_text="Your reports about other players, newest first.")


class MeOut(serializers.Serializer):
    username = serializers.CharField()
    is_bot = serializers.BooleanField()
    is_moderator = serializers.BooleanField()
    token = serializers.CharField(allow_null=True, help_text="The name of the token used, if any.")
    # A declared field, taken off the class by DRF's metaclass; the stubs see Field.read_only.
    read_only = serializers.BooleanField()  # type: ignore[assignment]


class ErrorDetailOut(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    # A declared field, taken off the class by DRF's metaclass; the stubs see Serializer.fields.
    fields = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))  # type: ignore[assignment]


class ErrorOut(serializers.Serializer):
    error = ErrorDetailOut()


class NotificationFilterIn(StrictSerializer):
    kind = serializers.ChoiceField(choices=NotificationKind.choices, required=False, help_text="Only this kind.")
    unread = serializers.BooleanField(required=False, help_text="Only unread ones.")
    page = serializers.IntegerField(min_value=1, required=False)
    page_size = serializers.IntegerField(min_value=1, max_value=200, required=False)


class NotificationOut(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=NotificationKind.choices)
    title = serializers.CharField()
    text = serializers.CharField(help_text="One or two sentences, as on the site.")
    url = serializers.URLField(help_text="The page it is about: the match, the ladder or the notifications page.")
    ladder = serializers.SlugField(allow_null=True)
    match = serializers.IntegerField(allow_null=True)
    details = serializers.DictField(help_text="The event's details as recorded then (names, deadline, rating change).")
    created_at = serializers.DateTimeField()
    read_at = serializers.DateTimeField(allow_null=True)


NOTIFICATION_IDS_OR_ALL = "Give either ids or all, not both."
NOTIFICATION_NOTHING = "Give ids (a list of notification ids) or all: true."


class NotificationReadIn(StrictSerializer):
    ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1), min_length=1, max_length=200, required=False
    )
    all = serializers.BooleanField(required=False, help_text="true marks every notification read.")

    # What validate() enforces, for the schema (api.schema): exactly one of ids and all, and all only as true.
    schema_rules: ClassVar[dict[str, Any]] = {
        "oneOf": [{"required": ["ids"]}, {"required": ["all"]}],
        "not": {"required": ["all"], "properties": {"all": {"enum": [False]}}},
    }

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "ids" in attrs and "all" in attrs:
            raise serializers.ValidationError({"all": [NOTIFICATION_IDS_OR_ALL]})
        if "ids" not in attrs and not attrs.get("all"):
            raise serializers.ValidationError({"ids": [NOTIFICATION_NOTHING]})
        return attrs


# NotificationReadIn's two bodies, for the schema (api.views.notifications): ids, or all.
class NotificationReadIdsIn(StrictSerializer):
    ids = serializers.ListField(child=serializers.IntegerField(min_value=1), min_length=1, max_length=200)


class NotificationReadAllIn(StrictSerializer):
    all = serializers.BooleanField(help_text="true marks every notification read.")

    schema_rules: ClassVar[dict[str, Any]] = {"properties": {"all": {"type": "boolean", "enum": [True]}}}


class NotificationReadOut(serializers.Serializer):
    marked = serializers.IntegerField(help_text="How many became read.")
    unread = serializers.IntegerField(help_text="How many are still unread.")
