"""Load: the production server (gunicorn, as `make serve`) under N logged-in clients for a bounded time.

Run: .venv/bin/python tests/benchmarks/load.py [--clients 16] [--duration 60] [--think 0] [--quick]
(a script, not collected by pytest; `make load-smoke` runs a short quick one in `make test`).

The data home is the store benchmark's (bench_stores.py: a ~560 MB 200-turn thread and 10,000 small
threads; `--quick`: 30 turns and 500 threads) plus one 2,000-message thread written by LangGraph's real
graph and SqliteSaver (eight parallel tool calls a turn, so ~900 checkpoints rather than ~2,000); it is
built once and cached under var/bench/. The server listens on 127.0.0.1 only and is killed on exit.

Each client (a thread with its own connection and cookies) logs in, then cycles through the thread list
(pages, sorts, searches), the long thread's page, its timeline partial (htmx) and the Config what-if
partial with a proposed value: back to back by default, or pausing uniform(0, 2 * --think) seconds
between requests. After a first request of each kind on the fresh server (cold, one at a time) and a
--warmup period that is not timed, it prints per endpoint requests, requests/s, p50/p95/p99/max latency
and errors; the server's RSS (master + workers, every 0.5 s) in the first, middle and last third of the
timed run and its peak; the CPU the server and this script used; the load average. Exit status 1 when
any request failed (an HTTP status other than 200, a reset, a timeout).

Then the live phase (--live-duration seconds, 0 to skip): --live-pages open Thread pages (one client each,
on different threads) poll their live endpoint at the page's interval with the last ETag, as live.js
does, while nothing writes. It prints the answers (304 / 200) and the server's CPU over the phase as a
share of one core, less the same server's idle share over 8 s before it (what the polls add), against the
target: at most 5 % for 16 pages.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from statistics import quantiles
from urllib.parse import urlencode

import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
HERE = Path(__file__).resolve().parent

from mycel_dashboard.screens.live.pulse import POLL_INTERVAL_MS  # noqa: E402
from tests.benchmarks.bench_stores import home_folder  # noqa: E402
from tests.support.server import PASSWORD, running_server  # noqa: E402

LONG = "long-thread"
USER = "load"
PARALLEL = 8  # tool calls per turn: 11 messages and 5 checkpoints a turn
PROBLEM = re.compile(r'<p class="problem[^"]*"[^>]*>(.*?)</p>', re.S)
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


# -- the data home ----------------------------------------------------------------------------------


def long_turns(quick: bool) -> int:
    # ceil(messages / 11): 2,002 messages for the full run, 407 for the quick one.
    return 37 if quick else 182


def load_home(quick: bool) -> Path:
    """The store benchmark's home plus the long thread, generated once per parameter set."""
    base = home_folder(quick)
    if not (base / "leon.db").exists():
        print(f"generating the store benchmark's home into {base} …", flush=True)
        subprocess.check_call(
            [sys.executable, str(HERE / "bench_stores.py"), "--generate-only"]
            + (["--quick"] if quick else [])
        )
    params = {"base": base.name, "long_turns": long_turns(quick), "parallel": PARALLEL, "tool_chars": 500}
    key = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:12]
    folder = ROOT / "var" / "bench" / f"load-{key}"
    if (folder / "leon.db").exists():
        return folder
    print(f"adding a {long_turns(quick) * (PARALLEL + 3)}-message thread into {folder} …", flush=True)
    started = time.perf_counter()
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shutil.copyfile(base / "leon.db", tmp / "leon.db")
    # Imported here: langgraph is slow to import and only needed to write the home.
    from tests.core.store_builders import build_thread

    build_thread(tmp / "leon.db", LONG, turns=params["long_turns"], parallel=PARALLEL, tool_chars=500)
    with closing(sqlite3.connect(tmp / "leon.db")) as conn:
        conn.execute(
            "INSERT INTO threads (id, member_id, sandbox_type, model, is_main, branch_index, created_at) "
            "SELECT ?, 'm_bench', 'local', 'leon:large', 0, MAX(branch_index) + 1, 1796033529.0 FROM threads "
            "WHERE member_id = 'm_bench'",
            (LONG,),
        )
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    print(f"  written in {time.perf_counter() - started:.1f} s", flush=True)
    return folder


