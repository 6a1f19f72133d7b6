"""Ladders: a game, a rating engine and every constant of docs/rules.md as a per-ladder setting."""

from __future__ import annotations

import math
import zoneinfo
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.urls import reverse

from ladder import formats
from ratings.engines import (
    LUCK_P_MAX,
    LUCK_P_MIN,
    LUCK_P_MIN_TEXT,
    MAX_PLAYERS,
    Elo,
    Engine,
    Glicko1,
    Glicko2,
    Params,
    TimedGlicko,
    TrueSkill,
    get_engine,
    recalibrated,
)

MAX_PLAYERS_PER_MATCH = MAX_PLAYERS  # the engines' limit, every side counted
# Luck P's bounds as messages write them: "5/6 (0.8334)", the lowest four-decimal value allowed.
LUCK_P_MIN_SHOWN = f"{LUCK_P_MIN_TEXT} ({math.ceil(LUCK_P_MIN * 10_000) / 10_000:g})"
SNAPSHOT_SIZE_MAX = 100_000
# What a new ladder made in the admin starts from: the values tuned TGR chose on both shared
# datasets of real results, tennis and football (docs/backtests.md, "Defaults for new ladders").
# The fields' own defaults stay the seed's (SC 20, P 0.9, no floor: docs/rules.md §1), which
# existing ladders and their exact replays rely on.
# The win-chance slope's range (``Ladder.win_chance_slope``): the backtests fitted 0.87–1.02.
WIN_CHANCE_SLOPE_MIN, WIN_CHANCE_SLOPE_MAX = 0.25, 2.0
NEW_LADDER_SETTINGS = {"rd_growth_per_day": 2.5, "luck_p": 1.0, "rd_min": 50.0, "team_update": "bayes"}
# A new ladder made with team formats, its SC left as offered: real 2 v 2 results wanted RD
# to grow twice as fast as the 1 v 1 files did (docs/backtests.md, "Defaults for new ladders").
NEW_TEAM_LADDER_SETTINGS = {"rd_growth_per_day": 5.0}


def validate_time_zone(value: str) -> None:
    if value not in zoneinfo.available_timezones():
        raise ValidationError(
            "“%(value)s” is not an IANA time zone name such as UTC or Europe/Berlin.",
            code="invalid_time_zone",
            params={"value": value},
        )


def validate_newcomer_cap(value: float) -> None:
    if not value > 0:
        raise ValidationError(
            "The newcomer cap must be above 0 points; to switch the rule off, set newcomer games to 0.",
            code="newcomer_cap_not_positive",
        )


class RatingEngine(models.TextChoices):
    """The engines a ladder may use, by their names in ``ratings.engines.ENGINES``."""

    TGR = TimedGlicko.name, "Timed Glicko (TGR)"
    GLICKO1 = Glicko1.name, "Glicko-1"
    GLICKO2 = Glicko2.name, "Glicko-2"
    ELO = Elo.name, "Elo"
    TRUESKILL = TrueSkill.name, "TrueSkill"


class LeaderboardScale(models.TextChoices):
    GXE = "gxe", "GLIXARE (chance to beat a new player, %)"  # as /help/#gxe defines it
    TR = "tr", "TR (0–25,000)"
    CONSERVATIVE = "conservative", "Conservative (rating − 2·RD)"


class TeamUpdate(models.TextChoices):
    OWN_RD = "own_rd", "Each member moves by their own RD"
    SHARED = "shared", "Every member gets the team composite's change"
    BAYES = "bayes", "Each member gets their share of the team's variance"


# ``TeamUpdate`` -> the engines' ``Params.team_delta`` (docs/rules.md §8).
TEAM_DELTA = {TeamUpdate.OWN_RD: "own", TeamUpdate.SHARED: "shared", TeamUpdate.BAYES: "bayes"}


_L = TypeVar("_L", bound="Ladder")  # a ladder, or a ladder with annotations (``.annotate()``)


class LadderQuerySet(models.QuerySet[_L, _L]):
    def listed(self) -> LadderQuerySet[_L]:
        return self.filter(is_listed=True)


