"""Settings for ladder, read from the environment.

With nothing set, the site runs the *embedded default*: a SQLite file in ``var/``, Celery
tasks executed eagerly in-process, and an in-memory cache. ``DATABASE_URL``,
``CELERY_BROKER_URL`` and ``CACHE_URL`` switch to PostgreSQL and Redis. ``.env.example``
lists every variable.
"""

from __future__ import annotations

import zoneinfo
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.env import (
    email_settings,
    env_bool,
    env_float,
    env_from_address,
    env_int,
    env_list,
    env_networks,
    env_origin,
    env_rate,
    env_site_url,
    env_str,
)
from core.tasks import RETRY_BACKOFF_MAX

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("LADDER_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("DEBUG", True)

_INSECURE_KEY = "django-insecure-development-key-never-use-in-production"
SECRET_KEY = env_str("SECRET_KEY", _INSECURE_KEY if DEBUG else "")
if not SECRET_KEY:
    raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off (50+ random characters).")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
SITE_NAME = env_str("SITE_NAME", "Ladder")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "django_celery_beat",
    "template_partials",
    "axes",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "core",  # no models: listed so Celery's autodiscovery finds core/tasks.py (mail)
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "accounts",
    "audit",
    "ladder",
    "ratings",
    "notifications",
    "matchmaking",
    "api",
    "webhooks",
    "seasons",
    "stats",
    "tournaments",
    "monitoring",
]

MIDDLEWARE = [
    # /healthz, /readyz and /metrics, answered before anything else: no HTTPS redirect, no
    # host check, no session (monitoring/probes.py). Then the request metrics, timing the rest.
    "monitoring.probes.ProbeMiddleware",
    "monitoring.metrics.RequestMetricsMiddleware",
    # A request id for the logs (X-Request-ID from the proxy, or a new one), and its path.
    "core.logs.RequestLogContextMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Content-Security-Policy, Permissions-Policy and the API's Vary/private (core/headers.py).
    "core.headers.SiteCSPMiddleware",
    "core.headers.SiteHeadersMiddleware",
    # A NUL character in the address, a query or a form field is a 400 (ladder/bad_input.py).
    "core.bad_input.RejectNulMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # A signed-in session's last use, for the list in Settings (at most a write every 5 minutes).
    "accounts.sessions.SessionSeenMiddleware",
    # A session that owes a second factor (or a moderator's set-up) reaches only the pages that take it.
    "accounts.two_factor.TwoFactorMiddleware",
    # The account's time zone for pages and forms; UTC for the API (accounts/zones.py).
    "accounts.zones.AccountTimeZoneMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # A 503 with Retry-After when a task cannot be queued (Redis down) or PostgreSQL is down, not a bare 500.
    "core.middleware.ServiceUnavailableMiddleware",
    # Last, as its documentation asks, so it sees the outcome of every login attempt.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "core.context_processors.site",
                "ladder.pages.header.counts_context",
            ],
        },
    },
]

# Database: PostgreSQL (through psycopg 3) when DATABASE_URL is set, else embedded SQLite.
_database_url = env_str("DATABASE_URL")
if _database_url:
    try:
        DATABASES = {
            "default": dj_database_url.parse(
                _database_url, conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60), conn_health_checks=True
            )
        }
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL is not a database URL: {exc}") from None
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # Statements run through server-side binding cursors (the queue's hot reads, see
        # matchmaking/db.py) are prepared after five runs on a connection; Django's own
        # client-side binding statements never are. Turn it off behind a pooler that cannot
        # keep prepared statements (PgBouncer before 1.21 in transaction mode).
        _prepare = env_bool("DATABASE_PREPARED_STATEMENTS", True)
        _options = DATABASES["default"].setdefault("OPTIONS", {})
        _options["prepare_threshold"] = 5 if _prepare else None
        _startup: list[str] = []
        if _prepare:
            # A prepared statement keeps its generic plan from the first run instead of being
            # planned again for its parameters each time: the hand-written statements are
            # written so their generic plans are the ones wanted (core/db.py), and a report's
            # planning cost PostgreSQL more than running it. Only the prepared statements
            # are affected: Django's client-side binding ones are planned each time anyway.
            _startup.append("-c plan_cache_mode=force_generic_plan")
        # Streamed reads (``.iterator()``, the replay's participants) use a server-side cursor,
        # which outside a transaction is held across it (WITH HOLD): off behind a pooler in
        # transaction mode, which may give the next statement another server connection.
        DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = not env_bool("DATABASE_SERVER_SIDE_CURSORS", True)
        # PostgreSQL (14+, on Linux) checks every this many milliseconds whether the client
        # of a running statement is still there, and cancels it if not: a web or Celery
        # process killed mid-statement does not leave it running (and holding its locks)
        # to the end. 0 turns the check off.
        if _check_ms := env_int("DATABASE_CLIENT_CHECK_MS", 5000):
            _startup.append(f"-c client_connection_check_interval={_check_ms}")
        if _startup:
            _options["options"] = " ".join([_options.get("options", ""), *_startup]).strip()
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(VAR_DIR / "db.sqlite3"),
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
        }
    }
