from __future__ import annotations

from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_in, user_logged_out
from django.db.models.signals import post_migrate


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from accounts.prints import record_sign_in
        from accounts.sessions import end_sessions_on_reset, forget_session, record_session
        from accounts.signals import account_deleted, password_set
        from accounts.sync import site_sync_after_migrate
        from accounts.two_factor import forget_devices, mark_sign_in

        # The moderators' group and the periodic tasks, after every migrate and test flush.
        post_migrate.connect(site_sync_after_migrate, dispatch_uid="accounts.sync")
        # A keyed hash of the address and of the browser of every sign-in (docs/security.md).
        user_logged_in.connect(record_sign_in, dispatch_uid="accounts.prints")
        # The sessions Settings lists: made at sign-in, gone at sign-out, ended by a reset.
        user_logged_in.connect(record_session, dispatch_uid="accounts.sessions.record")
        user_logged_out.connect(forget_session, dispatch_uid="accounts.sessions.forget")
        # What a new sign-in owes before it opens anything: a code, or setting up an app.
        user_logged_in.connect(mark_sign_in, dispatch_uid="accounts.two_factor")
        account_deleted.connect(forget_devices, dispatch_uid="accounts.two_factor.deleted")
        password_set.connect(end_sessions_on_reset, dispatch_uid="accounts.sessions.reset")
