from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class SeasonsConfig(AppConfig):
    name = "seasons"
    verbose_name = "Seasons"

    def ready(self) -> None:
        from seasons.models import Season

        post_save.connect(_forget, sender=Season, dispatch_uid="seasons_forget_on_save")
        post_delete.connect(_forget, sender=Season, dispatch_uid="seasons_forget_on_delete")


def _forget(sender: type, instance: Any, **kwargs: Any) -> None:
    """A season changed: the ladder's cached season list is out of date."""
    from seasons.selectors import seasons_forget

    seasons_forget(instance.ladder_id)