def describe_home(folder: Path) -> str:
    with closing(sqlite3.connect(f"file:{folder / 'leon.db'}?mode=ro", uri=True)) as conn:
        threads = conn.execute("SELECT COUNT(DISTINCT thread_id) FROM checkpoints").fetchone()[0]
        count, size = conn.execute(
            "SELECT COUNT(*), SUM(length(checkpoint)) FROM checkpoints WHERE thread_id = ?", (LONG,)
        ).fetchone()
    total = (folder / "leon.db").stat().st_size
    return (
        f"home {folder} ({total / 1e6:,.0f} MB leon.db, {threads:,} threads); {LONG}: "
        f"{count:,} checkpoints, {size / 1e6:,.0f} MB of checkpoints"
    )


# -- the server -------------------------------------------------------------------------------------


@contextmanager
def production_server(home: Path, *, workers: int, threads: int) -> Iterator[tuple[int, psutil.Process]]:
    """`make serve`'s gunicorn command on a free loopback port over `home`; stopped (whole group) on exit."""
    base = Path(tempfile.mkdtemp(prefix="load-"))
    log = base / "server.log"
    try:
        with running_server(
            base,
            home,
            extra_env={"LOG_LEVEL": "WARNING"},
            roles={USER: "operator"},
            workers=workers,
            threads=threads,
        ) as server:
            assert server.process is not None
            yield int(server.url.rsplit(":", 1)[1]), psutil.Process(server.process.pid)
    finally:
        errors = [line for line in log.read_text(errors="replace").splitlines() if "Traceback" in line]
        if errors:
            print(f"server log has {len(errors)} traceback(s): {log}", flush=True)
        else:
            shutil.rmtree(base, ignore_errors=True)


# -- the clients ------------------------------------------------------------------------------------


class RequestFailed(Exception):
    pass


