"""Whether the server listens beyond loopback without what that needs: secure cookies and HTTPS, either
redirected here (SECURE_SSL_REDIRECT) or ended by a proxy this server trusts (BEHIND_TLS_PROXY).

gunicorn's master calls `exposure_warning` once it listens (mycel_dashboard/gunicorn_conf.py); the dashboard
is local by default, and a deployment that binds 0.0.0.0 without TLS sends every password and session cookie
in clear. A warning, not a refusal: TLS may be ended by something the settings cannot see.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

DOCS = "docs/deploying-and-operating.md#beyond-loopback"


def listens_beyond_loopback(addresses: Iterable[Any]) -> list[str]:
    """The addresses among gunicorn's (host, port) pairs that other hosts can reach, as `host:port`.

    A Unix socket (a path) or an inherited descriptor (a number) is not a network address: not listed."""
    beyond = []
    for address in addresses:
        if not isinstance(address, tuple) or len(address) < 2:
            continue
        host, port = str(address[0]), address[1]
        if host.lower() == "localhost":
            continue
        try:
            if ipaddress.ip_address(host.strip("[]")).is_loopback:
                continue
        except ValueError:
            pass  # a host name other than localhost: it may resolve to anything
        beyond.append(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
    return beyond


def missing_tls_settings(settings: Any) -> list[str]:
    """What an exposed server lacks, each naming the environment variable that sets it (settings.py)."""
    missing = []
    if not (
        getattr(settings, "SESSION_COOKIE_SECURE", False) and getattr(settings, "CSRF_COOKIE_SECURE", False)
    ):
        missing.append("SESSION_COOKIE_SECURE and CSRF_COOKIE_SECURE are off (SECURE_COOKIES=true)")
    if not (
        getattr(settings, "SECURE_SSL_REDIRECT", False) or getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    ):
        missing.append(
            "neither SECURE_SSL_REDIRECT (SECURE_SSL_REDIRECT=true) nor a TLS proxy's header "
            "(BEHIND_TLS_PROXY=true) is set"
        )
    if getattr(settings, "DEBUG", False):
        missing.append("DEBUG is on (DEBUG=false)")
    return missing


def exposure_warning(addresses: Iterable[Any], settings: Any) -> str | None:
    """The warning to log at start, or None when the server is loopback-only or has the TLS settings."""
    beyond = listens_beyond_loopback(addresses)
    missing = missing_tls_settings(settings) if beyond else []
    if not missing:
        return None
    return (
        f"The dashboard listens beyond loopback ({', '.join(beyond)}) without the TLS settings: "
        f"{'; '.join(missing)}. Passwords and session cookies would cross the network in clear text. "
        f"Serve it through HTTPS (see {DOCS}), or bind 127.0.0.1."
    )
