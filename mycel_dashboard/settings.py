"""One settings file, every knob read from the environment with a default that works on a fresh checkout."""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
import plotly
from django.core.exceptions import ImproperlyConfigured

from mycel_dashboard.middleware import add_static_headers

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {value!r}")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from exc


def env_seconds(name: str, default: float) -> float:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        seconds = float(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a number of seconds, got {value!r}") from exc
    if not seconds >= 0 or seconds == float("inf"):
        raise ImproperlyConfigured(f"{name} must be 0 or more seconds, got {value!r}")
    return seconds


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG and not env_bool("DASHBOARD_LOCAL", True):
        raise ImproperlyConfigured("SECRET_KEY is required when DEBUG is off and DASHBOARD_LOCAL=false")
    # Local use: a key kept beside the dashboard's database so sessions survive restarts.
    _key_file = Path(os.environ.get("DASHBOARD_DATA_DIR", BASE_DIR / "var")) / "secret_key"
    if _key_file.exists():
        SECRET_KEY = _key_file.read_text().strip()
    else:
        import secrets

        _key_file.parent.mkdir(parents=True, exist_ok=True)
        SECRET_KEY = secrets.token_urlsafe(50)
        _key_file.write_text(SECRET_KEY)
        _key_file.chmod(0o600)

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
DASHBOARD_DATA_DIR = Path(os.environ.get("DASHBOARD_DATA_DIR", BASE_DIR / "var"))
# What the thread list derives from leon.db, kept so a new worker starts warm (memory_core/stores/thread_list/derived.py).
DASHBOARD_FACTS_DIR = Path(os.environ.get("DASHBOARD_FACTS_DIR", DASHBOARD_DATA_DIR / "cache"))

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "axes",
    "mycel_dashboard",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "mycel_dashboard.middleware.SecurityHeadersMiddleware",
    "mycel_dashboard.monitoring.requests.RequestMetricsMiddleware",
    # Last, as django-axes asks: it turns a sign-in refused by the throttle into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "mycel_dashboard.urls"
WSGI_APPLICATION = "mycel_dashboard.wsgi.application"

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
            ],
        },
    },
]

# The dashboard's own database never lives inside Mycel's files.
DASHBOARD_DB_PATH = Path(os.environ.get("DASHBOARD_DB_PATH", DASHBOARD_DATA_DIR / "dashboard.sqlite3"))
# Persistent connections, one per gunicorn thread (Django keeps them thread-local), checked before reuse:
# an open page polls every 3 s, and opening SQLite (and its WAL PRAGMA) or a PostgreSQL session per request
# cost more than the poll's own work (mycel_dashboard/screens/live/).
if os.environ.get("DATABASE_URL"):
    DATABASES = {
        "default": dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=60, conn_health_checks=True)
    }
else:
    DASHBOARD_DB_PATH.parent.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(DASHBOARD_DB_PATH),
            # How long a write waits for another process's write lock (SQLite's busy timeout).
            "OPTIONS": {
                "timeout": env_seconds("DASHBOARD_DB_TIMEOUT_S", 20.0),
                "init_command": "PRAGMA journal_mode=WAL;",
            },
            "CONN_MAX_AGE": 600,
            "CONN_HEALTH_CHECKS": True,
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Sessions stay in the database (revocable), read through a cache so a poll does not query for its session.
# With the SQLite database the dashboard runs on one host, and a file cache is shared by all its gunicorn
# workers: a logout in one worker deletes the entry the others read (a per-process memory cache would keep
# serving a logged-out session until it expired). Several hosts share a PostgreSQL database (DATABASE_URL)
# but not a folder, so there the session is read from the database each time. The user is read every time,
# so a deactivated user or a changed password ends the session at once either way.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "sessions": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(DASHBOARD_DATA_DIR / "session-cache"),
    },
}
SESSION_ENGINE = (
    "django.contrib.sessions.backends.db"
    if os.environ.get("DATABASE_URL")
    else "django.contrib.sessions.backends.cached_db"
)
SESSION_CACHE_ALIAS = "sessions"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Sign-in throttling (django-axes, mycel_dashboard/web/login_throttle.py). Failures are counted in the
# dashboard's own database, so every worker and every host sharing DATABASE_URL shares the lockouts. One
# user name from one address is paused after DASHBOARD_LOGIN_FAILURE_LIMIT failures; one address, whatever
# the names it tries, after DASHBOARD_LOGIN_ADDRESS_FAILURE_LIMIT; a successful sign-in clears that name's
# count at that address. A pause lifts DASHBOARD_LOGIN_COOLOFF_MINUTES after the last counted failure (0:
# only an operator lifts it: Audit screen, or `manage.py axes_reset_username NAME` / `axes_reset_ip ADDRESS`).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a paused sign-in before any password is checked
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("DASHBOARD_LOGIN_FAILURE_LIMIT", 5)
DASHBOARD_LOGIN_ADDRESS_FAILURE_LIMIT = env_int("DASHBOARD_LOGIN_ADDRESS_FAILURE_LIMIT", 20)
_cool_off_minutes = env_int("DASHBOARD_LOGIN_COOLOFF_MINUTES", 15)
if AXES_FAILURE_LIMIT < 1 or DASHBOARD_LOGIN_ADDRESS_FAILURE_LIMIT < 1 or _cool_off_minutes < 0:
    raise ImproperlyConfigured(
        "DASHBOARD_LOGIN_FAILURE_LIMIT and DASHBOARD_LOGIN_ADDRESS_FAILURE_LIMIT must be 1 or more, "
        "DASHBOARD_LOGIN_COOLOFF_MINUTES 0 or more"
    )
