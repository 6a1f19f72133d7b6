from django.apps import AppConfig


class StatsConfig(AppConfig):
    name = "stats"
    verbose_name = "Statistics and head-to-head records"

    def ready(self) -> None:
        """Follow every rated match, every correction of its details and every replay (``ratings.hooks``)."""
        from ratings import hooks
        from stats.services import stats_add_matches, stats_rebuild, stats_remove_matches
        from stats.sql import rated_ctes

        hooks.on_rated(stats_add_matches, ctes=rated_ctes)
        hooks.on_unrated(stats_remove_matches)
        hooks.on_replayed(stats_rebuild)
