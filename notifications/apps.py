from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "notifications"
    verbose_name = "notifications"

    def ready(self) -> None:
        from accounts.signals import account_deleted
        from notifications.services import on_account_deleted

        account_deleted.connect(on_account_deleted, dispatch_uid="notifications.delete_for_account")
