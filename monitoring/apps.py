from django.apps import AppConfig


class MonitoringConfig(AppConfig):
    name = "monitoring"
    verbose_name = "Monitoring"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from monitoring import metrics

        metrics.task_signals_connect()