class Client:
    """One logged-in user: a keep-alive connection and its own cookie jar."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookies: dict[str, str] = {}
        self.last_headers: http.client.HTTPMessage | None = (
            None  # the last response's (the live phase's ETag)
        )
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def request(
        self, method: str, path: str, *, body: str | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, str]:
        sent = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if body is not None:
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        for attempt in (1, 2):
            try:
                self.connection.request(method, path, body=body, headers=sent)
                response = self.connection.getresponse()
                text = response.read().decode("utf-8", errors="replace")
                self.last_headers = response.headers
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # A keep-alive connection the server closed while idle: reconnect once, as browsers do.
                self.connection.close()
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
                if attempt == 2:
                    raise
        for header in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        return response.status, text

    def log_in(self) -> None:
        status, page = self.request("GET", "/login/")
        token = CSRF.search(page)
        if status != 200 or token is None:
            raise RequestFailed(f"login page: HTTP {status}")
        form = urlencode({"username": USER, "password": PASSWORD, "csrfmiddlewaretoken": token.group(1)})
        status, _ = self.request("POST", "/login/", body=form, headers={"Referer": "/login/"})
        if status != 302 or "sessionid" not in self.cookies:
            raise RequestFailed(f"login: HTTP {status}")


@dataclass(frozen=True)
class Endpoint:
    name: str
    path: Callable[[random.Random], str]
    htmx: bool = False


SORTS = ["updated", "messages", "checkpoints", "bytes", "fill", "flags", "thread", "name", "model"]
ENDPOINTS = (
    Endpoint(
        "thread list",
        lambda rng: (
            "/threads/?"
            + urlencode(
                rng.choice(
                    [
                        {},
                        {"page": rng.randint(1, 20)},
                        {"sort": rng.choice(SORTS), "order": rng.choice(["asc", "desc"])},
                        {"q": f"small-{rng.randint(1, 500)}"},
                    ]
                )
            )
        ),
    ),
    Endpoint("thread page", lambda rng: f"/threads/{LONG}/"),
    Endpoint(
        "chart/timeline partial",
        lambda rng: (
            f"/threads/{LONG}/?"
            + urlencode({"view": rng.choice(["stored", "sent"]), "page": rng.randint(1, 10)})
        ),
        htmx=True,
    ),
    Endpoint(
        "what-if partial",
        # A slider move: a proposed soft-trim size in Mycel's accepted range.
        lambda rng: (
            "/config/?"
            + urlencode({"thread": LONG, "memory.pruning.soft_trim_chars": 500 + 250 * rng.randint(0, 40)})
        ),
        htmx=True,
    ),
)


# The first requests, one at a time on a fresh server: every cold path once (sorting by context fill
# decodes the newest checkpoint of every thread).
COLD = (
    Endpoint("thread list", lambda rng: "/threads/"),
    Endpoint("thread list by fill", lambda rng: "/threads/?sort=fill"),
    Endpoint("thread page", lambda rng: f"/threads/{LONG}/"),
    Endpoint("chart/timeline partial", lambda rng: f"/threads/{LONG}/?view=sent&page=3", htmx=True),
    Endpoint(
        "what-if partial",
        lambda rng: f"/config/?thread={LONG}&memory.pruning.soft_trim_chars=2000",
        htmx=True,
    ),
)


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def fetch(
    client: Client, endpoint: Endpoint, rng: random.Random, tally: Tally, lock: threading.Lock
) -> float:
    path = endpoint.path(rng)
    headers = {"HX-Request": "true"} if endpoint.htmx else {}
    started = time.perf_counter()
    error = problem = None
    try:
        status, text = client.request("GET", path, headers=headers)
        if status != 200:
            error = f"{path}: HTTP {status}"
        elif found := PROBLEM.search(text):
            # The page rendered, but told the operator something could not be read.
            problem = f"{path}: {found.group(1).strip()[:160]}"
    except (OSError, http.client.HTTPException) as exc:
        error = f"{path}: {type(exc).__name__}: {exc}"
    elapsed = time.perf_counter() - started
    with lock:
        tally.latencies.append(elapsed)
        if error:
            tally.errors.append(error)
        if problem:
            tally.problems.append(problem)
    return elapsed


# -- memory -----------------------------------------------------------------------------------------


class RssSampler(threading.Thread):
    """Every 0.5 s: the RSS summed over the gunicorn master and its workers, their CPU seconds so far
    and this script's (the load generator shares the machine's two cores with the server)."""

    def __init__(self, server: psutil.Process) -> None:
        super().__init__(daemon=True)
        self.server = server
        self.samples: list[tuple[float, int, float, float]] = []
        self.halt = threading.Event()

    def _processes(self) -> list[psutil.Process]:
        return [self.server, *self.server.children(recursive=True)]

    def rss(self) -> int:
        total = 0
        for process in self._processes():
            with suppress(psutil.NoSuchProcess):
                total += process.memory_info().rss
        return total

    def cpu(self) -> float:
        total = 0.0
        for process in self._processes():
            with suppress(psutil.NoSuchProcess):
                times = process.cpu_times()
                total += times.user + times.system
        return total

    def run(self) -> None:
        while not self.halt.is_set():
            try:
                self.samples.append((time.monotonic(), self.rss(), self.cpu(), time.process_time()))
            except psutil.NoSuchProcess:
                return
            self.halt.wait(0.5)

    def between(self, start: float, end: float) -> list[int]:
        return [rss for at, rss, _, _ in self.samples if start <= at <= end]

    def cpu_between(self, start: float, end: float) -> tuple[float, float, float]:
        """(seconds, server CPU seconds, load-generator CPU seconds) between the samples nearest both ends."""
        inside = [sample for sample in self.samples if start <= sample[0] <= end]
        if len(inside) < 2:
            return 0.0, 0.0, 0.0
        first, last = inside[0], inside[-1]
        return last[0] - first[0], last[2] - first[2], last[3] - first[3]


# -- the run ----------------------------------------------------------------------------------------


def percentile(sorted_values: list[float], q: int) -> float:
    if len(sorted_values) < 2:
        return sorted_values[0] if sorted_values else 0.0
    return quantiles(sorted_values, n=100, method="inclusive")[q - 1]


def drive(
    port: int, *, clients: int, duration: float, warmup: float, think: float, seed: int
) -> tuple[dict[str, Tally], float, float]:
    """`clients` threads, each logged in, cycling through the endpoints for `warmup` seconds (not
    counted) then `duration` seconds; after each response a client waits uniform(0, 2 * think) s."""
    tallies = {e.name: Tally() for e in ENDPOINTS}
    unused = {e.name: Tally() for e in ENDPOINTS}
    lock = threading.Lock()
    login_errors: list[str] = []
    ready = threading.Barrier(clients + 1)
    measuring = threading.Event()
    stop = threading.Event()

    def user(number: int) -> None:
        rng = random.Random(seed + number)
        client = Client(port)
        try:
            client.log_in()
        except (RequestFailed, OSError, http.client.HTTPException) as exc:
            login_errors.append(f"client {number}: {exc}")
        ready.wait()
        if login_errors:
            return
        # Clients start at different points of the cycle, as real users do.
        order = list(ENDPOINTS)
        shift = number % len(order)
        order = order[shift:] + order[:shift]
        while not stop.is_set():
            for endpoint in order:
                if stop.is_set():
                    break
                counted = measuring.is_set()
                tally = (tallies if counted else unused)[endpoint.name]
                fetch(client, endpoint, rng, tally, lock)
                if not counted:
                    # Warm-up requests are not timed, but an error is an error.
                    with lock:
                        tallies[endpoint.name].errors.extend(tally.errors)
                        tally.errors.clear()
                if think > 0:
                    stop.wait(rng.uniform(0, 2 * think))
        client.connection.close()

    workers = [threading.Thread(target=user, args=(n,), daemon=True) for n in range(clients)]
    for worker in workers:
        worker.start()
    ready.wait()
    if login_errors:
        raise RequestFailed("; ".join(login_errors))
    stop.wait(warmup)
    measuring.set()
    started = time.monotonic()
    stop.wait(duration)
    stop.set()
    for worker in workers:
        worker.join(timeout=180)
    return tallies, time.monotonic() - started, started


# -- the live phase --------------------------------------------------------------------------------

LIVE_IDLE_S = 8.0  # the server alone before the live phase: its idle CPU, which the polls add to
THREAD_LINK = re.compile(r'<a class="mono" href="/threads/([^"/?#]+)/"')


@dataclass
class LiveTally:
    not_modified: int = 0
    changed: int = 0
    errors: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)


def open_pages(port: int, pages: int) -> list[str]:
    """The thread ids `pages` operators have open: the long thread and the list's first ones."""
    client = Client(port)
    client.log_in()
    found = [LONG]
    page = 1
    while len(found) < pages and page <= 5:
        _, text = client.request("GET", f"/threads/?page={page}")
        found.extend(t for t in THREAD_LINK.findall(text) if t not in found)
        page += 1
    client.connection.close()
    return found[:pages]


