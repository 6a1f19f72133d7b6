from django.apps import AppConfig


class ApiConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "api"
    verbose_name = "API"

    def ready(self) -> None:
        from accounts.signals import password_set
        from api.services import on_password_set

        password_set.connect(on_password_set, dispatch_uid="api.tokens_revoke_for_password")
