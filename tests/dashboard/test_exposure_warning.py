"""A server started beyond loopback without TLS settings says so at start (mycel_dashboard/exposure.py, called
by gunicorn's master from mycel_dashboard/gunicorn_conf.py); loopback, a Unix socket or the TLS settings
keep it quiet."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from gunicorn.config import Config

from mycel_dashboard import gunicorn_conf
from mycel_dashboard.exposure import exposure_warning, listens_beyond_loopback
from tests.support.server import ROOT, free_port, server_env, stop_process

TLS = {"SESSION_COOKIE_SECURE": True, "CSRF_COOKIE_SECURE": True, "SECURE_SSL_REDIRECT": True, "DEBUG": False}


def _addresses(*binds: str) -> list[object]:
    config = Config()
    config.set("bind", list(binds))
    return list(config.address)  # gunicorn's own parsing of --bind


def test_what_counts_as_beyond_loopback() -> None:
    beyond = listens_beyond_loopback(
        _addresses("0.0.0.0:8000", "[::]:8001", "192.168.1.5:80", "dashboard.example:80", "127.0.0.1:1")
    )
    assert beyond == ["0.0.0.0:8000", "[::]:8001", "192.168.1.5:80", "dashboard.example:80"]
    quiet = _addresses("127.0.0.1:8000", "127.0.0.2:80", "[::1]:8000", "localhost:8000", "unix:/run/d.sock")
    assert listens_beyond_loopback(quiet) == []


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"SESSION_COOKIE_SECURE": False, "CSRF_COOKIE_SECURE": False}, "SECURE_COOKIES=true"),
        ({"SECURE_SSL_REDIRECT": False}, "BEHIND_TLS_PROXY=true"),
        ({"DEBUG": True}, "DEBUG=false"),
    ],
)
def test_each_missing_setting_is_named(changes: dict[str, object], said: str) -> None:
    settings = SimpleNamespace(**{**TLS, **changes})
    warning = exposure_warning(_addresses("0.0.0.0:8000"), settings)
    assert warning is not None and said in warning and "0.0.0.0:8000" in warning


def test_tls_settings_or_loopback_keep_it_quiet() -> None:
    assert exposure_warning(_addresses("0.0.0.0:8000"), SimpleNamespace(**TLS)) is None
    behind_proxy = {
        **TLS,
        "SECURE_SSL_REDIRECT": False,
        "SECURE_PROXY_SSL_HEADER": ("HTTP_X_FORWARDED_PROTO", "https"),
    }
    assert exposure_warning(_addresses("0.0.0.0:8000"), SimpleNamespace(**behind_proxy)) is None
    assert exposure_warning(_addresses("127.0.0.1:8000"), SimpleNamespace(DEBUG=True)) is None


def test_the_gunicorn_hook_logs_it_with_the_dashboards_settings(settings) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = settings.SECURE_SSL_REDIRECT = False
    logged: list[str] = []
    log = SimpleNamespace(warning=logged.append)
    gunicorn_conf.when_ready(
        SimpleNamespace(cfg=SimpleNamespace(address=_addresses("0.0.0.0:8000")), log=log)
    )
    assert len(logged) == 1 and "beyond loopback" in logged[0]
    gunicorn_conf.when_ready(
        SimpleNamespace(cfg=SimpleNamespace(address=_addresses("127.0.0.1:8000")), log=log)
    )
    assert len(logged) == 1


def test_a_real_server_bound_to_every_address_warns_at_start(tmp_path: Path) -> None:
    """`make serve HOST=0.0.0.0` with the defaults: the warning is in gunicorn's own log before any request
    (the server runs for the moment it takes to say it, with an empty data home and no users)."""
    env = server_env(tmp_path, tmp_path / "empty-home")
    log = tmp_path / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("gunicorn")),
                "mycel_dashboard.wsgi",
                "-c",
                "python:mycel_dashboard.gunicorn_conf",
                "--bind",
                f"0.0.0.0:{free_port()}",
                "--workers",
                "1",
            ],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 30
        while (
            "beyond loopback" not in log.read_text()
            and process.poll() is None
            and time.monotonic() < deadline
        ):
            time.sleep(0.1)
    finally:
        stop_process(process)
    text = log.read_text()
    assert "[WARNING] The dashboard listens beyond loopback (0.0.0.0:" in text, text
    assert "SECURE_COOKIES=true" in text and "BEHIND_TLS_PROXY=true" in text
