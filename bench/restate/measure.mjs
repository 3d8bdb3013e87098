// The measuring side of the Restate baseline: submits instances through the server's ingress,
// learns from the services (in this process) when each activity started and ended, and computes
// the same figures as bench/temporal/workload.py, in the same fields.
//
// Why it is apart from run.mjs: run.mjs sets up the server and the endpoint; this is what is
// measured on them, one shape against one fresh server per call of `measure`.

import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";

import { SHAPES, hopsUs, nowUs, target } from "./services.mjs";

const INSTANCE_DEADLINE_MS = 60_000; // a stuck instance fails the run instead of hanging it
const DRAIN_DEADLINE_MS = 120_000;
const SUBMIT_RETRY_DEADLINE_MS = 30_000; // ingress may learn of a new deployment a moment late

// Clock ticks per second of /proc/PID/stat's times.
const CLK_TCK = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout) || 100;

const log = (message) => process.stderr.write(`restate baseline: ${message}\n`);

// --- /proc readings ---------------------------------------------------------------------------

/** utime + stime of `pid`, in seconds. */
export function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(")").at(-1).trim().split(/\s+/);
  const ticks = Number(fields[11]) + Number(fields[12]); // fields 14 and 15 of proc(5)
  return ticks / CLK_TCK;
}

function ownCpuSeconds() {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1e6;
}

function peakRssMb(pid) {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmHWM:"));
  if (!line) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(line.split(/\s+/)[1]) / 1024;
}

