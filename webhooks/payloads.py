"""The bodies a delivery posts: Discord's message with an embed, or the signed generic JSON.

Both are built once, when the event happens, and stored byte for byte on the delivery;
a retry posts the same bytes. Discord's limits (content 2,000 characters, 25 fields of
1,024, 6,000 characters in an embed) are kept here, so a long summary is cut rather than
refused by Discord with a 400 that would count as a failure.
"""

from __future__ import annotations

import json
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
    TEST_EVENT: "Test event",
}


def cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, an ellipsis marking a cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


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

    ``allowed_mentions`` is empty so a player named "@everyone" pings nobody.
    """
    title = cut(EVENT_TITLES.get(event, event), TITLE_MAX)
    description = cut(f"Ladder: {ladder['name']}", DESCRIPTION_MAX)
    fields = []
    used = len(title) + len(description)
    scalars = [(key, value) for key, value in data.items() if isinstance(value, str | int | float) and value != ""]
    for key, value in scalars[:FIELDS_MAX]:  # lists and objects are for bots: the JSON format has them
        name = cut(str(key).replace("_", " ").capitalize() or "-", FIELD_NAME_MAX)
        text = cut(str(value), FIELD_VALUE_MAX)
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
    return {"content": cut(summary, CONTENT_MAX), "embeds": [embed], "allowed_mentions": {"parse": []}}
