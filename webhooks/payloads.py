"""The bodies a delivery posts: Discord's message with an embed, or the signed generic JSON.

Both are built once, when the event happens, and stored byte for byte on the delivery;
a retry posts the same bytes. Discord's limits (content 2,000 characters, 25 fields of
1,024, 6,000 characters in an embed) are kept here, so a long summary is cut rather than
refused by Discord with a 400 that would count as a failure.

Everything in a Discord message is text players or moderators wrote (names, a dispute's
reason, a ladder's name) or plain text of the site's own: none of it is meant as
Discord markdown. So the message escapes every character Discord would read as markup
(``discord_escape``): a reason cannot post a masked link, a heading, a code block or a
mention in the community's channel under the ladder's name, and ``allowed_mentions``
being empty means nobody is pinged whatever gets through. The JSON format carries the
text as written: a bot formats it itself.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from webhooks.models import TEST_EVENT, Event, Format

CONTENT_MAX = 2000
TITLE_MAX = 256
DESCRIPTION_MAX = 4096
FIELDS_MAX = 25
FIELD_NAME_MAX = 256
FIELD_VALUE_MAX = 1024
EMBED_TOTAL_MAX = 6000
DISCORD_COLOUR = 0x2F6FDE  # the site's link blue

EVENT_TITLES = {
    Event.MATCH_RATED: "Match rated",
    Event.DISPUTE_OPENED: "Dispute opened",
    Event.NEW_LEADER: "New #1",
    Event.RANK_MILESTONE: "Rank milestone",
    Event.TOURNAMENT_PAIRED: "Tournament round paired",
    Event.TOURNAMENT_RESULT: "Tournament result",
    Event.TOURNAMENT_FINISHED: "Tournament final standings",
    TEST_EVENT: "Test event",
}


# What Discord's markdown reads as markup anywhere in a line: emphasis, strike, spoiler,
# code, quote, heading, list, masked links and <@id>/<#id>/<t:…> tags, @everyone, :emoji:,
# and the backslash that escapes. Discord shows a backslashed punctuation mark as the mark.
DISCORD_MARKUP = re.compile(r"([\\*_~`|>#\-\[\]()<@:+])")
DISCORD_ORDERED_LIST = re.compile(r"^(\s*\d+)\.", re.MULTILINE)


def cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, an ellipsis marking a cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def discord_escape(text: str) -> str:
    """``text`` as Discord shows it literally: every markup character behind a backslash."""
    return DISCORD_ORDERED_LIST.sub(r"\1\\.", DISCORD_MARKUP.sub(r"\\\1", text))


def discord_cut(text: str, limit: int) -> str:
    """``text`` escaped for Discord, within ``limit`` characters: a cut never leaves an escape
    without the character it escapes."""
    escaped = discord_escape(text)
    if len(escaped) <= limit:
        return escaped
    kept = escaped[: limit - 1]
    trailing = len(kept) - len(kept.rstrip("\\"))
    return (kept[:-1] if trailing % 2 else kept) + "…"


def body_for(
    *,
    format: str,
    delivery_id: str,
    event: str,
    ladder: dict[str, Any],
    occurred_at: datetime,
    summary: str,
    url: str,
    data: dict[str, Any],
) -> str:
    """The JSON text posted for one delivery (``format`` is a ``Format`` value)."""
    if format == Format.DISCORD:
        document = discord_body(
            event=event, ladder=ladder, occurred_at=occurred_at, summary=summary, url=url, data=data
        )
    else:
        document = {
            "id": delivery_id,
            "event": event,
            "ladder": ladder,
            "occurred_at": occurred_at.isoformat(),
            "summary": summary,
            "url": url,
            "data": data,
        }
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"), default=str)


def discord_body(
    *, event: str, ladder: dict[str, Any], occurred_at: datetime, summary: str, url: str, data: dict[str, Any]
) -> dict[str, Any]:
    """Discord's execute-webhook body: the summary as the message, the details in one embed
    titled by the event and linking to it on the site.

    Every text is escaped (``discord_escape``) and ``allowed_mentions`` is empty, so a
    reason reading "@everyone" pings nobody and shows as written.
    """
    title = cut(EVENT_TITLES.get(event, event), TITLE_MAX)
    description = discord_cut(f"Ladder: {ladder['name']}", DESCRIPTION_MAX)
    fields = []
    used = len(title) + len(description)
    scalars = [(key, value) for key, value in data.items() if isinstance(value, str | int | float) and value != ""]
    for key, value in scalars[:FIELDS_MAX]:  # lists and objects are for bots: the JSON format has them
        name = cut(str(key).replace("_", " ").capitalize() or "-", FIELD_NAME_MAX)
        text = discord_cut(str(value), FIELD_VALUE_MAX)
        if used + len(name) + len(text) > EMBED_TOTAL_MAX:
            break
        used += len(name) + len(text)
        fields.append({"name": name, "value": text, "inline": len(text) <= 40})
    embed = {
        "title": title,
        "description": description,
        "url": url,
        "timestamp": occurred_at.isoformat(),
        "color": DISCORD_COLOUR,
        "fields": fields,
    }
    return {"content": discord_cut(summary, CONTENT_MAX), "embeds": [embed], "allowed_mentions": {"parse": []}}