/** Restart VmHWM from the current RSS (proc(5), clear_refs "5"); false where not allowed. */
function resetPeakRss(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Nearest-rank percentile. */
function percentile(values, p) {
  const ordered = [...values].sort((a, b) => a - b);
  return ordered[Math.max(0, Math.ceil((p / 100) * ordered.length) - 1)];
}

const round = (v, digits) => Number(v.toFixed(digits));

// --- instances --------------------------------------------------------------------------------

/** What the services report to: the stamps of the instances in flight, and their ends. */
export class Recorder {
  constructor() {
    this.instances = new Map();
  }

  /** An instance about to be submitted: resolves with its stamps once its last activity ran. */
  expect(id) {
    let settle;
    const done = new Promise((resolve, reject) => {
      settle = { resolve, reject };
    });
    const timer = setTimeout(() => {
      this.instances.delete(id);
      settle.reject(new Error(`instance ${id} not done within ${INSTANCE_DEADLINE_MS / 1000} s`));
    }, INSTANCE_DEADLINE_MS);
    this.instances.set(id, { stamps: {}, settle, timer });
    return done;
  }

  /** An activity ran; the first run counts (a retried invocation runs its handler again). */
  stamp(id, activity, started, ended) {
    const instance = this.instances.get(id);
    if (instance && !(activity in instance.stamps)) instance.stamps[activity] = [started, ended];
  }

  /** The instance's last activity ran. */
  finished(id) {
    const instance = this.instances.get(id);
    if (!instance) return;
    this.instances.delete(id);
    clearTimeout(instance.timer);
    instance.settle.resolve(instance.stamps);
  }
}

/** POSTs a one-way send of the shape's first activity to the ingress. */
async function submit(server, shapeName, id, retryUntil) {
  const first = SHAPES[shapeName].activities[0];
  const url = `${server.ingress}/${target(shapeName, first).name}/${first.name}/send`;
  for (;;) {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id }),
    });
    const body = await res.text();
    if (res.ok) return;
    if (!(res.status === 404 && Date.now() < retryUntil)) {
      throw new Error(`submitting to ${url} failed: ${res.status} ${body}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One instance: its stamps and its end-to-end time (submission to its last activity's end), µs. */
async function runInstance(server, recorder, shapeName, retryUntil = 0) {
  const id = randomUUID();
  const done = recorder.expect(id);
  const submitted = nowUs();
  await submit(server, shapeName, id, retryUntil);
  const stamps = await done;
  const last = SHAPES[shapeName].order.at(-1);
  return { stamps, e2eUs: stamps[last][1] - submitted };
}

// --- the phases -------------------------------------------------------------------------------

async function warmUp(server, recorder, shapeName, settings) {
  const retryUntil = Date.now() + SUBMIT_RETRY_DEADLINE_MS;
  for (let i = 0; i < settings.warmup; i++) {
    await runInstance(server, recorder, shapeName, retryUntil);
  }
  const batch = Array.from({ length: settings.concurrency }, () =>
    runInstance(server, recorder, shapeName),
  );
  await Promise.all(batch);
}

async function sequentialPhase(server, recorder, shapeName, count) {
  const e2eUs = [];
  const hops = [];
  for (let i = 0; i < count; i++) {
    const { stamps, e2eUs: e2e } = await runInstance(server, recorder, shapeName);
    e2eUs.push(e2e);
    hops.push(...hopsUs(SHAPES[shapeName], stamps));
  }
  return { e2eUs, hops };
}

/**
 * Keeps `concurrency` instances in flight for the duration; counts those done within the window
 * (which lasts until the first one is done if that takes longer). CPU per instance is taken, as on
 * the Rust side, once the instances still in flight at the end of the window are done too.
 */
async function throughputPhase(server, recorder, shapeName, settings) {
  const finished = [];
  const windowStart = Date.now();
  const windowEnd = windowStart + settings.durationMs;
  const lane = async () => {
    while (Date.now() < windowEnd) {
      await runInstance(server, recorder, shapeName);
      finished.push(Date.now());
    }
  };
  const serverCpuBefore = cpuSeconds(server.pid);
  const workerCpuBefore = ownCpuSeconds();
  const lanes = Promise.all(Array.from({ length: settings.concurrency }, lane));
  lanes.catch(() => {}); // a failed instance fails the run below, at `await lanes`, not before
  await new Promise((resolve) => setTimeout(resolve, settings.durationMs));
  const drainDeadline = Date.now() + DRAIN_DEADLINE_MS;
  while (finished.length === 0 && Date.now() < drainDeadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const measuredEnd = Date.now();
  const completed = finished.filter((t) => t <= measuredEnd).length;
  await lanes;
  const drained = finished.length;
  if (drained === 0) throw new Error(`no ${shapeName} instance finished`);
  return {
    instances: completed,
    instancesPerS: completed / ((measuredEnd - windowStart) / 1000),
    serverCpuSPerInstance: (cpuSeconds(server.pid) - serverCpuBefore) / drained,
    workerCpuSPerInstance: (ownCpuSeconds() - workerCpuBefore) / drained,
  };
}

/** Every figure of one shape, against a fresh server whose ingress knows the services. */
export async function measure(server, recorder, shapeName, settings) {
  const shape = SHAPES[shapeName];
  resetPeakRss("self"); // so that this process's peak is this shape's, not the previous one's
  log(`${shapeName}: warm-up`);
  await warmUp(server, recorder, shapeName, settings);
  log(`${shapeName}: ${settings.sequential} sequential instances`);
  const { e2eUs, hops } = await sequentialPhase(server, recorder, shapeName, settings.sequential);
  log(`${shapeName}: ${settings.concurrency} in flight for ${settings.durationMs / 1000} s`);
  const t = await throughputPhase(server, recorder, shapeName, settings);
  return {
    hop_p50_us: round(percentile(hops, 50), 1),
    hop_p99_us: round(percentile(hops, 99), 1),
    e2e_p50_us: round(percentile(e2eUs, 50), 1),
    e2e_p99_us: round(percentile(e2eUs, 99), 1),
    throughput_instances_per_s: round(t.instancesPerS, 2),
    throughput_activities_per_s: round(t.instancesPerS * shape.order.length, 2),
    server_cpu_s_per_instance: round(t.serverCpuSPerInstance, 5),
    worker_cpu_s_per_instance: round(t.workerCpuSPerInstance, 5),
    server_peak_rss_mb: round(peakRssMb(server.pid), 1),
    worker_peak_rss_mb: round(peakRssMb("self"), 1),
    instances_sequential: settings.sequential,
    instances_throughput: t.instances,
    activities_per_instance: shape.order.length,
    hops_measured: hops.length,
  };
}
