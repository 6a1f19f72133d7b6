from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views, views_oauth

app_name = "accounts"

urlpatterns = [
    path("accounts/signup/", views.signup, name="signup"),
    path("accounts/login/", views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/password/", views.PasswordChangeView.as_view(), name="password_change"),
    path("accounts/password/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("accounts/settings/", views.account_settings, name="settings"),
    path("accounts/settings/verify-email/", views.verification_resend, name="verification_resend"),
    path("accounts/settings/time-zone/", views.time_zone_change, name="time_zone"),
    path("accounts/settings/sessions/sign-out/", views.sessions_sign_out_others, name="sessions_sign_out"),
    path("accounts/settings/delete/", views.account_delete_page, name="delete"),
    path("accounts/two-factor/", views.two_factor_verify, name="two_factor_verify"),
    path("accounts/two-factor/setup/", views.two_factor_setup, name="two_factor_setup"),
    path("accounts/two-factor/recovery-codes/", views.two_factor_codes, name="two_factor_codes"),
    path("accounts/two-factor/recovery-codes/new/", views.two_factor_codes_new, name="two_factor_codes_new"),
    path("accounts/two-factor/off/", views.two_factor_off, name="two_factor_off"),
    path("accounts/verify-email/<str:token>/", views.verify_email, name="verify_email"),
    path("accounts/password-reset/", views.PasswordResetRequestView.as_view(), name="password_reset"),
    path(
        "accounts/password-reset/sent/",
        auth_views.PasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path(
        "accounts/password-reset/<uidb64>/<token>/",
        views.PasswordResetSetView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/password-reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    # Sign-in with Discord and with Lichess (accounts/views_oauth.py).
    path("accounts/oauth/<str:provider>/start/", views_oauth.oauth_start, name="oauth_start"),
    path("accounts/oauth/<str:provider>/link/", views_oauth.oauth_link, name="oauth_link"),
    path("accounts/oauth/<str:provider>/callback/", views_oauth.oauth_callback, name="oauth_callback"),
    path("accounts/oauth/<str:provider>/unlink/", views_oauth.oauth_unlink, name="oauth_unlink"),
    path("accounts/oauth/choose-a-name/", views_oauth.oauth_signup, name="oauth_signup"),
    path("players/<str:username>/", views.profile, name="profile"),
]
