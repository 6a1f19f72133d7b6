"""Ladders and matches: the domain's models, ranking, services, selectors and pages."""