# An optional read replica (core/replica.py; docs/operations.md, "Scaling"): a streaming standby
# of the primary, with the primary's options, serving the leaderboards, the statistics and the
# API's public reads of clients that did not just write. Checked every CHECK seconds per process;
# more than MAX_LAG seconds behind, stopped or unreachable, the primary serves those reads. A
# client that wrote reads the primary for PIN seconds, longer than the replica can lag unnoticed.
DATABASE_REPLICA_MAX_LAG_SECONDS = env_float("DATABASE_REPLICA_MAX_LAG_SECONDS", 5.0)
DATABASE_REPLICA_CHECK_SECONDS = env_float("DATABASE_REPLICA_CHECK_SECONDS", 2.0)
DATABASE_REPLICA_PIN_SECONDS = env_int("DATABASE_REPLICA_PIN_SECONDS", 15)
if _replica_url := env_str("DATABASE_REPLICA_URL"):
    if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured("DATABASE_REPLICA_URL needs DATABASE_URL to name the PostgreSQL primary")
    try:
        _replica = dj_database_url.parse(_replica_url)
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_REPLICA_URL is not a database URL: {exc}") from None
    if _replica["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured("DATABASE_REPLICA_URL must name a PostgreSQL standby (postgres://…)")
    if DATABASE_REPLICA_MAX_LAG_SECONDS <= 0 or DATABASE_REPLICA_CHECK_SECONDS <= 0:
        raise ImproperlyConfigured(
            "DATABASE_REPLICA_MAX_LAG_SECONDS and DATABASE_REPLICA_CHECK_SECONDS must be above 0"
        )
    if DATABASE_REPLICA_PIN_SECONDS <= DATABASE_REPLICA_MAX_LAG_SECONDS + DATABASE_REPLICA_CHECK_SECONDS:
        raise ImproperlyConfigured(
            "DATABASE_REPLICA_PIN_SECONDS must exceed DATABASE_REPLICA_MAX_LAG_SECONDS plus "
            f"DATABASE_REPLICA_CHECK_SECONDS ({DATABASE_REPLICA_MAX_LAG_SECONDS + DATABASE_REPLICA_CHECK_SECONDS:g}), "
            f"or a writer could read a replica without its write; got {DATABASE_REPLICA_PIN_SECONDS}"
        )
    # The primary's settings and options (pooling, prepared statements, the client check), then
    # where the URL points and its own options; a replica that does not answer is given up on
    # after DATABASE_REPLICA_CONNECT_TIMEOUT seconds (libpq's least is 2).
    _replica_settings: dict[str, Any] = {**DATABASES["default"]}
    for _key in ("NAME", "USER", "PASSWORD", "HOST", "PORT"):
        _replica_settings[_key] = _replica.get(_key, "")
    _replica_settings["OPTIONS"] = {
        **DATABASES["default"].get("OPTIONS", {}),
        "connect_timeout": env_int("DATABASE_REPLICA_CONNECT_TIMEOUT", 2),
        **_replica.get("OPTIONS", {}),
    }
    # The tests' replica is the test database itself: no second one is created.
    _replica_settings["TEST"] = {"MIRROR": "default"}
    DATABASES["replica"] = cast("dj_database_url.DBConfig", _replica_settings)
    DATABASE_ROUTERS = ["core.replica.ReplicaRouter"]
    # Innermost but axes: the replica is open to the view and its rendering, never to another
    # middleware's reads (the session's last use, the two-factor gate); and the pin comes after
    # the view, once the request's user is known (DRF sets a token's).
    MIDDLEWARE.insert(MIDDLEWARE.index("axes.middleware.AxesMiddleware"), "core.replica.ReplicaMiddleware")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Cache: Redis when CACHE_URL is set (needed to share rate limits between processes). The
# site works on without it (ladder/cache.py): reads miss, writes are dropped, rate limits
# let requests through. The timeouts bound what a stalled Redis costs a request, and after
# a failure each process leaves Redis alone for CACHE_RETRY_SECONDS.
_cache_url = env_str("CACHE_URL")
if _cache_url:
    CACHES = {
        "default": {
            "BACKEND": "core.cache.RedisCache",  # Django's, one client per pool, errors as misses
            "LOCATION": _cache_url,
            "OPTIONS": {
                "socket_connect_timeout": env_float("CACHE_CONNECT_TIMEOUT", 0.25),
                "socket_timeout": env_float("CACHE_TIMEOUT", 0.5),
                "retry_seconds": env_float("CACHE_RETRY_SECONDS", 5.0),
            },
        }
    }
    # Sessions are read from the shared cache and written through to the database: a
    # request (a queue poll every 2 s) then reads its session without a query. Not with
    # the in-memory cache, which each web process would hold its own copy of.
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
else:
    # Per process; room for every search's attempt record of a busy embedded site (Django's default is 300).
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "OPTIONS": {"MAX_ENTRIES": 10_000}}
    }

