"""The matchmaking queue (SPEC.md §6) lives here."""
