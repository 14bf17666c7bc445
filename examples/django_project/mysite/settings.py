"""Settings: the app ``mcpclient.contrib.django`` and the servers in ``MCP_SERVERS`` (the
``mcpServers`` format of mcp.json files; ``${VAR}`` comes from the environment). Here: the test
server bundled with mcpclient; in a project, ``npx``/``uvx`` servers or remote URLs."""
import os
import sys
from typing import Dict, List

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "example-only: not a secret")
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
ROOT_URLCONF = "mysite.urls"
WSGI_APPLICATION = "mysite.wsgi.application"
INSTALLED_APPS = ["mcpclient.contrib.django"]
MIDDLEWARE: List[str] = []
DATABASES: Dict[str, Dict[str, str]] = {}
USE_TZ = True

MCP_SERVERS = {
    "tools": {"command": sys.executable, "args": ["-m", "mcpclient.testing"]},
}
MCP_OPTIONS = {"client_options": {"timeout": 20}}

# mcpclient logs through the logging module: its records go where LOGGING sends them.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "[%(name)s] %(levelname)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {"mcpclient": {"handlers": ["console"], "level": "WARNING"}},
}

# Celery (mysite/celery.py) reads the CELERY_* settings.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", CELERY_BROKER_URL)