AUTH_USER_MODEL = "accounts.User"
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

# Two-factor sign-in (accounts/two_factor.py): moderators and administrators must use it
# (turn off only on a private test site); any account may. Wrong codes count under axes'
# limits below, as wrong passwords do, so django-otp's own delays are off.
TWO_FACTOR_FOR_STAFF = env_bool("TWO_FACTOR_FOR_STAFF", True)
OTP_TOTP_ISSUER = SITE_NAME
OTP_TOTP_THROTTLE_FACTOR = 0
OTP_STATIC_THROTTLE_FACTOR = 0

# Login throttling (django-axes, see accounts/throttling.py): a username is locked from one
# client address after AXES_FAILURE_LIMIT failures there, and an address for every username
# after LOGIN_ADDRESS_FAILURE_LIMIT, each for the cool-off time (every attempt during a lock
# starts it again). Nobody can lock an account from another address.
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
LOGIN_ADDRESS_FAILURE_LIMIT = env_int("LOGIN_ADDRESS_FAILURE_LIMIT", 50)
_cooloff_minutes = env_int("LOGIN_COOLOFF_MINUTES", 15)
for _name, _value in (
    ("LOGIN_FAILURE_LIMIT", AXES_FAILURE_LIMIT),
    ("LOGIN_ADDRESS_FAILURE_LIMIT", LOGIN_ADDRESS_FAILURE_LIMIT),
    ("LOGIN_COOLOFF_MINUTES", _cooloff_minutes),
):
    if _value < 1:
        raise ImproperlyConfigured(f"{_name} must be at least 1; got {_value}")
AXES_COOLOFF_TIME = timedelta(minutes=_cooloff_minutes)
# In this order: LoginAttemptHandler reads the pair's attempts first, then the address's.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_HANDLER = "accounts.throttling.LoginAttemptHandler"
AXES_LOCKOUT_CALLABLE = "accounts.throttling.lockout_response"
AXES_CLIENT_IP_CALLABLE = "accounts.throttling.client_address"
AXES_USERNAME_CALLABLE = "accounts.throttling.axes_username"
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False
# Axes would keep every successful login with its raw address; the site keeps keyed hashes
# instead (accounts/prints.py), and failed attempts until their cool-off ends (docs/security.md).
AXES_DISABLE_ACCESS_LOG = True
AXES_ENABLE_ACCESS_FAILURE_LOG = False
# How many proxies of the site's own stand in front of it, each appending the address it
# got a request from to X-Forwarded-For (1 for one nginx). Login and sign-up limits then
# count the client that address names; 0 counts REMOTE_ADDR and ignores the header, which
# anyone can write. Set it only when the web processes cannot be reached but through them.
PROXY_COUNT = env_int("PROXY_COUNT", env_int("API_NUM_PROXIES", 0))
if PROXY_COUNT < 0:
    raise ImproperlyConfigured(f"PROXY_COUNT must be 0 or more; got {PROXY_COUNT}")