class Ladder(models.Model):
    """A ranking of players in one game, with its own rating engine and constants.

    Defaults are those of docs/rules.md. ``clean()`` rejects combinations that would make the
    maths misbehave (a winner losing rating, an RD cap below new players' RD) and the
    check constraints repeat the hard limits so no code path can store them.
    """

    name = models.CharField(max_length=80, unique=True)
    slug = models.SlugField(max_length=80, unique=True, help_text="Used in the ladder's address: /ladders/<slug>/.")
    game = models.CharField(max_length=80, help_text="The game played on this ladder, e.g. “Pokémon Showdown”.")
    description = models.TextField(blank=True, help_text="Shown on the ladder page: rules, format, how to play.")
    is_listed = models.BooleanField(
        "listed", default=True, help_text="Shown on the home page. Unlisted ladders stay reachable by address."
    )

    # Rating engine
    engine = models.CharField(
        "rating engine",
        max_length=10,
        choices=RatingEngine,
        default=RatingEngine.TGR,
        help_text="How results change ratings. Timed Glicko (TGR) is Glicko whose uncertainty grows every idle day.",
    )
    initial_rating = models.FloatField(default=1500.0, help_text="The rating a new player starts with.")
    initial_rd = models.FloatField(
        "initial RD",
        default=350.0,
        help_text="How unsure the system is about a new player (rating deviation). Higher means bigger first moves.",
    )
    rd_max = models.FloatField(
        "RD cap",
        default=350.0,
        help_text="The most uncertain a rating can become after a long absence. At least the initial RD.",
    )
    rd_min = models.FloatField(
        "RD floor",
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0)],
        help_text="A game never makes a rating more certain than this RD (Lichess uses 45, Showdown 25), so a "
        "rating keeps following a player who improves. Empty: no floor.",
    )
    rd_growth_per_day = models.FloatField(
        "SC (RD growth per day)",
        default=20.0,
        validators=[MinValueValidator(0.0)],
        help_text="TGR: how fast uncertainty grows while a player is idle (RD² grows by SC² each day). "
        "With 20, a player at RD 50 turns provisional after about 19 idle days. 0 switches it off.",
    )
    luck_p = models.FloatField(
        "luck P",
        default=0.9,
        # Its bounds are checked in ``clean``, whose message rounds them and says why they exist
        # (a validator's would read "greater than or equal to 0.8333333333333334").
        help_text="TGR: the chance that a game between equals has a deserved result. 1 means no luck "
        f"(plain Glicko); lower values soften upsets. Between {LUCK_P_MIN_SHOWN} and {LUCK_P_MAX:g}.",
    )
    glicko_c = models.FloatField(
        "Glicko-1 c",
        default=34.6,
        validators=[MinValueValidator(0.0)],
        help_text="Glicko-1: RD growth per rating period (RD² grows by c² a period). 34.6 takes RD 50 back to "
        "350 in 100 periods.",
    )
    rating_period_days = models.FloatField(
        "rating period (days)",
        default=1.0,
        help_text="Glicko-1 and Glicko-2: the length of one rating period in days; idle time counts in "
        "fractions of it.",
    )
    initial_volatility = models.FloatField(
        "initial volatility σ",
        default=0.06,
        help_text="Glicko-2: how erratic a new player's results are expected to be.",
    )
    tau = models.FloatField(
        "tau (τ)",
        default=0.5,
        help_text="Glicko-2: how fast volatility may change. Glickman suggests 0.3 to 1.2; smaller is steadier.",
    )
    elo_k = models.FloatField(
        "Elo K",
        default=32.0,
        help_text="Elo: the most a single game can move a rating.",
    )
    trueskill_beta = models.FloatField(
        "TrueSkill β",
        default=175.0,
        help_text="TrueSkill: how much one game's performance varies around a player's skill, in rating points. "
        "175 is the TrueSkill papers' 25/6 on this ladder's scale (one TrueSkill point is 42 rating points).",
    )
    trueskill_tau = models.FloatField(
        "TrueSkill τ",
        default=3.5,
        help_text="TrueSkill: uncertainty added before every game, so a rating keeps following a player who "
        "improves (the papers' 25/300 on this scale). Idle time grows it further by SC a day.",
    )
    draw_probability = models.FloatField(
        "draw probability",
        default=0.1,
        help_text="TrueSkill: the share of games between equal players that end in a draw (0.1 is the papers' "
        "default; 0 for a game without draws). From 0 to below 1.",
    )
    team_update = models.CharField(
        "team update",
        max_length=10,
        choices=TeamUpdate,
        default=TeamUpdate.OWN_RD,
        help_text="Team games: how the team's result reaches its members. Their share of the team's variance "
        "(what new ladders use) shares one result between the members and moves a newcomer more than a veteran; "
        "their own RD counts the game as a whole game for each member; or every member gets the team's change.",
    )
    newcomer_games = models.PositiveSmallIntegerField(
        "newcomer games",
        default=5,
        help_text="New accounts carry less weight: a player whose every opponent in a game has fewer rated games "
        "on this ladder than this moves at most the newcomer cap in it, up or down. It bounds what throwaway "
        "accounts can feed one player. 0 switches it off.",
    )
    newcomer_cap = models.FloatField(
        "newcomer cap",
        default=30.0,
        validators=[validate_newcomer_cap],
        help_text="The most one game against newcomers only can move a rating, in points. A regular at RD 60 "
        "moves a few points in a game against a newcomer anyway; the cap bounds the big moves of two new ratings.",
    )

    win_chance_slope = models.FloatField(
        "win-chance slope",
        default=1.0,
        validators=[MinValueValidator(WIN_CHANCE_SLOPE_MIN), MaxValueValidator(WIN_CHANCE_SLOPE_MAX)],
        help_text="How sure the win chances players see are: below 1 pulls them towards 50%, for ratings that "
        "proved too sure of themselves. The Prediction quality page fits it on this ladder's games; 1 shows the "
        "engine's own chances. It changes no rating.",
    )

    # Leaderboard
    provisional_rd = models.FloatField(
        "provisional above RD",
        default=100.0,
        help_text="A rating whose current RD is above this is provisional: listed apart and never given a rank.",
    )
    show_provisional = models.BooleanField(
        default=True, help_text="List provisional players below the ranked ones (otherwise they are hidden)."
    )
    leaderboard_scale = models.CharField(
        max_length=12,
        choices=LeaderboardScale,
        default=LeaderboardScale.GXE,
        help_text="The display value that sorts the leaderboard. All three are shown on profiles.",
    )
    time_zone = models.CharField(
        max_length=64,
        default="UTC",
        validators=[validate_time_zone],
        help_text="The nightly job runs at this time zone's midnight: it brings every RD up to date and "
        "snapshots the leaderboard.",
    )
    snapshot_size = models.PositiveIntegerField(
        "snapshot size",
        default=1000,
        validators=[MinValueValidator(1), MaxValueValidator(SNAPSHOT_SIZE_MAX)],
        help_text="How many ranked players each nightly leaderboard snapshot keeps (the top N). Rank changes, "
        "rank history and movers are known for these players.",
    )

    # Matchmaking queue
    queue_min_win_probability = models.FloatField(
        "queue: lowest win chance",
        default=0.15,
        help_text="Two players are paired only if each has at least this chance to win (0.15 means a 15%–85% window).",
    )
    queue_widening_per_minute = models.FloatField(
        "queue: widening per minute",
        default=0.0,
        validators=[MinValueValidator(0.0)],
        help_text="How much the lowest win chance drops for each minute spent waiting (0.02 = two points a "
        "minute). 0 keeps the window fixed.",
    )
    queue_widest_min_win_probability = models.FloatField(
        "queue: widest lowest win chance",
        default=0.05,
        help_text="Widening never lowers the lowest win chance below this.",
    )
    queue_timeout_seconds = models.PositiveIntegerField(
        "queue timeout (seconds)",
        default=300,
        validators=[MinValueValidator(10)],
        help_text="A search with no pairing ends after this long. Searching counts as activity: the player's "
        "RD clock restarts without growing.",
    )

    queue_formats = models.CharField(
        "queue formats",
        max_length=120,
        default="1v1",
        blank=True,
        help_text="The games the queue forms: 1 v 1, two teams (2 v 2 to 4 v 4, or N players split in two teams, "
        "uneven where the ladder allows), free-for-all of 3 to 8. A player may search several at once. None: "
        "results are only reported after play.",
    )
    rematch_cooldown_minutes = models.PositiveIntegerField(
        "queue: rematch cooldown (minutes)",
        default=10,
        help_text="Two players who just played each other are not paired again for this long.",
    )
    queue_separate_shared_addresses = models.BooleanField(
        "queue: keep accounts sharing an address apart",
        default=False,
        help_text="Two accounts that signed in from one address in the last 90 days are never put in one game "
        "by the queue (Pokémon Showdown's rule). Off: a household on one connection plays each other, and the "
        "fair-play watch holds their results for a moderator.",
    )

    # The life of a match the queue paired (docs/rules.md §13)
    ready_window_seconds = models.PositiveIntegerField(
        "ready check (seconds)",
        default=60,
        validators=[MaxValueValidator(3_600)],
        help_text="When the queue pairs two players, each must press Ready within this many seconds or the match "
        "is cancelled: the ready player searches again at the front, the absent one gets a queue cooldown. "
        "0 turns the ready check off.",
    )
    play_window_minutes = models.PositiveIntegerField(
        "play window (minutes)",
        default=180,
        validators=[MinValueValidator(5)],
        help_text="A paired match with no result this long after both were ready expires unrated.",
    )
    best_of = models.PositiveSmallIntegerField(
        "best of",
        default=1,
        choices=[(1, "1"), (3, "3"), (5, "5"), (7, "7")],
        help_text="A match the queue pairs is a series of this many games at most; the first to win a majority "
        "wins it. 1: one game.",
    )
    rate_each_game = models.BooleanField(
        "rate each game of a series",
        default=False,
        help_text="Rate every game of a series; off: the series is rated once, as one result (its winner beat "
        "its loser).",
    )
    forfeits_rated = models.BooleanField(
        "rate forfeits",
        default=True,
        help_text="A no-show claim the opponent leaves unanswered is a forfeit: rated as a win for the player who "
        "claimed it, or, if off, recorded without changing ratings.",
    )
    missed_ready_first_minutes = models.PositiveIntegerField(
        "missed ready: first cooldown (minutes)",
        default=10,
        help_text="A first missed ready check is a warning; the second bans searching in this ladder for this long.",
    )
    missed_ready_repeat_minutes = models.PositiveIntegerField(
        "missed ready: later cooldowns (minutes)",
        default=30,
        help_text="The third and later missed ready checks ban searching for this long.",
    )
    missed_ready_forget_minutes = models.PositiveIntegerField(
        "missed ready: forgotten after (minutes)",
        default=60,
        validators=[MinValueValidator(1)],
        help_text="Missed ready checks are forgotten after this long without a new one.",
    )

    # Results
    confirmation_hours = models.PositiveIntegerField(
        "confirmation window (hours)",
        default=24,
        validators=[MinValueValidator(1)],
        help_text="A reported result nobody answered is confirmed automatically after this many hours.",
    )
    trusted_reporters = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="trusted_in_ladders",
        help_text="Game servers and bots whose reports in this ladder are confirmed at once, even for games "
        "they did not play.",
    )
    # Fair play: limits on results reported after play (trusted reporters and moderators are exempt).
    report_limit_per_hour = models.PositiveIntegerField(
        "opponents reported per hour",
        default=10,
        help_text="A player's reports of games played outside the queue may name at most this many opponents in "
        "one hour, each player of another side counting (a free-for-all of eight names seven); a report alone "
        "in its hour is never refused. Results of games the queue paired don't count. 0 turns the limit off.",
    )
    pair_limit_per_day = models.PositiveIntegerField(
        "results per pair per day",
        default=6,
        help_text="At most this many results of games played outside the queue between the same two players "
        "in 24 hours, whoever reports them. 0 turns the limit off.",
    )
    backdate_hours = models.PositiveIntegerField(
        "backdating window (hours)",
        default=6,
        help_text="A player reporting a game played outside the queue may date it at most this many hours back. "
        "0 turns the rule off.",
    )
    new_account_hours = models.PositiveIntegerField(
        "new accounts (hours)",
        default=24,
        help_text="For this many hours after signing up, an account can report only games the queue paired it "
        "in, not games played elsewhere. 0 turns the rule off.",
    )
    review_unanswered_reports = models.PositiveIntegerField(
        "hold after unanswered reports",
        default=3,
        help_text="A result does not confirm itself when its reporter has this many unanswered reports (this "
        "one included) against the same player: it waits for the opponent or a moderator. 0 turns it off.",
    )
    review_one_sided_results = models.PositiveIntegerField(
        "hold one-sided series of",
        default=5,
        help_text="A result does not confirm itself when the two players have this many results in 7 days "
        "(this one included) and the same player won at least 80% of them. 0 turns it off.",
    )
    review_many_opponents = models.PositiveIntegerField(
        "hold reports naming",
        default=2,
        help_text="A result of a game played outside the queue that names at least this many players of other "
        "sides (a team game, a free-for-all) does not confirm itself: it confirms once a player of each other "
        "side has, or a moderator decides. 0 turns it off.",
    )
    # The fair-play watch of every rated result, queue games included (docs/rules.md §15).
    watch_quick_seconds = models.PositiveIntegerField(
        "quick games (seconds)",
        default=120,
        help_text="A game shorter than this is quick: by its game length field, else (a game the queue paired) "
        "from its start to its report. 0: no game is quick, and the watch looks at nothing.",
    )
    watch_new_days = models.PositiveIntegerField(
        "new accounts (days)",
        default=7,
        help_text="The watch counts an account younger than this, or with fewer rated games here than the next "
        "setting, as new.",
    )
    watch_new_games = models.PositiveIntegerField(
        "new accounts (rated games)",
        default=5,
        help_text="An account with fewer rated games in this ladder than this is new to the watch.",
    )
    watch_boost_results = models.PositiveIntegerField(
        "hold quick wins over new accounts",
        default=2,
        help_text="A result waits for a moderator (its players' confirmations do not rate it) when its winner "
        "has this many quick wins in 24 hours, this one included, over new accounts or accounts that met nobody "
        "else; an automatic report is filed. 0 turns it off.",
    )
    watch_warn_at = models.PositiveIntegerField(
        "warn at marks",
        default=3,
        help_text="Each player's last 7 watched results are kept: a quick loss is a sandbagging mark, a quick win "
        "over an opponent already beaten quickly there a boosting mark. At this many marks the player is "
        "warned. 0 turns warnings off.",
    )
    watch_report_at = models.PositiveIntegerField(
        "report at marks",
        default=4,
        help_text="At this many marks in the last 7 watched results an automatic report goes to the moderators. "
        "0 turns it off.",
    )
    watch_shared_prints = models.BooleanField(
        "hold results between accounts sharing an address",
        default=True,
        help_text="A rated result whose opponents signed in from one address (a keyed hash of it, kept at each "
        "sign-in) in the last 90 days waits for a moderator, and an automatic report is filed. Nothing is "
        "refused: a household on one connection plays as usual, a moderator confirms its results.",
    )
    refund_days = models.PositiveIntegerField(
        "refund window (days)",
        default=3,
        validators=[MinValueValidator(1), MaxValueValidator(365)],
        help_text="A refund to the victims of a booster or cheater covers the rated games they played in this many "
        "days before the refund.",
    )
    refund_games = models.PositiveIntegerField(
        "refund window (games)",
        default=40,
        validators=[MinValueValidator(1), MaxValueValidator(1000)],
        help_text="A refund covers at most this many of those games, the latest.",
    )
    refund_cap = models.FloatField(
        "refund cap (points)",
        default=150.0,
        validators=[MinValueValidator(0.0), MaxValueValidator(1000.0)],
        help_text="The most one victim gets back from one refund.",
    )
    ranked_min_games = models.PositiveIntegerField(
        "ranked after games",
        default=5,
        help_text="A player is ranked only after this many rated games (besides a low enough RD).",
    )
    ranked_max_idle_days = models.PositiveIntegerField(
        "ranked while active (days)",
        default=30,
        help_text="A player is ranked only with a game in this many days. 0 turns the rule off.",
    )

    # Match formats
    allow_draws = models.BooleanField(default=True, help_text="Whether a game may end in a draw.")
    allow_one_vs_one = models.BooleanField("1 v 1", default=True, help_text="Games between two players.")
    allow_teams = models.BooleanField(
        "teams", default=False, help_text="Games between two teams of the same size (2 v 2, 3 v 3, 4 v 4)."
    )
    allow_uneven_teams = models.BooleanField(
        "uneven teams",
        default=False,
        help_text="Games between teams of different sizes (2 v 3, 1 v 7), Widelands style. The smaller team "
        "is padded with null players.",
    )
    allow_free_for_all = models.BooleanField(
        "free-for-all", default=False, help_text="Games of three or more players or teams, ranked by placement."
    )
    max_players = models.PositiveSmallIntegerField(
        "most players in a game",
        default=MAX_PLAYERS_PER_MATCH,
        validators=[MinValueValidator(2), MaxValueValidator(MAX_PLAYERS_PER_MATCH)],
        help_text=f"The largest number of players in one game, counting every side (2 to {MAX_PLAYERS}).",
    )

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = LadderQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        permissions = [
            ("trusted_reporter", "Can report results that are confirmed at once in every ladder"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(initial_rd__gt=0), name="ladder_initial_rd_positive"),
            models.CheckConstraint(condition=Q(rd_max__gte=models.F("initial_rd")), name="ladder_rd_max_gte_initial"),
            models.CheckConstraint(condition=Q(rd_growth_per_day__gte=0), name="ladder_sc_not_negative"),
            models.CheckConstraint(
                condition=Q(luck_p__gte=LUCK_P_MIN, luck_p__lte=LUCK_P_MAX), name="ladder_luck_p_range"
            ),
            models.CheckConstraint(
                condition=Q(win_chance_slope__gte=WIN_CHANCE_SLOPE_MIN, win_chance_slope__lte=WIN_CHANCE_SLOPE_MAX),
                name="ladder_win_chance_slope_range",
            ),
            models.CheckConstraint(condition=Q(glicko_c__gte=0), name="ladder_glicko_c_not_negative"),
            models.CheckConstraint(condition=Q(rating_period_days__gt=0), name="ladder_rating_period_positive"),
            models.CheckConstraint(condition=Q(initial_volatility__gt=0), name="ladder_volatility_positive"),
            models.CheckConstraint(condition=Q(tau__gt=0), name="ladder_tau_positive"),
            models.CheckConstraint(condition=Q(elo_k__gt=0), name="ladder_elo_k_positive"),
            models.CheckConstraint(condition=Q(trueskill_beta__gt=0), name="ladder_trueskill_beta_positive"),
            models.CheckConstraint(condition=Q(trueskill_tau__gte=0), name="ladder_trueskill_tau_not_negative"),
            models.CheckConstraint(
                condition=Q(draw_probability__gte=0, draw_probability__lt=1), name="ladder_draw_probability_range"
            ),
            models.CheckConstraint(condition=Q(newcomer_cap__gt=0), name="ladder_newcomer_cap_positive"),
            models.CheckConstraint(
                condition=Q(snapshot_size__gte=1, snapshot_size__lte=SNAPSHOT_SIZE_MAX),
                name="ladder_snapshot_size_range",
            ),
            models.CheckConstraint(condition=Q(provisional_rd__gt=0), name="ladder_provisional_rd_positive"),
            models.CheckConstraint(
                condition=Q(queue_min_win_probability__gt=0, queue_min_win_probability__lt=0.5),
                name="ladder_queue_window_range",
            ),
            models.CheckConstraint(
                condition=Q(queue_widest_min_win_probability__gt=0)
                & Q(queue_widest_min_win_probability__lte=models.F("queue_min_win_probability")),
                name="ladder_queue_widest_range",
            ),
            models.CheckConstraint(condition=Q(queue_widening_per_minute__gte=0), name="ladder_widening_not_negative"),
            models.CheckConstraint(
                condition=Q(max_players__gte=2, max_players__lte=MAX_PLAYERS_PER_MATCH), name="ladder_max_players_range"
            ),
            models.CheckConstraint(
                condition=Q(allow_one_vs_one=True)
                | Q(allow_teams=True)
                | Q(allow_uneven_teams=True)
                | Q(allow_free_for_all=True),
                name="ladder_some_format_allowed",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("ladder:detail", kwargs={"slug": self.slug})

    def clean(self) -> None:
        """Reject impossible settings, each with a message that says why."""
        errors: dict[str, list[str]] = {}

        def add(field: str, message: str) -> None:
            errors.setdefault(field, []).append(message)

        if self.initial_rd is not None and self.initial_rd <= 0:
            add("initial_rd", "The initial RD must be above 0: an RD of 0 would mean perfect certainty.")
        if self.rd_max is not None and self.initial_rd is not None and self.rd_max < self.initial_rd:
            add(
                "rd_max",
                f"The RD cap ({self.rd_max:g}) is below the initial RD ({self.initial_rd:g}): new players would "
                "start more uncertain than anyone may ever be. Raise the cap or lower the initial RD.",
            )
        if self.rd_min is not None and self.rd_max is not None and self.rd_min > self.rd_max:
            add("rd_min", f"The RD floor ({self.rd_min:g}) is above the RD cap ({self.rd_max:g}). Lower the floor.")
        if self.rd_growth_per_day is not None and self.rd_growth_per_day < 0:
            add("rd_growth_per_day", "SC cannot be negative: idle time can only make a rating less certain.")
        if self.luck_p is not None and not LUCK_P_MIN <= self.luck_p <= LUCK_P_MAX:
            if self.luck_p < LUCK_P_MIN:
                add(
                    "luck_p",
                    f"Luck P {self.luck_p:g} is below {LUCK_P_MIN_SHOWN}: the winner of a big upset would lose "
                    f"rating. Use a value between {LUCK_P_MIN_TEXT} and {LUCK_P_MAX:g}.",
                )
            else:
                add(
                    "luck_p",
                    f"Luck P {self.luck_p:g} is above {LUCK_P_MAX:g}: it is a probability, at most 1 (no luck).",
                )
        if self.glicko_c is not None and self.glicko_c < 0:
            add("glicko_c", "Glicko-1 c cannot be negative: idle time can only make a rating less certain.")
        if self.rating_period_days is not None and self.rating_period_days <= 0:
            add("rating_period_days", "A rating period must last more than 0 days.")
        if self.initial_volatility is not None and self.initial_volatility <= 0:
            add("initial_volatility", "The initial volatility must be above 0 (Glicko-2 suggests 0.06).")
        if self.tau is not None and self.tau <= 0:
            add("tau", "τ must be above 0 (Glickman suggests 0.3 to 1.2).")
        if self.elo_k is not None and self.elo_k <= 0:
            add("elo_k", "K must be above 0, or no game would change a rating.")
        if self.trueskill_beta is not None and self.trueskill_beta <= 0:
            add("trueskill_beta", "β must be above 0: a performance that never varies would make every result certain.")
        if self.trueskill_tau is not None and self.trueskill_tau < 0:
            add("trueskill_tau", "τ cannot be negative: it can only make a rating less certain.")
        if self.draw_probability is not None and not 0 <= self.draw_probability < 1:
            add("draw_probability", "The draw probability must be from 0 to below 1 (1 would make every game a draw).")
        if self.provisional_rd is not None and self.provisional_rd <= 0:
            add("provisional_rd", "The provisional threshold must be above 0, or every rating would be provisional.")
        p = self.queue_min_win_probability
        if p is not None and not 0 < p < 0.5:
            add(
                "queue_min_win_probability",
                f"The lowest win chance must be between 0 and 0.5 (exclusive), got {p:g}: the window runs from it "
                "to 1 minus it, so 0.5 or more would leave no room for any pairing.",
            )
        widest = self.queue_widest_min_win_probability
        if widest is not None and p is not None and not 0 < widest <= p:
            add(
                "queue_widest_min_win_probability",
                f"The widest lowest win chance ({widest:g}) must be above 0 and at most the lowest win chance "
                f"({p:g}): widening only makes the window larger.",
            )
        if self.queue_widening_per_minute is not None and self.queue_widening_per_minute < 0:
            add("queue_widening_per_minute", "Widening cannot be negative; use 0 to keep the window fixed.")
        formats = (self.allow_one_vs_one, self.allow_teams, self.allow_uneven_teams, self.allow_free_for_all)
        if not any(formats):
            add("allow_one_vs_one", "Allow at least one game format, or no game could be reported.")
        if self.max_players is not None:
            needs = [
                (self.allow_teams, 4, "Team games need at least 4 players (2 v 2)"),
                (self.allow_uneven_teams, 3, "Uneven team games need at least 3 players (1 v 2)"),
                (self.allow_free_for_all, 3, "A free-for-all needs at least 3 players"),
            ]
            for allowed, least, why in needs:
                if allowed and self.max_players < least:
                    add("max_players", f"{why}; the most players in a game is {self.max_players}.")
        self._clean_queue_formats(add)
        if errors:
            raise ValidationError(errors)

    def _clean_queue_formats(self, add: Callable[[str, str], None]) -> None:
        codes = self.queue_format_codes
        if len(set(codes)) != len(codes):
            add("queue_formats", "Name each format once.")
        for code in codes:
            why = self._format_problem(code)
            if why:
                add("queue_formats", why)

    def _format_problem(self, code: str) -> str:
        return formats.problem(
            code,
            one_vs_one=self.allow_one_vs_one,
            teams=self.allow_teams,
            uneven=self.allow_uneven_teams,
            free_for_all=self.allow_free_for_all,
            most=self.max_players or MAX_PLAYERS_PER_MATCH,
        )

    @property
    def queue_format_codes(self) -> list[str]:
        """``queue_formats`` as a list of codes ("1v1,2v2" → ["1v1", "2v2"])."""
        return [code.strip() for code in (self.queue_formats or "").split(",") if code.strip()]

    @property
    def queue_format_list(self) -> list[formats.Format]:
        """The formats the queue offers, in the order of ``formats.FORMATS`` (unknown codes left out)."""
        codes = set(self.queue_format_codes)
        return [f for f in formats.FORMATS.values() if f.code in codes and not self._format_problem(f.code)]

    @property
    def offers_duel(self) -> bool:
        return formats.DUEL in self.queue_format_list

    def engine_params(self) -> Params:
        """This ladder's constants as the engines' ``Params`` (docs/rules.md §1–§9)."""
        return Params(
            sc=self.rd_growth_per_day,
            luck_p=self.luck_p,
            rd_max=self.rd_max,
            c=self.glicko_c,
            tau=self.tau,
            k=self.elo_k,
            initial_rd=self.initial_rd,
            team_delta=TEAM_DELTA[TeamUpdate(self.team_update)],
            beta=self.trueskill_beta,
            dynamics=self.trueskill_tau,
            draw_probability=self.draw_probability,
            period_days=self.rating_period_days,
            rd_min=self.rd_min,
            newcomer_games=self.newcomer_games,
            newcomer_cap=self.newcomer_cap,
        )

    def shown_chance(self, probability: float) -> float:
        """A win chance as players see it: the engine's ``probability`` through ``win_chance_slope``."""
        return recalibrated(probability, self.win_chance_slope)

    def get_engine(self) -> Engine:
        """The rating engine with this ladder's constants (rebuilt if the constants change)."""
        key = (self.engine, self.engine_params())
        cached = getattr(self, "_engine_cache", None)
        if cached is None or cached[0] != key:
            cached = (key, get_engine(self.engine, key[1]))
            self._engine_cache = cached
        return cached[1]

    @property
    def queue_max_win_probability(self) -> float:
        return 1.0 - self.queue_min_win_probability

    @property
    def has_team_formats(self) -> bool:
        return self.allow_teams or self.allow_uneven_teams or self.allow_free_for_all

    @property
    def format_labels(self) -> list[str]:
        labels = []
        if self.allow_one_vs_one:
            labels.append("1 v 1")
        if self.allow_teams:
            labels.append("teams")
        if self.allow_uneven_teams:
            labels.append("uneven teams")
        if self.allow_free_for_all:
            labels.append("free-for-all")
        return labels
