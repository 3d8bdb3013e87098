// Restate baseline for the mobiwf benchmark.
//
// Why this exists: to put mobiwf's figures next to those of a durable-execution engine written in
// Rust on RocksDB, measured the same way on the same machine. It runs the benchmark's two shapes
// (chain10 and paper, services.mjs) on restate-server with its stock configuration (its log is
// fsynced before it acts), one Node.js endpoint (this process) serving every service over HTTP/2,
// and writes hop latency, end-to-end latency, throughput, server CPU per instance and peak memory
// as JSON, in the same fields as bench/temporal/run.py.
//
//     node bench/restate/run.mjs --out RESULT.json [--sequential 200] [--concurrency 64]
//                                [--duration 10] [--cache DIR] [--smoke]
//
// Setup is idempotent: CACHE (--cache, else $MOBIWF_RESTATE_CACHE, else /var/cache/mobiwf/restate)
// gets the npm packages SERVER_PACKAGE and SDK_PACKAGE (`npm install`, pinned versions). If that
// fails, or the server does not start, it prints "restate baseline skipped: <reason>" and exits
// with 3. (run.sh installs node and npm first when they are missing.)
//
// Each shape gets a fresh server on free loopback ports with its data in a temporary directory, so
// that one shape's history does not slow the next one down and the server's peak memory is that
// shape's. The instance's end is its last activity's end, seen in this process; a hop is from the
// end of the predecessor that finished last to the start of the successor, both stamped in this
// process on one monotonic clock.

import { spawn, spawnSync } from "node:child_process";
import {
  closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync,
} from "node:fs";
import * as http2 from "node:http2";
import { createRequire } from "node:module";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { parseArgs } from "node:util";

import { Recorder, measure } from "./measure.mjs";
import { SHAPES, definitions, target } from "./services.mjs";

const SKIPPED = 3;
const SERVER_VERSION = "1.7.12";
const SERVER_PACKAGE = `@restatedev/restate-server@${SERVER_VERSION}`;
const SDK_VERSION = "1.17.2";
const SDK_PACKAGE = `@restatedev/restate-sdk@${SDK_VERSION}`;
const DEFAULT_CACHE = "/var/cache/mobiwf/restate";
const SERVER_READY_DEADLINE_MS = 60_000;
const SERVICES_READY_DEADLINE_MS = 30_000;
const SERVER_STOP_DEADLINE_MS = 15_000;
const FULL = { sequential: 200, concurrency: 64, duration: 10, warmup: 20 };
const SMOKE = { sequential: 5, concurrency: 4, duration: 2, warmup: 2 };

class SetupError extends Error {}