# Sign-ups per client address ("N/second|minute|hour|day"; empty turns the limit off),
# counted in the cache before the password is hashed.
SIGNUP_RATE = env_str("SIGNUP_RATE", "5/hour") or None
if SIGNUP_RATE is not None and (
    SIGNUP_RATE.count("/") != 1
    or not SIGNUP_RATE.split("/")[0].isdigit()
    or int(SIGNUP_RATE.split("/")[0]) < 1
    or SIGNUP_RATE.split("/")[1][:1] not in ("s", "m", "h", "d")
):
    raise ImproperlyConfigured(f"SIGNUP_RATE must look like 5/hour; got {SIGNUP_RATE!r}")

# Sign-in with Discord and with Lichess (accounts/oauth.py; docs/operations.md, "Sign-in with
# Discord or Lichess"): a provider is offered once its client id is set. Discord's app also has a
# secret; Lichess's has none (PKCE proves the client). Each base URL is where the provider
# answers: a self-hosted Lichess, or the tests' stand-in on loopback.
DISCORD_CLIENT_ID = env_str("DISCORD_CLIENT_ID").strip()
DISCORD_CLIENT_SECRET = env_str("DISCORD_CLIENT_SECRET").strip()
DISCORD_BASE_URL = env_origin("DISCORD_BASE_URL", "https://discord.com")
if DISCORD_CLIENT_ID and not DISCORD_CLIENT_SECRET:
    raise ImproperlyConfigured("DISCORD_CLIENT_SECRET must be set with DISCORD_CLIENT_ID (the app's OAuth2 secret)")
LICHESS_CLIENT_ID = env_str("LICHESS_CLIENT_ID").strip()
LICHESS_BASE_URL = env_origin("LICHESS_BASE_URL", "https://lichess.org")

# Mail (core/mail.py) goes out from Celery tasks, never in a request. EMAIL_URL says how
# (config/env.py's email_settings): smtp://user:password@host:587/?tls=1 (STARTTLS),
# smtps://user:password@host:465 (TLS), console:// (printed in the terminal) or dummy://
# (dropped). SITE_URL starts the links in mails and webhooks.
_email = email_settings(env_str("EMAIL_URL", "console://"))
EMAIL_BACKEND = _email["EMAIL_BACKEND"]
EMAIL_HOST = _email["EMAIL_HOST"]
EMAIL_PORT = _email["EMAIL_PORT"]
EMAIL_HOST_USER = _email["EMAIL_HOST_USER"]
EMAIL_HOST_PASSWORD = _email["EMAIL_HOST_PASSWORD"]
EMAIL_USE_TLS = _email["EMAIL_USE_TLS"]
EMAIL_USE_SSL = _email["EMAIL_USE_SSL"]
EMAIL_TIMEOUT = _email["EMAIL_TIMEOUT"]
DEFAULT_FROM_EMAIL = env_from_address("DEFAULT_FROM_EMAIL", f"{SITE_NAME} <ladder@localhost>")
SERVER_EMAIL = env_from_address("SERVER_EMAIL", DEFAULT_FROM_EMAIL)
SITE_URL = env_site_url("SITE_URL", "http://127.0.0.1:8000")
# Webhooks go to the public internet only; on, they may reach loopback and private networks
# (a community's bot on the same host). Off by default, so a webhook cannot probe the
# server's own network.
WEBHOOK_ALLOW_PRIVATE_ADDRESSES = env_bool("WEBHOOK_ALLOW_PRIVATE_ADDRESSES", False)
# Password-reset mails per address asked for and per client ("N/second|minute|hour|day";
# empty turns a limit off), and verification links sent again per account.
PASSWORD_RESET_RATE = env_rate("PASSWORD_RESET_RATE", "3/hour")
PASSWORD_RESET_CLIENT_RATE = env_rate("PASSWORD_RESET_CLIENT_RATE", "10/hour")
EMAIL_VERIFY_RESEND_RATE = env_rate("EMAIL_VERIFY_RESEND_RATE", "3/hour")

# The admin's "Change rating settings" preview re-rates a ladder's whole history in the
# request (about 40,000 events a second); ladders with more events get no preview.
RATING_SETTINGS_PREVIEW_MAX_EVENTS = env_int("RATING_SETTINGS_PREVIEW_MAX_EVENTS", 200_000)
# How long the audit trail keeps an entry (audit/); a daily task deletes older ones. At least a year.
AUDIT_KEEP_DAYS = env_int("AUDIT_KEEP_DAYS", 400)
if AUDIT_KEEP_DAYS < 366:
    raise ImproperlyConfigured(f"AUDIT_KEEP_DAYS must be at least 366 (a year); got {AUDIT_KEEP_DAYS}")

