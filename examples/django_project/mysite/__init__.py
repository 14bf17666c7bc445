"""A Django project whose views and Celery tasks call MCP tools (``mcpclient.contrib.django``).

    cd examples/django_project
    python manage.py mcp tools                              # the servers' tools
    python manage.py runserver                              # then: curl 'http://127.0.0.1:8000/add?a=2&b=3'
    gunicorn --preload -w 2 mysite.wsgi                     # one server per worker process
    celery -A mysite worker --pool=prefork --concurrency=2  # one server per pool process
"""
from .celery import app as celery_app

__all__ = ["celery_app"]
