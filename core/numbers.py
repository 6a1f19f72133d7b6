"""Numbers as every page, notification and webhook summary writes them."""

from __future__ import annotations

MINUS = "\u2212"  # a typographic minus: "−11" lines up with "+11", as a hyphen does not


def signed(value: float) -> str:
    """A rating change in whole points: "+12", "−11", and "±0" for anything that rounds to zero."""
    text = f"{value:+.0f}"
    if text in ("+0", "-0"):
        return "±0"
    return text.replace("-", MINUS)