# The REST API (/api/v1/): JSON only, token or session auth, throttled per token and per
# anonymous address ("N/second|minute|hour|day"; an empty value turns a limit off).
API_MAX_BODY_BYTES = env_int("API_MAX_BODY_BYTES", 64 * 1024)
# Ranking needs every member's RD now, so a leaderboard page reads the whole ladder: the
# API ranks each ladder once this long for all its pages and keeps each page as long as
# its ranking (0 turns the cache off).
API_LEADERBOARD_CACHE_SECONDS = env_int("API_LEADERBOARD_CACHE_SECONDS", 5)
# A report's Idempotency-Key (and the response a retry replays) is kept this long.
API_IDEMPOTENCY_KEY_HOURS = env_int("API_IDEMPOTENCY_KEY_HOURS", 24)
if API_IDEMPOTENCY_KEY_HOURS < 1:
    raise ImproperlyConfigured(f"API_IDEMPOTENCY_KEY_HOURS must be at least 1; got {API_IDEMPOTENCY_KEY_HOURS}")
API_THROTTLE_RATES = {
    scope: rate or None
    for scope, rate in (
        ("anon", env_str("API_THROTTLE_ANON", "120/minute")),
        ("user", env_str("API_THROTTLE_USER", "1200/minute")),
        ("token", env_str("API_THROTTLE_TOKEN", "1200/minute")),
        # Leaderboard searches and bot filters not already cached, on top of the above.
        ("search", env_str("API_THROTTLE_SEARCH", "30/minute")),
    )
}
for _scope, _rate in API_THROTTLE_RATES.items():
    if _rate is not None and (
        _rate.count("/") != 1 or not _rate.split("/")[0].isdigit() or _rate.split("/")[1][:1] not in "smhd"
    ):
        raise ImproperlyConfigured(f"API_THROTTLE_{_scope.upper()} must look like 60/minute; got {_rate!r}")
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "api.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["api.permissions.TokenScope"],
    "DEFAULT_THROTTLE_CLASSES": ["api.throttling.ApiRateThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["api.parsers.BoundedJSONParser"],
    # drf-spectacular's, with who may call each operation and what a strict body refuses (api/schema.py).
    "DEFAULT_SCHEMA_CLASS": "api.schema.AutoSchema",
    "EXCEPTION_HANDLER": "api.errors.api_exception_handler",
    "URL_FORMAT_OVERRIDE": None,
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    # The API's throttles find the client address with the same proxy count as logins and sign-ups.
    "NUM_PROXIES": PROXY_COUNT or None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Ladder API",
    "DESCRIPTION": "Ratings, leaderboards, the matchmaking queue and match reports for bots and game servers. "
    'Errors are always `{"error": {"code", "message", "fields"}}`.',
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # A match's status is one enum wherever it appears (a match, a queue poll's match).
    "ENUM_NAME_OVERRIDES": {
        "MatchStatusEnum": "ladder.models.match.MatchStatus",
        "QueueFormatEnum": "api.serializers.FORMAT_CODES",
        "SeasonStatusEnum": "seasons.models.SeasonStatus",
        "SideAnswerEnum": "ladder.models.match.SideAnswer",
        "UnrankedCodeEnum": "ladder.standings.ranking.UnrankedCode",
        "TournamentStatusEnum": "tournaments.models.Status",
        "TournamentEntryStatusEnum": "tournaments.models.EntryStatus",
    },
    # drf-spectacular's enum components, then forms a strict OpenAPI 3.0.3 reader takes as meant (api.schema).
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "api.schema.strict_openapi_30"],
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
try:
    zoneinfo.ZoneInfo(TIME_ZONE)
except (zoneinfo.ZoneInfoNotFoundError, ValueError):
    raise ImproperlyConfigured(f"TIME_ZONE {TIME_ZONE!r} is not an IANA time zone (e.g. Europe/Berlin).") from None
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "staticfiles")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if env_bool("STATIC_MANIFEST", not DEBUG)
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

