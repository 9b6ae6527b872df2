"""gunicorn settings the command line does not carry (`gunicorn -c python:mycel_dashboard.gunicorn_conf`).

The app is not preloaded in the master (`preload_app` stays off): each worker imports Django and the
engine after the fork, so `post_fork` would run before anything worth freezing exists. `post_worker_init`
runs once the worker has loaded the WSGI app; it loads the URLconf (and so every view and the engine
they import, which Django would otherwise import at the first request), then settles the heap.
"""

from __future__ import annotations

from typing import Any

# Mycel's ids are arbitrary strings, some thousands of characters long, and they travel in the path
# (mycel_dashboard/web/ids.py): allow gunicorn's longest request line, not its 4,094-byte default.
limit_request_line = 8190
# An open Thread page or Threads list polls its live endpoint every 3 s (mycel_dashboard/screens/live/):
# a keep-alive longer than that lets each page reuse its connection (the gthread worker, --threads > 1)
# instead of reconnecting for every 304.
keepalive = 5


def when_ready(server: Any) -> None:
    """Once the master listens: a clear warning when it listens beyond loopback without TLS settings."""
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mycel_dashboard.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    from mycel_dashboard.exposure import exposure_warning

    try:
        warning = exposure_warning(server.cfg.address, settings)
    except ImproperlyConfigured:
        return  # each worker fails on the same settings and says why
    if warning:
        server.log.warning(warning)


def post_worker_init(worker: Any) -> None:
    import gc

    from django.urls import get_resolver

    from memory_core.stores.gc_setup import settle_heap

    get_resolver().url_patterns  # noqa: B018 - imported for its side effect: every view module is loaded
    settle_heap()
    worker.log.info(
        "heap settled: %d objects frozen, gc thresholds %s", gc.get_freeze_count(), gc.get_threshold()
    )
