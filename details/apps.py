from django.apps import AppConfig


class DetailsConfig(AppConfig):
    name = "details"
    verbose_name = "Game details and statistics"
