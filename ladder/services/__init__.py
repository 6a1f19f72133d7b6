"""Writes to the ladder domain. Views, API views, admin actions and tasks call these."""

from ladder.services.membership import ALREADY_MEMBER, INACTIVE_ACCOUNT, NOT_MEMBER, ladder_join, ladder_leave

__all__ = ["ALREADY_MEMBER", "INACTIVE_ACCOUNT", "NOT_MEMBER", "ladder_join", "ladder_leave"]
