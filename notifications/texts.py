"""The words of each notification: a title, one sentence and a link, from its ``data``.

``data`` holds what the text needs as it was at the event (names, the deadline, the rating
change), so a list of notifications is drawn without reading the matches again. The page,
the API and the mails all take their words from here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.urls import NoReverseMatch, reverse
from django.utils.dateparse import parse_datetime

from core.moments import moment_text
from core.numbers import signed
from notifications.models import Kind, Notification


@dataclass(frozen=True, slots=True)
class Text:
    title: str
    body: str
    url: str  # a path on this site


def _when(value: Any) -> str:
    moment = parse_datetime(value) if isinstance(value, str) else value
    if not isinstance(moment, datetime):
        return "soon"
    return moment_text(moment)  # in the active zone: the reader's page, the recipient's mail, the API's UTC


def _signed(value: Any) -> str:
    """A change as the pages write it ("−11", core.numbers.signed); "" for no number."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return ""
    return signed(number)


def _names(value: Any) -> str:
    names = [str(name) for name in value] if isinstance(value, list) else []
    if not names:
        return "your opponent"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _paired(d: dict[str, Any]) -> tuple[str, str]:
    team = f" with {_names(d.get('teammates'))}" if d.get("teammates") else ""
    return (
        f"Paired in {d.get('ladder', 'the ladder')}",
        f"You play{team} against {_names(d.get('opponents'))}. Play the game, then report the result on the "
        "match page.",
    )


def _party_invited(d: dict[str, Any]) -> tuple[str, str]:
    return (
        f"{d.get('by', 'Someone')} invites you to a party",
        f"{d.get('by', 'Someone')} asks you to search together in {d.get('ladder', 'a ladder')}, always on one "
        f"team. Accept or decline on the ladder's page by {_when(d.get('deadline'))}.",
    )


def _awaiting(d: dict[str, Any]) -> tuple[str, str]:
    return (
        "A result awaits your answer",
        f"{d.get('reporter', 'Your opponent')} reported {d.get('result', 'a result')} "
        f"in {d.get('ladder', 'a ladder')}. "
        f"Confirm or dispute it by {_when(d.get('deadline'))}; after that it confirms itself.",
    )


def _reminder(d: dict[str, Any]) -> tuple[str, str]:
    return (
        "A result confirms itself soon",
        f"The result {d.get('reporter', 'your opponent')} reported in {d.get('ladder', 'a ladder')} "
        f"confirms itself at {_when(d.get('deadline'))} unless you dispute it.",
    )


def _rated(d: dict[str, Any]) -> tuple[str, str]:
    change = _signed(d.get("delta"))
    rating = d.get("rating")
    after = f" Your rating is now {float(rating):.0f} ({change})." if rating is not None and change else ""
    return (
        f"Match rated in {d.get('ladder', 'the ladder')}",
        f"Your {d.get('result', 'match')} against {_names(d.get('opponents'))} is confirmed and rated.{after}",
    )


def _disputed(d: dict[str, Any]) -> tuple[str, str]:
    reason = d.get("reason") or "no reason given"
    return (
        f"Result disputed in {d.get('ladder', 'the ladder')}",
        f"{d.get('by', 'A player')} disputed the result ({reason}). A moderator will decide.",
    )


_DECISIONS = {
    "void": "voided the match",
    "correct": "corrected the result",
    "confirm": "confirmed the result",
    "adjust": "adjusted your rating",
    "withdraw": "withdrew an adjustment of your rating",
}


def _sentence(reason: Any) -> str:
    """A moderator's reason as the end of a sentence: one full stop, not two ("finished..")."""
    text = str(reason or "").strip() or "none given"
    return text if text.endswith((".", "!", "?")) else text + "."


def _decision(d: dict[str, Any]) -> tuple[str, str]:
    if d.get("action") == "lift":
        return (
            "Your suspension was lifted",
            f"A moderator lifted your suspension from {d.get('ladder', 'the ladder')}: you can search and report "
            "results there again.",
        )
    action = _DECISIONS.get(str(d.get("action")), "made a decision")
    change = _signed(d.get("delta"))
    by = f" by {change}" if change and d.get("action") == "adjust" else ""
    return (
        f"A moderator {action}",
        f"In {d.get('ladder', 'the ladder')}, a moderator {action}{by}. Reason: {_sentence(d.get('reason'))}",
    )


