from django.apps import AppConfig


class ApiConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "api"
    verbose_name = "API"

    def ready(self) -> None:
        from accounts.signals import account_deleted, password_set
        from api.services import on_account_deleted, on_password_set

        password_set.connect(on_password_set, dispatch_uid="api.tokens_revoke_for_password")
        account_deleted.connect(on_account_deleted, dispatch_uid="api.tokens_delete_for_account")
