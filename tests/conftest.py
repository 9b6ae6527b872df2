"""Shared fixtures: every Mycel path points into tmp_path, so no test can touch a real ~/.leon."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from tests.support.engines import ENGINES, postgres_store, sqlite_store
from tests.support.markers import folder_marks
from tests.support.mycel_env import MYCEL_ENV, point_env_at, point_env_at_postgres
from tests.support.postgres import database_name
from tests.support.sample_data import DATA, PG_DEV_SAMPLE, SAMPLE_HOME

# Locally, property and fuzz tests explore new examples on every run; in CI (CI=true) they replay a fixed
# seed, so a landing never depends on luck. A failure found locally becomes an explicit regression test.
hypothesis_settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")


@pytest.fixture(scope="session", autouse=True)
def test_process_settings(tmp_path_factory: pytest.TempPathFactory) -> object:
    """Two settings of this test process only (servers the tests start keep the production ones):
    - a fast password hash: the tests create hundreds of users, and Django's default PBKDF2 (1,000,000
      rounds, 0.6 s a user here) was a third of the dashboard tests' time; who may do what is what is
      tested, not the hash;
    - the sessions' file cache in a temp folder, not the repo's var/."""
    from django.test.utils import override_settings

    from mycel_dashboard import settings as production

    caches = {
        **production.CACHES,
        "sessions": {**production.CACHES["sessions"], "LOCATION": str(tmp_path_factory.mktemp("sessions"))},
    }
    with override_settings(
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"], CACHES=caches
    ) as overridden:
        yield overridden


@pytest.fixture(autouse=True)
def isolated_mycel_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Mycel home under tmp_path; HOME moves there too."""
    home = tmp_path / "home"
    (home / ".leon").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for name in MYCEL_ENV:
        monkeypatch.delenv(name, raising=False)
    return home / ".leon"


@pytest.fixture
def sample_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A writable copy of the real Mycel sample data home, with the environment pointed at it."""
    target = tmp_path / "mycel-home"
    shutil.copytree(SAMPLE_HOME, target)
    for path in target.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    target.chmod(0o755)
    point_env_at(monkeypatch, target)
    return target


# -- marks by folder (tests/support/markers.py): every test under tests/browser is `browser` ---------------


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for mark in folder_marks(item.path):
            item.add_marker(mark)


# -- in CI a skipped test fails the run: a test that did not run is a test nobody knows passes ----------

_SKIPPED: list[pytest.TestReport] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # An xfail is reported as skipped with `wasxfail` set; it is an expected outcome, not a skip.
    if report.skipped and not hasattr(report, "wasxfail"):
        _SKIPPED.append(report)


# -- and no test writes into tests/data (SQLite would leave -wal/-shm files beside a database it opened) --


def _data_files() -> dict[str, tuple[int, int]]:
    return {
        str(path.relative_to(DATA)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in DATA.rglob("*")
        if path.is_file()
    }


_DATA_AT_START = _data_files()


def _data_changes() -> list[str]:
    now = _data_files()
    return sorted(
        name for name in _DATA_AT_START.keys() | now.keys() if _DATA_AT_START.get(name) != now.get(name)
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus != pytest.ExitCode.OK:
        return
    if (os.environ.get("CI") and _SKIPPED) or _data_changes():
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    # `make test` runs quietly, which hides pytest-randomly's header: say the order's seed, to replay it.
    seed = getattr(config.option, "randomly_seed", None)
    if config.pluginmanager.has_plugin("randomly") and isinstance(seed, int):
        terminalreporter.write_line(f"tests ran in random order; replay it with --randomly-seed={seed}")
    changed = _data_changes()
    if changed:
        terminalreporter.section("tests wrote into tests/data (copy it to tmp_path first)", sep="=", red=True)
        for name in changed:
            terminalreporter.write_line(name)
    if os.environ.get("CI") and _SKIPPED:
        terminalreporter.section("skipped tests fail the run in CI", sep="=", red=True)
        for report in _SKIPPED:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
            terminalreporter.write_line(f"{report.nodeid}: {reason}")


# -- PostgreSQL: one throwaway cluster per run (tests/support/postgres.py), one database per test --------


@pytest.fixture(scope="session")
def pg_server():
    from tests.support.postgres import MISSING_POSTGRES, running_postgres, server_binaries

    if server_binaries() is None:
        pytest.fail(MISSING_POSTGRES, pytrace=False)
    with running_postgres() as server:
        # Mycel dev's own database, loaded once; each test gets a copy (CREATE DATABASE … TEMPLATE).
        server.create_database("mycel_dev_sample")
        server.load_sql(server.url("mycel_dev_sample"), PG_DEV_SAMPLE / "dump.sql")
        yield server


@pytest.fixture
def pg_dev_sample(pg_server) -> str:
    """A fresh copy of the Mycel dev sample database (schema `agent`); its URL."""
    return pg_server.create_database(database_name("dev_sample"), template="mycel_dev_sample")


@pytest.fixture
def pg_main_db(pg_server, tmp_path: Path):
    """A fresh database where LangGraph's real AsyncPostgresSaver, driving the demo's real graph, wrote
    threads in Mycel main's layout (LEON_STORAGE_STRATEGY=supabase); its URL and what was written."""
    from memory_core.demo import scripts
    from memory_core.demo.graph import build_thread

    url = pg_server.create_database(database_name("main"))
    built = [
        build_thread(url, "m_pgMain0001-1", scripts.toad_qa().script, seed=7),
        build_thread(
            url, "m_pgMain0001-2", scripts.toad_compaction(str(tmp_path / "workspace")).script, seed=7
        ),
    ]
    return url, built


@pytest.fixture
def pg_dev_demo(pg_server):
    """A fresh database in Mycel dev's layout written by memory_core.demo.dev_layout (AsyncPostgresSaver.aput
    into schema `agent`, side tables from dev_tables.py); its URL and what was written."""
    from memory_core.demo.dev_layout import build_dev_demo

    url = pg_server.create_database(database_name("dev_demo"))
    return url, build_dev_demo(url)


# -- one test over both engines (tests/support/engines.py) -------------------------------------------------


@pytest.fixture(params=ENGINES)
def mycel_store(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Mycel's checkpoints on SQLite (the sample home), then on PostgreSQL (the demo's threads in main's
    layout), Mycel's environment pointed at each: a test asking for it runs once per engine."""
    from memory_core.memo import reset

    reset()
    if request.param == "sqlite":
        home = request.getfixturevalue("sample_home")
        monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "facts"))
        yield sqlite_store(home)
        return
    from memory_core.stores.postgres.connect import close_pools

    url, _ = request.getfixturevalue("pg_main_db")
    point_env_at_postgres(monkeypatch, tmp_path, url)
    yield postgres_store(url, tmp_path / "home" / ".leon")
    close_pools()  # the test's database is its own: its pool would only hold server slots