def _expired(d: dict[str, Any]) -> tuple[str, str]:
    return (
        "Your search expired",
        f"No opponent was found in {d.get('ladder', 'the ladder')} before your search expired. Searching counts "
        "as activity, so your rating did not grow less certain. Search again any time.",
    )


def _webhook_paused(d: dict[str, Any]) -> tuple[str, str]:
    return (
        f"Webhook “{d.get('webhook', '')}” paused",
        f"It failed {d.get('failures', 10)} times in a row ({d.get('reason', 'no answer')}). "
        "Fix its URL and resume it in the admin.",
    )


_CANCEL_REASONS = {
    "ready_missed": "{absent} did not press Ready in time",
    "agreed": "both sides agreed to cancel it",
    "expired": "no result was reported within the play window",
    "moderator": "a moderator cancelled it",
    "forfeit": "it ended by forfeit",
}


def _cancelled(d: dict[str, Any]) -> tuple[str, str]:
    reason = _CANCEL_REASONS.get(str(d.get("reason")), "it was cancelled").format(absent=_names(d.get("absent")))
    after = {
        "requeued": " You are searching again, with your waiting time kept.",
        "warned": " This time it is a warning"
        + (f": you can search again from {_when(d['banned_until'])};" if d.get("banned_until") else ";")
        + " missing another ready check soon bans searching for a while.",
        "banned": f" You can search in this ladder again from {_when(d.get('banned_until'))}.",
    }.get(str(d.get("after")), "")
    return (
        f"Match cancelled in {d.get('ladder', 'the ladder')}",
        f"Your match against {_names(d.get('opponents'))} was cancelled because {reason}. It is not rated.{after}",
    )


def _cancel_requested(d: dict[str, Any]) -> tuple[str, str]:
    return (
        "Your opponent asks to cancel",
        f"{d.get('by', 'Your opponent')} asks to cancel your match in {d.get('ladder', 'the ladder')}. "
        "If you agree, press “Agree to cancel” on the match page; it is then not rated.",
    )


def _no_show(d: dict[str, Any]) -> tuple[str, str]:
    rated = "a loss for you" if d.get("rated", True) else "a forfeit (not rated)"
    return (
        # The claimer by name: "your opponent" is wrong for a team, who has several.
        f"{d['by']} says you did not play" if d.get("by") else "A no-show is claimed against you",
        f"{d.get('by', 'A player')} says you did not play your match in {d.get('ladder', 'the ladder')}. "
        f"Answer on the match page by {_when(d.get('deadline'))}; unanswered, it counts as {rated}.",
    )


def _forfeit(d: dict[str, Any]) -> tuple[str, str]:
    rated = "It is rated." if d.get("rated", True) else "It is recorded but not rated in this ladder."
    return (
        f"Match ended by forfeit in {d.get('ladder', 'the ladder')}",
        f"{d.get('absent', 'A player')} {'conceded' if d.get('conceded') else 'did not answer'} the no-show claim"
        f"{'' if d.get('conceded') else ' in time'}, so {d.get('winner', 'the other side')} wins by forfeit. {rated}",
    )


def _commented(d: dict[str, Any]) -> tuple[str, str]:
    excerpt = str(d.get("excerpt", "")).strip()
    quoted = f": “{excerpt}”" if excerpt else "."
    return (
        f"{d.get('by', 'Someone')} commented on your match",
        f"In {d.get('ladder', 'the ladder')}, {d.get('by', 'someone')} wrote{quoted}",
    )


def _suspended(d: dict[str, Any]) -> tuple[str, str]:
    until = f"until {_when(d.get('ends_at'))}" if d.get("ends_at") else "until a moderator lifts it"
    return (
        f"Suspended from {d.get('ladder', 'a ladder')}",
        f"You cannot search or report results in {d.get('ladder', 'the ladder')} {until}. "
        f"Reason: {_sentence(d.get('reason'))}",
    )


def _fair_play(d: dict[str, Any]) -> tuple[str, str]:
    ladder = d.get("ladder", "a ladder")
    return (
        f"A fair-play warning in {ladder}",
        f"{d.get('marks', 'Several')} of your last {d.get('of', 7)} results in {ladder} were quick losses, or quick "
        "wins over an opponent you had already beaten quickly. Losing on purpose, or letting someone win, breaks "
        "the ladder's rules; if it goes on, the moderators are told. Nothing has changed yet.",
    )


