from django.apps import AppConfig


class MatchmakingConfig(AppConfig):
    name = "matchmaking"
    verbose_name = "Matchmaking"

    def ready(self) -> None:
        from ladder.matches.settling import register_settler
        from matchmaking.lifecycle import settle

        register_settler(settle)  # a queue match's deadlines are settled before its page is drawn

        from accounts.signals import account_deleted
        from matchmaking.services import on_account_deleted

        account_deleted.connect(on_account_deleted, dispatch_uid="matchmaking.leave_for_account")
