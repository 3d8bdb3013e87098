// The Restate side of the baseline: the benchmark's two workflow shapes as Restate services.
//
// Why this exists: to run `chain10` and `paper` the way a Restate user would build them, so that
// mobiwf's hand-off can be compared with Restate's. Each activity is a handler of the service of
// the partner that runs it (`chain10_B1`, `paper_P2`, ...); a hand-off is a durable one-way send
// (`ctx.serviceSendClient(...)` / `ctx.objectSendClient(...)`) from the handler that finished to
// the handler of its successor. An activity waiting for several predecessors (`paper`'s A3) is a
// handler of a virtual object keyed by the instance (`paper_P1_join`), which counts arrivals in
// its state and runs the activity on the last one. Activities do nothing but take their start
// and end stamps, so what is measured is Restate moving work between services.
//
// Imported by run.mjs once the SDK is installed; the SDK module is passed in.

/** A shape: its activities in an order that respects the edges, who runs each, and the edges. */
function shape(order, partnerOf, edges) {
  const activities = order.map((name) => {
    const preds = edges.filter(([, to]) => to === name).map(([from]) => from);
    const succs = edges.filter(([from]) => from === name).map(([, to]) => to);
    return { name, partner: partnerOf(name), preds, succs };
  });
  return { order, edges, activities };
}

function chain(n) {
  const names = Array.from({ length: n }, (_, i) => `a${i + 1}`);
  const edges = names.slice(1).map((to, i) => [names[i], to]);
  // As mobiwf's chain: activity i on partner B1 when i is odd, B2 when it is even.
  return shape(names, (name) => (Number(name.slice(1)) % 2 === 1 ? "B1" : "B2"), edges);
}

/** The shapes, as bench/temporal/workload.py and bench/src/workloads.rs have them. */
export const SHAPES = {
  chain10: chain(10),
  // examples/paper/workflow.xml: A1, A2, A3 on P1; A4, A5 on P2. A3 waits for A2 and A4.
  paper: shape(
    ["A1", "A2", "A4", "A3", "A5"],
    (name) => (["A1", "A2", "A3"].includes(name) ? "P1" : "P2"),
    [
      ["A1", "A2"],
      ["A2", "A4"],
      ["A2", "A3"],
      ["A4", "A3"],
      ["A3", "A5"],
    ],
  ),
};

/** The service (or, for a join, the virtual object) whose handler runs `activity`. */
export function target(shapeName, activity) {
  const join = activity.preds.length > 1;
  return { name: `${shapeName}_${activity.partner}${join ? "_join" : ""}`, join };
}

/** Microseconds on this process's monotonic clock: every handler runs in this process. */
export const nowUs = () => Number(process.hrtime.bigint() / 1000n);

/**
 * For each activity with predecessors, the time from the end of the one that finished last (the
 * hand-off that started it) to its start, in µs; as workload.py and the Rust side count hops.
 */
export function hopsUs(shapeDef, stamps) {
  const hops = [];
  for (const a of shapeDef.activities) {
    if (a.preds.length > 0) {
      const lastEnd = Math.max(...a.preds.map((p) => stamps[p][1]));
      hops.push(stamps[a.name][0] - lastEnd);
    }
  }
  return hops;
}

/** The handler of one activity: stamps, then hands off to each successor, or ends the instance. */
function handler(shapeName, shapeDef, activity, recorder) {
  const byName = Object.fromEntries(shapeDef.activities.map((a) => [a.name, a]));
  return async (ctx, input) => {
    if (activity.preds.length > 1) {
      const arrived = ((await ctx.get("arrived")) ?? 0) + 1;
      if (arrived < activity.preds.length) {
        ctx.set("arrived", arrived);
        return;
      }
      ctx.clearAll();
    }
    const started = nowUs();
    const ended = nowUs(); // the activity itself does nothing
    recorder.stamp(input.id, activity.name, started, ended);
    for (const succName of activity.succs) {
      const succ = byName[succName];
      const t = target(shapeName, succ);
      const client = t.join
        ? ctx.objectSendClient({ name: t.name }, input.id)
        : ctx.serviceSendClient({ name: t.name });
      client[succ.name](input);
    }
    if (activity.succs.length === 0) {
      recorder.finished(input.id);
    }
  };
}

/**
 * The service and object definitions of every shape. `recorder` gets `stamp(id, activity, start,
 * end)` for every activity run and `finished(id)` when an instance's last activity has run.
 */
export function definitions(restate, recorder) {
  const defs = [];
  for (const [shapeName, shapeDef] of Object.entries(SHAPES)) {
    const groups = new Map();
    for (const activity of shapeDef.activities) {
      const t = target(shapeName, activity);
      if (!groups.has(t.name)) groups.set(t.name, { join: t.join, handlers: {} });
      groups.get(t.name).handlers[activity.name] = handler(shapeName, shapeDef, activity, recorder);
    }
    for (const [name, { join, handlers }] of groups) {
      defs.push(join ? restate.object({ name, handlers }) : restate.service({ name, handlers }));
    }
  }
  return defs;
}
