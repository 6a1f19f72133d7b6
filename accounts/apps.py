from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from accounts.sync import site_sync_after_migrate

        # The moderators' group and the periodic tasks, after every migrate and test flush.
        post_migrate.connect(site_sync_after_migrate, dispatch_uid="accounts.sync")
