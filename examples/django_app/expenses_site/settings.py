"""Settings of the expense tracker, an ordinary Django project (development values)."""

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = os.environ.get("EXPENSES_SECRET_KEY", "django-insecure-expenses-example-only")
DEBUG = os.environ.get("EXPENSES_DEBUG", "") == "1"
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "testserver"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "expenses",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]

ROOT_URLCONF = "expenses_site.urls"
ASGI_APPLICATION = "expenses_site.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("EXPENSES_DB", str(BASE_DIR / "db.sqlite3")),
        "TEST": {"NAME": os.environ.get("EXPENSES_TEST_DB", str(BASE_DIR / "test-db.sqlite3"))},
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
USE_TZ = True
TIME_ZONE = "UTC"

# The offline browser runtime (`agentsurface bundle --out site/`), served at /runtime/ in development.
AGENT_RUNTIME = os.environ.get("EXPENSES_AGENT_RUNTIME", str(BASE_DIR / "site"))
PAGE_FILES = BASE_DIR / "expenses_page"