# Celery: Redis when CELERY_BROKER_URL is set; otherwise tasks run eagerly in-process.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "memory://localhost/")  # a host, or kombu warns it assumed one
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", not env_str("CELERY_BROKER_URL"))
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The queue tasks go to and workers read, so several sites (or test runs) can share a Redis.
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "celery")
# Deliveries wait on other people's servers (a webhook receiver may hold each attempt its
# full 10 s, an SMTP server may hang), so they go to queues of their own, read by worker
# processes of their own (docs/operations.md): the sweeps, the ready-check deadlines and the
# nightly job never wait behind a receiver, nor mail behind webhooks.
CELERY_MAIL_QUEUE = f"{CELERY_TASK_DEFAULT_QUEUE}.mail"
CELERY_WEBHOOK_QUEUE = f"{CELERY_TASK_DEFAULT_QUEUE}.webhooks"
CELERY_TASK_ROUTES = {
    "core.tasks.send_mail_task": {"queue": CELERY_MAIL_QUEUE},
    "accounts.tasks.send_password_reset_task": {"queue": CELERY_MAIL_QUEUE},
    "notifications.tasks.send_notification_mails_task": {"queue": CELERY_MAIL_QUEUE},
    "notifications.tasks.send_digests_task": {"queue": CELERY_MAIL_QUEUE},
    "webhooks.tasks.deliver_webhook_task": {"queue": CELERY_WEBHOOK_QUEUE},
}
# A task is acknowledged only once it has run, so a worker that dies mid-task leaves it to
# another; with one task fetched at a time, a long nightly job holds back nothing else.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# The longest task is a replay: 36-56 s for 1,000,000 matches (README, benchmarks), the
# nightly job 5-8 s. A task is stopped at CELERY_TASK_TIME_LIMIT (10 minutes: ten times the
# largest replay measured), 30 s after a SoftTimeLimitExceeded that rolls its transaction
# back. A task fetched but not acknowledged is given to another worker once the visibility
# timeout passes: a killed worker's task waits that long. It must outlast the longest wait
# plus run of a task a worker holds, or a running task would start a second time: a retry
# waits up to 600 s (ladder/tasks.py) and then runs up to the time limit, so the default
# is the two plus a minute (21 minutes, not Redis's hour).
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 600)
if CELERY_TASK_TIME_LIMIT < 60:
    raise ImproperlyConfigured(f"CELERY_TASK_TIME_LIMIT must be at least 60 (seconds); got {CELERY_TASK_TIME_LIMIT}")
CELERY_TASK_SOFT_TIME_LIMIT = CELERY_TASK_TIME_LIMIT - 30
_RETRY_DELAY_MAX = RETRY_BACKOFF_MAX  # the longest delay of core.tasks.RETRY
CELERY_VISIBILITY_TIMEOUT = env_int("CELERY_VISIBILITY_TIMEOUT", _RETRY_DELAY_MAX + CELERY_TASK_TIME_LIMIT + 60)
if CELERY_VISIBILITY_TIMEOUT <= _RETRY_DELAY_MAX + CELERY_TASK_TIME_LIMIT:
    raise ImproperlyConfigured(
        f"CELERY_VISIBILITY_TIMEOUT must exceed {_RETRY_DELAY_MAX} s (the longest retry delay) plus "
        f"CELERY_TASK_TIME_LIMIT ({CELERY_TASK_TIME_LIMIT} s); got {CELERY_VISIBILITY_TIMEOUT}"
    )
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": CELERY_VISIBILITY_TIMEOUT,
    # Queuing a task on a Redis that stopped answering gives up after one short timeout,
    # with no second try (core/broker.py), so a stalled broker costs a request at most
    # about half a second. Workers wait for their BRPOP on the event loop, not on this timeout.
    "socket_connect_timeout": env_float("CELERY_BROKER_CONNECT_TIMEOUT", 0.25),
    "socket_timeout": env_float("CELERY_BROKER_TIMEOUT", 0.5),
    "max_retries": 0,
}
CELERY_TASK_PUBLISH_RETRY = False
# After a failed publish a process queues nothing for this long: each task fails at once.
CELERY_BROKER_RETRY_SECONDS = env_float("CELERY_BROKER_RETRY_SECONDS", 5.0)
# Periodic tasks live in the database (django-celery-beat), created by the migration
# ladder/0006 and editable by moderators in the admin: the hourly nightly job, the queue
# sweep every 15 s and auto-confirmation every 5 minutes. Run exactly one beat process.
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# With LOG_FORMAT=json, workers and beat log through LOGGING below, as the web processes do.
CELERY_WORKER_HIJACK_ROOT_LOGGER = env_str("LOG_FORMAT", "text") != "json"
DJANGO_CELERY_BEAT_TZ_AWARE = True
# Beat writes each task's last run to the database as soon as it sends it, not every 3
# minutes: the admin's "Last run" is current, and the image's beat healthcheck reads it.
CELERY_BEAT_SYNC_EVERY = 1