def drive_live(port: int, *, pages: int, duration: float, interval: float) -> tuple[LiveTally, float, float]:
    """One client per open Thread page polling its live endpoint every `interval` seconds with the last
    ETag in If-None-Match, as live.js does; the pages were opened at different moments of an interval."""
    thread_ids = open_pages(port, pages)
    tally = LiveTally()
    lock = threading.Lock()
    ready = threading.Barrier(len(thread_ids) + 1)
    stop = threading.Event()

    def page(number: int, thread_id: str) -> None:
        client = Client(port)
        client.log_in()
        path = f"/threads/{thread_id}/live/"
        # The page arrives with its tag (data-etag, read as the page was drawn): live.js's polls send it
        # from the first, so an open page's first poll is already a 304. Fetched here, before timing.
        client.request("GET", path, headers={"HX-Request": "true"})
        etag = client.last_headers.get("ETag") if client.last_headers is not None else None
        ready.wait()
        stop.wait(interval * number / len(thread_ids))
        while not stop.is_set():
            headers = {"HX-Request": "true", **({"If-None-Match": etag} if etag else {})}
            started = time.perf_counter()
            status = 0
            try:
                # A keep-alive connection gunicorn closed between polls is reopened, as a browser does.
                status, _ = client.request("GET", path, headers=headers)
                error = None if status in (200, 304) else f"{path}: HTTP {status}"
                if client.last_headers is not None:
                    etag = client.last_headers.get("ETag") or etag
            except (OSError, http.client.HTTPException) as exc:
                error = f"{path}: {type(exc).__name__}: {exc}"
            with lock:
                tally.latencies.append(time.perf_counter() - started)
                if error:
                    tally.errors.append(error)
                elif status == 304:
                    tally.not_modified += 1
                else:
                    tally.changed += 1
            stop.wait(interval)
        client.connection.close()

    workers = [threading.Thread(target=page, args=(n, t), daemon=True) for n, t in enumerate(thread_ids)]
    for worker in workers:
        worker.start()
    ready.wait()
    started = time.monotonic()
    stop.wait(duration)
    stop.set()
    for worker in workers:
        worker.join(timeout=60)
    return tally, time.monotonic() - started, started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    parser.add_argument("--quick", action="store_true", help="the small home (400-message thread), for CI")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (as `make serve`)")
    parser.add_argument(
        "--threads", type=int, default=4, help="gunicorn threads per worker (as `make serve`)"
    )
    parser.add_argument(
        "--warmup",
        type=float,
        default=10.0,
        help="seconds of the same load before timing starts (default 10)",
    )
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="mean pause of a client between requests, uniform in [0, 2*THINK] s (default 0: back to back)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--live-duration",
        type=float,
        default=60.0,
        help="seconds of the live phase: open Thread pages polling, nothing changing (default 60; 0 skips it)",
    )
    parser.add_argument("--live-pages", type=int, default=16, help="open Thread pages in the live phase")
    args = parser.parse_args()
    if not 1 <= args.clients <= 256 or not 0 < args.duration <= 3600 or not 0 <= args.warmup <= 600:
        parser.error("--clients must be 1..256, --duration 0..3600 s and --warmup 0..600 s")
    if not 0 <= args.think <= 60:
        parser.error("--think must be 0..60 s")

    home = load_home(args.quick)
    load_before = os.getloadavg()[0]
    print(describe_home(home))
    print(
        f"machine: {os.cpu_count()} CPUs, {psutil.virtual_memory().total / 2**30:.0f} GiB; "
        f"gunicorn {args.workers} workers x {args.threads} threads; {args.clients} clients, "
        f"{args.warmup:.0f} s warm-up + {args.duration:.0f} s timed, think time "
        + (f"uniform(0, {2 * args.think:g}) s" if args.think else "none (back to back)")
    )
    with production_server(home, workers=args.workers, threads=args.threads) as (port, server):
        sampler = RssSampler(server)
        sampler.start()
        idle_rss = sampler.rss()
        # The first request of each kind, one at a time: what the first operator of the day waits for
        # (one worker's caches only; the other worker fills its own during the run).
        first = Client(port)
        first.log_in()
        cold_tally = Tally()
        lock = threading.Lock()
        rng = random.Random(args.seed)
        colds = {e.name: fetch(first, e, rng, cold_tally, lock) for e in COLD}
        first.connection.close()
        tallies, elapsed, measured_from = drive(
            port,
            clients=args.clients,
            duration=args.duration,
            warmup=args.warmup,
            think=args.think,
            seed=args.seed,
        )
        load_ended = time.monotonic()
        live = None
        if args.live_duration > 0:
            # Let the last requests of the load finish, then measure the server alone: its own idle work
            # (gunicorn's heartbeats) is what the pages' polls add to.
            time.sleep(2.0)
            idle_from = time.monotonic()
            time.sleep(LIVE_IDLE_S)
            idle_window = (idle_from, time.monotonic())
            live = drive_live(
                port, pages=args.live_pages, duration=args.live_duration, interval=POLL_INTERVAL_MS / 1000
            )
        sampler.halt.set()
        sampler.join()
        end_rss = sampler.rss()

    tallies["thread list"].errors.extend(cold_tally.errors)
    tallies["thread list"].problems.extend(cold_tally.problems)
    print(
        f"\nfirst request of each kind (one client, caches empty): server at {idle_rss / 2**20:.0f} MB idle"
    )
    for name, seconds in colds.items():
        print(f"  {name:24} {seconds * 1000:8.0f} ms")
    print(
        f"\n{args.clients} clients, timed for {elapsed:.1f} s after the warm-up "
        "(latency measured by the client over loopback; requests in flight at the end are counted):"
    )
    header = f"  {'endpoint':24}{'requests':>9}{'req/s':>8}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}{'errors':>8}"
    print(header)
    total = 0
    failed = 0
    for name, tally in tallies.items():
        values = sorted(tally.latencies)
        total += len(values)
        failed += len(tally.errors)
        print(
            f"  {name:24}{len(values):9,}{len(values) / elapsed:8.1f}"
            f"{percentile(values, 50) * 1000:9.0f}{percentile(values, 95) * 1000:9.0f}"
            f"{percentile(values, 99) * 1000:9.0f}{(values[-1] if values else 0) * 1000:9.0f}{len(tally.errors):8}"
        )
    print(f"  {'all':24}{total:9,}{total / elapsed:8.1f}")

    during = sampler.between(measured_from, load_ended)
    flat = True
    if during:
        third = max(1, len(during) // 3)
        start_mb, mid_mb, end_mb = (
            max(during[:third]) / 2**20,
            max(during[third : 2 * third] or during) / 2**20,
            max(during[-third:]) / 2**20,
        )
        print(
            f"\nserver RSS, master + {args.workers} workers (sampled every 0.5 s): idle {idle_rss / 2**20:.0f} MB; "
            f"timed run ({len(during)} samples) peak in its first / middle / last third "
            f"{start_mb:.0f} / {mid_mb:.0f} / {end_mb:.0f} MB, peak {max(during) / 2**20:.0f} MB; "
            f"after the run {end_rss / 2**20:.0f} MB"
        )
        flat = end_mb <= mid_mb * 1.10 + 20
        print(
            f"memory flat over the timed run (last third within 10 % of the middle): {'yes' if flat else 'NO'}"
        )

    seconds, server_cpu, own_cpu = sampler.cpu_between(measured_from, load_ended)
    if seconds:
        print(
            f"CPU over the timed run: server {server_cpu / seconds:.2f} cores, this load generator "
            f"{own_cpu / seconds:.2f} cores (of {os.cpu_count()}); load average "
            f"{load_before:.1f} before the run, {os.getloadavg()[0]:.1f} after (other work on the machine counts)"
        )

    live_share = None
    if live is not None:
        live_tally, live_elapsed, live_from = live
        seconds, server_cpu, _ = sampler.cpu_between(live_from, live_from + live_elapsed)
        total_share = server_cpu / seconds if seconds else 0.0
        idle_seconds, idle_cpu, _ = sampler.cpu_between(*idle_window)
        idle_share = idle_cpu / idle_seconds if idle_seconds else 0.0
        live_share = max(total_share - idle_share, 0.0)
        values = sorted(live_tally.latencies)
        print(
            f"\nlive phase: {args.live_pages} open Thread pages polling their live endpoint every "
            f"{POLL_INTERVAL_MS / 1000:g} s for {live_elapsed:.0f} s, nothing changing: "
            f"{live_tally.not_modified:,} answered 304, {live_tally.changed:,} answered 200, "
            f"{len(live_tally.errors)} errors; p50 {percentile(values, 50) * 1000:.1f} ms, "
            f"p95 {percentile(values, 95) * 1000:.1f} ms"
        )
        polls = live_tally.not_modified + live_tally.changed
        print(
            f"live cost: the polls add {live_share * 100:.1f} % of one core (server CPU {total_share * 100:.1f} % "
            f"over the phase, {server_cpu:.2f} CPU s in {seconds:.1f} s; the same server idle "
            f"{idle_share * 100:.1f} % over {idle_seconds:.0f} s before it): "
            f"{live_share * seconds / max(polls, 1) * 1000:.1f} ms of server CPU per poll"
        )
        tallies.setdefault("live poll", Tally()).errors.extend(live_tally.errors)

    problems = [p for t in tallies.values() for p in t.problems]
    if problems:
        # "queue.db does not exist" and the like: the page said so plainly, as it should.
        kinds = sorted({p.split(": ", 1)[-1] for p in problems})
        print(f"\n{len(problems)} page(s) carried a store message; distinct: {'; '.join(kinds[:5])}")
    errors = [e for t in tallies.values() for e in t.errors]
    for error in errors[:10]:
        print(f"ERROR {error}")
    page = sorted(tallies["thread page"].latencies)
    p95 = percentile(page, 95)
    print(
        f"\ntargets: zero errors: {'met' if not errors else f'MISSED ({len(errors)})'}; "
        f"thread page p95 <= 500 ms at 16 clients: "
        + (
            ("met" if p95 <= 0.5 else "MISSED")
            if args.clients >= 16 and not args.quick
            else "(full run with 16 clients only)"
        )
        + f" ({p95 * 1000:.0f} ms); memory flat: {'met' if flat else 'MISSED'}"
        + (
            ""
            if live_share is None
            else "; live cost <= 5 % of one core for 16 open pages: "
            + (("met" if live_share <= 0.05 else "MISSED") if args.live_pages >= 16 else "(16 pages only)")
            + f" ({live_share * 100:.1f} %)"
        )
    )
    return 1 if errors else 0


if __name__ == "__main__":
    # A plain `kill` unwinds like Ctrl-C, so the server's process group is stopped on the way out.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted; the server was stopped", file=sys.stderr)
        sys.exit(130)