AXES_COOLOFF_TIME = timedelta(minutes=_cool_off_minutes) if _cool_off_minutes else None
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_HANDLER = "mycel_dashboard.web.login_throttle.DashboardLockoutHandler"
AXES_LOCKOUT_CALLABLE = "mycel_dashboard.web.login_throttle.locked_out_page"
AXES_CLIENT_IP_CALLABLE = "mycel_dashboard.web.login_throttle.client_address"
AXES_RESET_ON_SUCCESS = True
# A refused attempt during a pause is not counted, so the pause ends when the page says it does.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_DISABLE_ACCESS_LOG = True  # the audit log records failures and lockouts; successes need no table
AXES_ENABLE_ADMIN = False
AXES_VERBOSE = False  # no banner on every manage.py command; failures and lockouts are still logged

LANGUAGE_CODE = "en"
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
# plotly.min.js is served from the installed wheel: no CDN, works with no internet.
STATICFILES_DIRS = [BASE_DIR / "static", ("plotly", Path(plotly.__file__).parent / "package_data")]
STATIC_ROOT = DASHBOARD_DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns on every start when it is missing
# WhiteNoise serves static files from the app server itself (gunicorn in production); with
# WHITENOISE_USE_FINDERS it needs no collectstatic step on a fresh checkout.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG
WHITENOISE_ADD_HEADERS_FUNCTION = add_static_headers

# Security: local by default, strict headers always.
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from <body hx-headers>, not the cookie
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
# Behind a proxy that terminates TLS, trust its X-Forwarded-Proto (else SSL redirects would loop).
if env_bool("BEHIND_TLS_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_SECONDS > 0
SECURE_HSTS_PRELOAD = SECURE_HSTS_SECONDS > 0
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # django-axes says three INFO lines per failed sign-in, with the name and address masked; the audit log
    # has each failure and lockout in full, and axes' own warnings (a lockout) still reach the log.
    "loggers": {"axes": {"level": "WARNING"}},
}

# How long one read of Mycel's files may wait for a lock or run (SQLite busy timeout and per-query
# limit); past it the page says the file is locked or slow instead of hanging.
DASHBOARD_STORE_TIMEOUT_MS = env_int("DASHBOARD_STORE_TIMEOUT_MS", 5000)
# How long, from a request's start, a fleet report page (calibration, tool pressure, prompt cache, cost)
# may spend analysing threads it has not analysed before: well under gunicorn's 120 s timeout. Past it
# the page shows the threads analysed so far (newest first), keeps them, and says a reload goes on.
DASHBOARD_FLEET_BUDGET_S = env_seconds("DASHBOARD_FLEET_BUDGET_S", 20.0)

# Where demo data is written when no Mycel data home exists (`make run` on a fresh machine).
DASHBOARD_DEMO_HOME = Path(os.environ.get("DASHBOARD_DEMO_HOME", DASHBOARD_DATA_DIR / "demo-home"))
# Roles: viewers read; operators may act (rollback, config saves). Superusers are operators.
DASHBOARD_OPERATOR_GROUP = "operators"

# The fleet index (memory_core/app/fleet_index.py): the Threads list of a fleet of this many threads or
# more is sorted, filtered and paged in the dashboard's database; a smaller one is listed in memory.
DASHBOARD_FLEET_INDEX_FROM = env_int("DASHBOARD_FLEET_INDEX_FROM", 5000)
# Whether the server builds the index in a background thread when a look finds it missing or behind
# (off: only `manage.py build_fleet_index` builds it).
DASHBOARD_FLEET_INDEX_BACKGROUND = os.environ.get("DASHBOARD_FLEET_INDEX_BACKGROUND", "1") != "0"
# The builder's time limit for one read of the whole fleet (the list's reads keep DASHBOARD_STORE_TIMEOUT_MS).
DASHBOARD_FLEET_INDEX_TIMEOUT_S = env_seconds("DASHBOARD_FLEET_INDEX_TIMEOUT_S", 600.0)

# Who may scrape /metrics (docs/monitoring.md): "token" (a bearer token of scope metrics: manage.py
# api_token create USER --scope metrics), "loopback" (requests from 127.0.0.1 or ::1 only), or either.
DASHBOARD_METRICS_ACCESS = os.environ.get("DASHBOARD_METRICS_ACCESS", "token-or-loopback")
# /readyz fails when a head the fleet index does not hold yet was written more than this many seconds ago.
DASHBOARD_READY_INDEX_LAG_S = env_seconds("DASHBOARD_READY_INDEX_LAG_S", 600.0)
# Each store's readiness probe (/readyz, /metrics' mycel_memory_store_up) gives up after this.
DASHBOARD_PROBE_TIMEOUT_S = env_seconds("DASHBOARD_PROBE_TIMEOUT_S", 2.0)