# Security. Production (DEBUG off) defaults pass `manage.py check --deploy` with no
# warnings; behind a TLS-terminating proxy set SECURE_PROXY_SSL_HEADER_NAME.
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
if _proxy_header := env_str("SECURE_PROXY_SSL_HEADER_NAME"):
    SECURE_PROXY_SSL_HEADER = (_proxy_header, "https")

# Content-Security-Policy (django-csp) and Permissions-Policy on every answer: pages run
# only the scripts and styles the site serves, nothing inline, and may use no camera,
# microphone, location or the like. The API docs and error pages loosen it (core/headers.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'none'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "manifest-src": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
        "base-uri": ["'none'"],
        "object-src": ["'none'"],
    }
}
PERMISSIONS_POLICY = (
    "accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), microphone=(), payment=(), usb=()"
)

# Readiness (/readyz, monitoring/health.py): a Celery worker must have written its heartbeat
# within READY_WORKER_MINUTES, and no periodic task be overdue by more than READY_BEAT_MINUTES
# (beat writes its runs every 3 minutes, so at least 5); 0 turns a check off.
READY_WORKER_MINUTES = env_int("READY_WORKER_MINUTES", 5)
READY_BEAT_MINUTES = env_int("READY_BEAT_MINUTES", 5)
for _name, _value, _least in (
    ("READY_WORKER_MINUTES", READY_WORKER_MINUTES, 1),
    ("READY_BEAT_MINUTES", READY_BEAT_MINUTES, 5),
):
    if _value and _value < _least:
        raise ImproperlyConfigured(f"{_name} must be 0 (off) or at least {_least}; got {_value}")
# Prometheus metrics at /metrics (monitoring/metrics.py): off unless a token or addresses are set.
METRICS_TOKEN = env_str("METRICS_TOKEN")
METRICS_ALLOWED_ADDRESSES = env_networks("METRICS_ALLOWED_ADDRESSES")

# Error reports to Sentry (config/sentry.py), only when SENTRY_DSN is set; never personal data.
SENTRY_DSN = env_str("SENTRY_DSN")
SENTRY_ENVIRONMENT = env_str("SENTRY_ENVIRONMENT", "development" if DEBUG else "production")
SENTRY_RELEASE = env_str("SENTRY_RELEASE")
SENTRY_TRACES_SAMPLE_RATE = env_float("SENTRY_TRACES_SAMPLE_RATE", 0.0)
if not 0.0 <= SENTRY_TRACES_SAMPLE_RATE <= 1.0:
    raise ImproperlyConfigured(f"SENTRY_TRACES_SAMPLE_RATE must be from 0 to 1; got {SENTRY_TRACES_SAMPLE_RATE}")
if SENTRY_DSN:
    from config.sentry import sentry_init

    sentry_init(
        dsn=SENTRY_DSN,
        environment=SENTRY_ENVIRONMENT,
        release=SENTRY_RELEASE or None,
        traces_sample_rate=SENTRY_TRACES_SAMPLE_RATE,
    )

# Logs go to stderr: lines of text, or with LOG_FORMAT=json one JSON object a line (time,
# level, logger, message, the request's id and path where there is one, the exception).
LOG_FORMAT = env_str("LOG_FORMAT", "text")
if LOG_FORMAT not in ("text", "json"):
    raise ImproperlyConfigured(f"LOG_FORMAT must be text or json; got {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "text": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "core.logs.JsonFormatter"},
    },
    "filters": {"request": {"()": "core.logs.RequestContextFilter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT, "filters": ["request"]}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # Django's own console handler (plain messages, under DEBUG) is replaced by the site's.
    "loggers": {"axes": {"level": "WARNING"}, "django": {"handlers": [], "level": "INFO", "propagate": True}},
}
