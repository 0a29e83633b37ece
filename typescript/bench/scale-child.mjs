// One measurement of the scale benchmark (python/capability-graph/bench/bench_scale.py) for the
// TypeScript implementation, in a fresh process so that memory figures do not mask each other.
// argv: MODE (bare | run), and for run: a provider file, its number of capabilities, the resolve
// roots (a JSON array) and the match deadline in ms.
// bare: the package imported, nothing opened (the baseline of the memory per capability).
// run: open, describe, resolve of one capability, list paging through everything, resolve at
// depth 3 from the roots, a cold then a warm lexical match under a ticker (setInterval every
// 10 ms, the longest gap between two ticks), reload of the same file. Prints one JSON object
// (times in ms, except open and reload in s; memory in MB), the same members as the Python child.
import { readFileSync } from "node:fs";

const [mode, path, sizeText, rootsText, timeoutText] = process.argv.slice(2);
const { CapabilityGraph, GraphError } = await import("../dist/src/index.js");

const mb = (bytes) => bytes / 2 ** 20;
const peakRssMb = () => process.resourceUsage().maxRSS / 1024;
const rssMb = () => mb(process.memoryUsage().rss);

if (mode === "bare") {
  process.stdout.write(`${JSON.stringify({ peak_rss_mb: peakRssMb(), rss_mb: rssMb() })}\n`);
  process.exit(0);
}

const size = Number(sizeText);
const roots = JSON.parse(rootsText);
const timeoutMs = Number(timeoutText);
const fileBytes = readFileSync(path).length;
const config = {
  providers: [{ path }],
  budgets: {
    maxCapabilities: 10000000,
    maxCatalogEntries: Math.min(size, 1000000),
    maxDefinitionBytes: 1073741824,
    maxResultBytes: 268435456,
  },
  model: { executor: "lexical" },
};

/** The best time (ms) of `times` runs of `work`, and its last result. */
async function best(times, work) {
  let fastest = Number.POSITIVE_INFINITY;
  let result;
  for (let i = 0; i < times; i += 1) {
    const started = performance.now();
    result = await work();
    fastest = Math.min(fastest, performance.now() - started);
  }
  return [fastest, result];
}

/** Await `work` while an interval ticks every 10 ms: the outcome (the result's status or the
 * error's code), its time and the longest gap between two ticks. */
async function ticked(work) {
  let last = performance.now();
  let maxGap = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
  }, 10);
  await new Promise((resolve) => setTimeout(resolve, 0)); // the ticker runs before the work
  last = performance.now();
  const started = performance.now();
  let outcome;
  try {
    outcome = (await work()).status;
  } catch (error) {
    if (!(error instanceof GraphError)) throw error;
    outcome = error.code;
  }
  const elapsed = performance.now() - started;
  maxGap = Math.max(maxGap, performance.now() - last);
  clearInterval(ticker);
  return { outcome, ms: elapsed, maxGap };
}

let started = performance.now();
const graph = await CapabilityGraph.open(config);
const openS = (performance.now() - started) / 1000;
const peakAfterOpen = peakRssMb();
const rssAfterOpen = rssMb();

const [describeMs] = await best(5, () => graph.call("describe_graph", {}));
const [describeOneMs, one] = await best(5, () =>
  graph.call("resolve_capabilities", { ids: [roots[0]], relations: { depth: 0 } }),
);
if (one.capabilities.length !== 1) throw new Error("describe of one capability: not one");

const seen = new Set();
let pages = 0;
let cursor;
let firstPageMs = 0;
let lastPageMs = 0;
started = performance.now();
for (;;) {
  const pageStarted = performance.now();
  const page = await graph.call(
    "list_capabilities",
    cursor === undefined ? { limit: 500 } : { limit: 500, cursor },
  );
  lastPageMs = performance.now() - pageStarted;
  if (pages === 0) firstPageMs = lastPageMs;
  pages += 1;
  for (const item of page.items) seen.add(item.id);
  cursor = page.nextCursor;
  if (cursor === undefined) break;
}
const listS = (performance.now() - started) / 1000;
if (seen.size !== size) throw new Error(`list paged through ${seen.size} of ${size}`);

const [resolveMs, closure] = await best(5, () =>
  graph.call("resolve_capabilities", { ids: roots, relations: { depth: 3 } }),
);

const request = { request: "handles request kind 42 for route family 7", timeoutMs };
const cold = await ticked(() => graph.call("match_capabilities", request));
const warm = await ticked(() => graph.call("match_capabilities", request));

started = performance.now();
const reloaded = await graph.reload();
const reloadS = (performance.now() - started) / 1000;
if (!reloaded.ok) throw new Error(`reload failed: ${JSON.stringify(reloaded)}`);
await graph.close();

const report = {
  file_bytes: fileBytes,
  open_s: openS,
  peak_rss_mb: peakAfterOpen,
  rss_after_open_mb: rssAfterOpen,
  describe_ms: describeMs,
  describe_one_ms: describeOneMs,
  list_s: listS,
  list_pages: pages,
  list_items: seen.size,
  list_first_page_ms: firstPageMs,
  list_last_page_ms: lastPageMs,
  resolve_ms: resolveMs,
  resolved: closure.capabilities.length,
  match_ms: cold.ms,
  match_outcome: cold.outcome,
  match_warm_ms: warm.ms,
  match_warm_outcome: warm.outcome,
  ticker_max_gap_ms: Math.max(cold.maxGap, warm.maxGap),
  reload_s: reloadS,
  peak_rss_end_mb: peakRssMb(),
};
process.stdout.write(`${JSON.stringify(report)}\n`);