// The SDK calls Promise.withResolvers (Node.js 22); Node.js 20, the newest that Debian-based
// machines commonly carry, lacks it. This is that function as the standard defines it.
Promise.withResolvers ??= function withResolvers() {
  let resolve;
  let reject;
  const promise = new this((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

const log = (message) => process.stderr.write(`restate baseline: ${message}\n`);

function skip(reason) {
  process.stderr.write(`restate baseline skipped: ${reason}\n`);
  process.exit(SKIPPED);
}

function settingsFrom() {
  const { values } = parseArgs({
    options: {
      out: { type: "string" },
      sequential: { type: "string" },
      concurrency: { type: "string" },
      duration: { type: "string" },
      cache: { type: "string" },
      smoke: { type: "boolean", default: false },
    },
  });
  if (!values.out) throw new Error("--out FILE is required (where to write the JSON figures)");
  const base = values.smoke ? SMOKE : FULL;
  const positive = (key) => {
    if (values[key] === undefined) return base[key];
    const n = Number(values[key]);
    if (!(n > 0)) throw new Error(`--${key} ${values[key]}: give a number above zero`);
    return n;
  };
  return {
    out: values.out,
    cache: path.resolve(values.cache ?? (process.env.MOBIWF_RESTATE_CACHE || DEFAULT_CACHE)),
    sequential: Math.ceil(positive("sequential")),
    concurrency: Math.ceil(positive("concurrency")),
    durationMs: positive("duration") * 1000,
    warmup: base.warmup,
  };
}

// --- setup ------------------------------------------------------------------------------------

function installed(cache) {
  const require = createRequire(path.join(cache, "package.json"));
  try {
    const sdkJson = JSON.parse(readFileSync(require.resolve("@restatedev/restate-sdk/package.json")));
    const binary = require.resolve(
      `@restatedev/restate-server-${os.platform()}-${os.arch()}/bin/restate-server`,
    );
    if (sdkJson.version !== SDK_VERSION) return null;
    const version = spawnSync(binary, ["--version"], { encoding: "utf8" });
    if (version.status !== 0 || !version.stdout.includes(SERVER_VERSION)) return null;
    return { binary, serverVersion: version.stdout.trim(), sdk: require("@restatedev/restate-sdk") };
  } catch {
    return null;
  }
}

/** The server binary and the SDK, installed into `cache` unless they are there already. */
function prepare(cache) {
  const ready = installed(cache);
  if (ready) return ready;
  log(`installing ${SERVER_PACKAGE} ${SDK_PACKAGE} into ${cache}`);
  try {
    mkdirSync(cache, { recursive: true });
    if (!existsSync(path.join(cache, "package.json"))) {
      writeFileSync(path.join(cache, "package.json"), '{ "private": true }\n');
    }
  } catch (error) {
    throw new SetupError(`${cache}: ${error.message}`);
  }
  // --ignore-scripts: the server package's only install script is a download-counting ping.
  const done = spawnSync(
    "npm",
    ["install", "--prefix", cache, "--save-exact", "--ignore-scripts", "--no-audit", "--no-fund",
      SERVER_PACKAGE, SDK_PACKAGE],
    { encoding: "utf8" },
  );
  if (done.error) throw new SetupError(`cannot run npm: ${done.error.message}`);
  if (done.status !== 0) {
    const said = (done.stderr || done.stdout || "").trim().split("\n").filter(Boolean);
    throw new SetupError(`npm install failed: ${said.at(-1) ?? `exit code ${done.status}`}`);
  }
  const now = installed(cache);
  if (!now) {
    throw new SetupError(
      `npm install succeeded but the restate-server binary for ${os.platform()}-${os.arch()} ` +
        `or the SDK is missing in ${cache}`,
    );
  }
  return now;
}

// --- the server -------------------------------------------------------------------------------

/** Ports the kernel hands out for port 0 on loopback, all held at once so that they differ. */
async function freePorts(count) {
  const servers = [];
  for (let i = 0; i < count; i++) {
    const s = net.createServer();
    await new Promise((resolve, reject) => s.once("error", reject).listen(0, "127.0.0.1", resolve));
    servers.push(s);
  }
  const ports = servers.map((s) => s.address().port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** The prefix that kills the server if this process dies without cleaning up (SIGKILL). */
function diesWithUs() {
  const found = spawnSync("sh", ["-c", "command -v setpriv"], { encoding: "utf8" });
  return found.status === 0 ? [found.stdout.trim(), "--pdeathsig", "KILL", "--"] : [];
}

const running = new Set(); // servers to stop on a signal

/** restate-server in a temporary directory, on free loopback ports; `stop()` deletes it all. */
async function startServer(binary) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mobiwf-restate-"));
  const [ingress, admin, fabric] = await freePorts(3);
  const prefix = diesWithUs();
  const command = [...prefix, binary, "--base-dir", path.join(dir, "data"), "--no-logo",
    "--bind-address", `127.0.0.1:${fabric}`];
  const logPath = path.join(dir, "server.log");
  const logFd = openSync(logPath, "w");
  const child = spawn(command[0], command.slice(1), {
    cwd: dir,
    stdio: ["ignore", logFd, logFd],
    env: {
      ...process.env,
      RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
      RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
      // Not the data path: no usage reports or version checks from a machine without internet.
      RESTATE_DISABLE_TELEMETRY: "true",
    },
  });
  closeSync(logFd);
  const server = {
    pid: child.pid, // setpriv execs the server: same pid
    ingress: `http://127.0.0.1:${ingress}`,
    admin: `http://127.0.0.1:${admin}`,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    logTail: () => {
      try {
        return readFileSync(logPath, "utf8").trim().split("\n").slice(-5).join(" | ");
      } catch {
        return "";
      }
    },
    stop: async () => {
      running.delete(server);
      if (!server.exited()) {
        const gone = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), SERVER_STOP_DEADLINE_MS);
        await gone;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
    stopNow: () => {
      if (!server.exited()) child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
  running.add(server);
  return server;
}

/** Polls until `probe()` is true; SetupError with `what` when the server dies or time runs out. */
async function until(server, deadlineMs, what, probe) {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (server.exited()) throw new SetupError(`the server exited (${what}); log: ${server.logTail()}`);
    try {
      if (await probe()) return;
    } catch {
      // not ready yet
    }
    if (Date.now() > deadline) {
      throw new SetupError(`${what} within ${deadlineMs / 1000} s; log: ${server.logTail()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function serverReady(server) {
  await until(server, SERVER_READY_DEADLINE_MS, "the server did not answer", async () => {
    const admin = await fetch(`${server.admin}/health`);
    const ingress = await fetch(`${server.ingress}/restate/health`);
    return admin.ok && ingress.ok;
  });
}

/** Registers the endpoint with the server's admin API, then waits until ingress knows it. */
async function register(server, endpointUrl, shapeName) {
  const res = await fetch(`${server.admin}/deployments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ uri: endpointUrl }),
  });
  if (!res.ok) {
    throw new Error(`registering ${endpointUrl} failed: ${res.status} ${await res.text()}`);
  }
  const first = SHAPES[shapeName].activities[0];
  const name = target(shapeName, first).name;
  await until(server, SERVICES_READY_DEADLINE_MS, `${name} was not served`, async () => {
    const svc = await fetch(`${server.admin}/services/${name}`);
    return svc.ok;
  });
}


// --- the endpoint -----------------------------------------------------------------------------

/** Every shape's services on one HTTP/2 server on a free loopback port, in this process. */
async function startEndpoint(sdk, recorder) {
  const handler = sdk.createEndpointHandler({ services: definitions(sdk, recorder) });
  const endpoint = http2.createServer(handler);
  await new Promise((resolve, reject) => {
    endpoint.once("error", reject).listen(0, "127.0.0.1", resolve);
  });
  endpoint.unref(); // the endpoint does not keep the process alive once the measurements are done
  return `http://127.0.0.1:${endpoint.address().port}`;
}

/** One shape's figures, on a server of its own. */
async function measureShape(binary, endpointUrl, recorder, shapeName, settings) {
  const server = await startServer(binary);
  try {
    await serverReady(server);
    await register(server, endpointUrl, shapeName);
    return await measure(server, recorder, shapeName, settings);
  } finally {
    await server.stop();
  }
}

/** On SIGTERM or Ctrl-C: stop the servers, delete their dirs and exit at once. */
function stopOnSignals() {
  for (const signal of ["SIGTERM", "SIGINT"]) {
    process.on(signal, () => {
      for (const server of running) server.stopNow();
      process.stderr.write(`restate baseline: stopped by ${signal}\n`);
      process.exit(128 + os.constants.signals[signal]);
    });
  }
}

async function main() {
  let settings;
  try {
    settings = settingsFrom();
  } catch (error) {
    process.stderr.write(`error: ${error.message}\n`);
    process.exit(2);
  }
  stopOnSignals();
  process.env.RESTATE_LOGGING ??= "WARN"; // the SDK logs every invocation at INFO
  const started = Date.now();
  let installation;
  try {
    installation = prepare(settings.cache);
  } catch (error) {
    if (error instanceof SetupError) skip(error.message);
    throw error;
  }
  log(`setup took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const recorder = new Recorder();
  const endpointUrl = await startEndpoint(installation.sdk, recorder);
  const workloads = {};
  for (const shapeName of Object.keys(SHAPES)) {
    try {
      workloads[shapeName] = await measureShape(
        installation.binary, endpointUrl, recorder, shapeName, settings,
      );
    } catch (error) {
      if (error instanceof SetupError) skip(`${shapeName}: ${error.message}`);
      throw error;
    }
  }
  const result = {
    restate_version: installation.serverVersion,
    sdk_version: SDK_VERSION,
    settings: {
      sequential: settings.sequential,
      concurrency: settings.concurrency,
      duration_s: settings.durationMs / 1000,
      warmup: settings.warmup,
    },
    workloads,
  };
  const text = JSON.stringify(result, null, 2);
  mkdirSync(path.dirname(path.resolve(settings.out)), { recursive: true });
  writeFileSync(settings.out, `${text}\n`);
  process.stdout.write(`${text}\n`);
  process.exit(0);
}

main().catch((error) => {
  process.stderr.write(`restate baseline failed: ${error.stack ?? error}\n`);
  for (const server of running) server.stopNow();
  process.exit(1);
});
