"""The help page: a glossary of the words the ladder pages use, one anchor per term.

The ladder, player and profile pages link each term to its anchor here (``/help/#rd``),
so the anchors are the page's contract: ``GLOSSARY`` lists them once for the index and
the tests. The definitions follow docs/rules.md in plain words.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

# (anchor, term) in the order the page explains them.
GLOSSARY: tuple[tuple[str, str], ...] = (
    ("rating", "Rating"),
    ("rd", "RD (rating deviation)"),
    ("gxe", "GXE (GLIXARE)"),
    ("tr", "TR"),
    ("conservative", "Conservative rating"),
    ("provisional", "Provisional"),
    ("ranked", "Ranked"),
    ("why-not-ranked", "Why not ranked"),
    ("luck-p", "Luck P"),
    ("team-update", "Team update"),
    ("trueskill", "TrueSkill"),
    ("win-probability", "Win probability"),
    ("queue-window", "The queue's window"),
    ("confirmation-window", "Confirmation window"),
    ("dispute", "Dispute"),
    ("fair-play", "Fair-play watch"),
    ("report-a-player", "Reporting a player"),
    ("refund", "Refund"),
    ("marks", "Marks"),
)


@require_GET
def help_page(request: HttpRequest) -> HttpResponse:
    return render(request, "help.html", {"terms": GLOSSARY})