def _report_outcome(d: dict[str, Any]) -> tuple[str, str]:
    player, ladder = d.get("player", "a player"), d.get("ladder", "a ladder")
    if d.get("acted"):
        return (
            f"Your report about {player} was acted on",
            f"A moderator looked into your report about {player} in {ladder} and took action. "
            "What they did stays between the moderators and the player. Thank you for telling us.",
        )
    return (
        f"Your report about {player} was looked into",
        f"A moderator looked into your report about {player} in {ladder} and found nothing to act on for now. "
        "If it happens again, report it again. Thank you for telling us.",
    )


def _season_ended(d: dict[str, Any]) -> tuple[str, str]:
    season, ladder = d.get("season", "The season"), d.get("ladder", "the ladder")
    badge = f" You earned the “{d['badge']}” badge." if d.get("badge") else ""
    return (
        f"{season} of {ladder} ended",
        f"You finished ranked #{d.get('rank', '?')} of {d.get('ranked', '?')}.{badge}",
    )


def _tournament(d: dict[str, Any]) -> tuple[str, str]:
    name, event = d.get("tournament", "A tournament"), d.get("event")
    if event == "registered":
        return f"You are entered in {name}", f"{d.get('entry', 'Your entry')} is registered for {name}."
    if event == "paired":
        return (
            f"{name}, round {d.get('round', '?')}: you play {d.get('opponent', 'your opponent')}",
            f"Round {d.get('round', '?')} of {name} pairs you with {d.get('opponent', 'your opponent')}. "
            f"Play by {_when(d.get('deadline'))}; after that a moderator decides the game.",
        )
    if event == "check_in":
        return (
            f"Check in for {name}",
            f"Check-in for {name} is open: check in on its page before it starts at {_when(d.get('starts_at'))}, "
            "or your entry does not play.",
        )
    if event == "withdrawn":
        return f"Withdrawn from {name}", f"Your entry no longer plays in {name}. Reason: {_sentence(d.get('reason'))}"
    if event == "finished":
        return (
            f"{name} is over: you finished #{d.get('rank', '?')}",
            f"{name} ended; you finished #{d.get('rank', '?')} of {d.get('entries', '?')}.",
        )
    if event == "cancelled":
        return f"{name} was cancelled", f"{name} was called off. Reason: {_sentence(d.get('reason'))}"
    return f"News of {name}", f"Something changed in {name}."


WORDS: dict[str, Callable[[dict[str, Any]], tuple[str, str]]] = {
    Kind.PAIRED: _paired,
    Kind.RESULT_AWAITING: _awaiting,
    Kind.CONFIRM_REMINDER: _reminder,
    Kind.RATED: _rated,
    Kind.DISPUTED: _disputed,
    Kind.DECISION: _decision,
    Kind.SEARCH_EXPIRED: _expired,
    Kind.WEBHOOK_PAUSED: _webhook_paused,
    Kind.MATCH_CANCELLED: _cancelled,
    Kind.CANCEL_REQUESTED: _cancel_requested,
    Kind.NO_SHOW_CLAIMED: _no_show,
    Kind.FORFEIT: _forfeit,
    Kind.COMMENTED: _commented,
    Kind.SUSPENDED: _suspended,
    Kind.PARTY_INVITED: _party_invited,
    Kind.SEASON_ENDED: _season_ended,
    Kind.TOURNAMENT: _tournament,
    Kind.FAIR_PLAY: _fair_play,
    Kind.REPORT_OUTCOME: _report_outcome,
}


def _url(notification: Notification) -> str:
    data = notification.data or {}
    try:
        if notification.kind == Kind.WEBHOOK_PAUSED and data.get("webhook_id"):
            return reverse("admin:webhooks_webhook_change", args=[data["webhook_id"]])
        if notification.match_id:
            return reverse("ladder:match", args=[notification.match_id])
        if data.get("season_url"):
            return str(data["season_url"])
        if data.get("tournament_url"):
            return str(data["tournament_url"])
        if data.get("ladder_slug"):
            return reverse("ladder:detail", args=[data["ladder_slug"]])
    except NoReverseMatch:
        pass
    return reverse("notifications:list")


def describe(notification: Notification) -> Text:
    words = WORDS.get(notification.kind)
    data = dict(notification.data or {})
    title, body = words(data) if words else (notification.get_kind_display(), "")
    return Text(title, body, _url(notification))
