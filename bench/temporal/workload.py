"""The Temporal side of the baseline: the two workflow shapes, a no-op activity, the measurements.

Imported by run.py only once it runs inside the benchmark venv, where temporalio is installed.
All figures of one shape come from one call of `measure`, against one dev server.
"""

from __future__ import annotations

import asyncio
import math
import os
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

TASK_QUEUE = "mobiwf-bench"
ACTIVITY_TIMEOUT = timedelta(seconds=60)
INSTANCE_TIMEOUT = timedelta(minutes=5)  # a stuck instance fails the run instead of hanging it
SERVER_READY_DEADLINE_S = 60.0
DRAIN_DEADLINE_S = 120.0


def log(message: str) -> None:
    print(f"temporal baseline: {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Shape:
    """A workflow shape: the order the workflow runs its activities in, and its edges."""

    order: tuple[str, ...]
    edges: tuple[tuple[str, str], ...]

    def hops_us(self, stamps: dict[str, list[int]]) -> list[float]:
        """For each activity with preconditions, the time from the end of the one that finished
        last (the hand-off that started it) to its start, in µs; as the Rust side counts hops."""
        hops = []
        for succ in self.order:
            preconditions = [pred for pred, to in self.edges if to == succ]
            if preconditions:
                last = max(preconditions, key=lambda pred: stamps[pred][1])
                hops.append((stamps[succ][0] - stamps[last][1]) / 1000)
        return hops


def _chain(n: int) -> Shape:
    names = tuple(f"a{i}" for i in range(1, n + 1))
    return Shape(order=names, edges=tuple(zip(names, names[1:])))


SHAPES: dict[str, Shape] = {
    "chain10": _chain(10),
    # A3 waits for A2 and A4, and A4 follows A2: the only order is A1, A2, A4, A3, A5.
    "paper": Shape(
        order=("A1", "A2", "A4", "A3", "A5"),
        edges=(("A1", "A2"), ("A2", "A4"), ("A2", "A3"), ("A4", "A3"), ("A3", "A5")),
    ),
}


@dataclass(frozen=True)
class Settings:
    """How much to run: instances one at a time, then `concurrency` in flight for `duration_s`."""

    sequential: int
    concurrency: int
    duration_s: float
    warmup: int


@activity.defn
async def step(name: str) -> list[int]:
    """A no-op activity: when it started and when it ended, in time.time_ns()."""
    started = time.time_ns()
    del name  # only there so that the history shows which activity of the shape this is
    return [started, time.time_ns()]


@workflow.defn
class ShapeWorkflow:
    """Runs the given activities one after the other; returns each one's [start, end] stamps."""

    @workflow.run
    async def run(self, order: list[str]) -> dict[str, list[int]]:
        stamps: dict[str, list[int]] = {}
        for name in order:
            stamps[name] = await workflow.execute_activity(
                step, name, start_to_close_timeout=ACTIVITY_TIMEOUT
            )
        return stamps


# --- /proc readings -------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _process_tree(pid: int) -> list[int]:
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(_children(current))
    return tree


def cpu_seconds(pid: int) -> float:
    """utime + stime of the process and its live descendants, in seconds."""
    ticks = 0
    for member in _process_tree(pid):
        try:
            with open(f"/proc/{member}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5)
    return ticks / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def peak_rss_mb(pid: int | str) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM in /proc/{pid}/status")


def reset_peak_rss(pid: int | str) -> bool:
    """Restart VmHWM from the current RSS (proc(5), clear_refs "5"); False where not allowed."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


# --- measurement ----------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


class ServerUnavailable(Exception):
    """The dev server exited or did not answer in time."""


async def connect(server) -> Client:
    """Connect once the dev server answers; polls until a deadline."""
    deadline = time.monotonic() + SERVER_READY_DEADLINE_S
    while True:
        if server.exited():
            raise ServerUnavailable(f"it exited with code {server.process.returncode}")
        try:
            connecting = Client.connect(server.target, namespace="default")
            return await asyncio.wait_for(connecting, timeout=5)
        except Exception as error:  # noqa: BLE001 - any failure means "not ready yet"
            if time.monotonic() > deadline:
                raise ServerUnavailable(
                    f"no answer within {SERVER_READY_DEADLINE_S:.0f} s: {error}"
                ) from error
        await asyncio.sleep(0.1)


async def run_instance(client: Client, shape: Shape) -> dict[str, list[int]]:
    return await client.execute_workflow(
        ShapeWorkflow.run,
        list(shape.order),
        id=f"bench-{uuid.uuid4()}",
        task_queue=TASK_QUEUE,
        execution_timeout=INSTANCE_TIMEOUT,
    )


async def warm_up(client: Client, shape: Shape, settings: Settings) -> None:
    for _ in range(settings.warmup):
        await run_instance(client, shape)
    await asyncio.gather(*(run_instance(client, shape) for _ in range(settings.concurrency)))


async def sequential_phase(
    client: Client, shape: Shape, count: int
) -> tuple[list[float], list[float]]:
    """One instance at a time: (end-to-end latencies, hop latencies), in microseconds."""
    e2e_us, hops = [], []
    for _ in range(count):
        started = time.perf_counter_ns()
        stamps = await run_instance(client, shape)
        e2e_us.append((time.perf_counter_ns() - started) / 1000)
        hops.extend(shape.hops_us(stamps))
    return e2e_us, hops


async def throughput_phase(
    client: Client, shape: Shape, settings: Settings, server_pid: int
) -> dict[str, float]:
    """Keep `concurrency` instances in flight for `duration_s`; count those done within the window.

    The window lasts until the first instance is done if that takes longer, so that there is
    always something to divide by. CPU per instance is taken, as on the Rust side, once the
    instances still in flight at the end of the window are done too, over all of them.
    """
    finished: list[float] = []
    first_done = asyncio.Event()
    window_start = time.monotonic()
    window_end = window_start + settings.duration_s

    async def lane() -> None:
        while time.monotonic() < window_end:
            await run_instance(client, shape)
            finished.append(time.monotonic())
            first_done.set()

    server_cpu_before, worker_cpu_before = cpu_seconds(server_pid), own_cpu_seconds()
    lanes = [asyncio.create_task(lane()) for _ in range(settings.concurrency)]
    await asyncio.sleep(window_end - time.monotonic())  # the measurement window itself
    await asyncio.wait_for(first_done.wait(), timeout=DRAIN_DEADLINE_S)
    measured_end = time.monotonic()
    completed = sum(1 for t in finished if t <= measured_end)
    await asyncio.wait_for(asyncio.gather(*lanes), timeout=DRAIN_DEADLINE_S)
    server_cpu = cpu_seconds(server_pid) - server_cpu_before
    worker_cpu = own_cpu_seconds() - worker_cpu_before
    drained = len(finished)

    return {
        "instances": completed,
        "instances_per_s": completed / (measured_end - window_start),
        "server_cpu_s_per_instance": server_cpu / drained,
        "worker_cpu_s_per_instance": worker_cpu / drained,
    }


async def measure(server, shape_name: str, settings: Settings) -> dict:
    """Every figure of one shape, against a fresh dev server (`target`, `pid`, `exited()`)."""
    shape = SHAPES[shape_name]
    reset_peak_rss("self")  # so that the worker's peak is this shape's, not the previous one's
    client = await connect(server)
    worker = Worker(
        client,
        task_queue=TASK_QUEUE,
        workflows=[ShapeWorkflow],
        activities=[step],
        # The fastest setup the Python SDK offers: workflow code needs no isolation here.
        workflow_runner=UnsandboxedWorkflowRunner(),
    )
    async with worker:
        log(f"{shape_name}: warm-up")
        await warm_up(client, shape, settings)
        log(f"{shape_name}: {settings.sequential} sequential instances")
        e2e_us, hops = await sequential_phase(client, shape, settings.sequential)
        log(f"{shape_name}: {settings.concurrency} in flight for {settings.duration_s:g} s")
        throughput = await throughput_phase(client, shape, settings, server.pid)

    return {
        "hop_p50_us": round(percentile(hops, 50), 1),
        "hop_p99_us": round(percentile(hops, 99), 1),
        "e2e_p50_us": round(percentile(e2e_us, 50), 1),
        "e2e_p99_us": round(percentile(e2e_us, 99), 1),
        "throughput_instances_per_s": round(throughput["instances_per_s"], 2),
        "throughput_activities_per_s": round(throughput["instances_per_s"] * len(shape.order), 2),
        "server_cpu_s_per_instance": round(throughput["server_cpu_s_per_instance"], 5),
        "worker_cpu_s_per_instance": round(throughput["worker_cpu_s_per_instance"], 5),
        "server_peak_rss_mb": round(peak_rss_mb(server.pid), 1),
        "worker_peak_rss_mb": round(peak_rss_mb("self"), 1),
        "instances_sequential": settings.sequential,
        "instances_throughput": throughput["instances"],
        "activities_per_instance": len(shape.order),
        "hops_measured": len(hops),
    }
