from django.apps import AppConfig


class StatsConfig(AppConfig):
    name = "stats"
    verbose_name = "Statistics and head-to-head records"

    def ready(self) -> None:
        """Follow every rated match and every replay (``ratings.hooks``), in their transactions."""
        from ratings import hooks
        from stats.services import stats_add_matches, stats_rebuild

        hooks.on_rated(stats_add_matches)
        hooks.on_replayed(stats_rebuild)
