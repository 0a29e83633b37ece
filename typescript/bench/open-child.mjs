// One measurement of the `open` benchmark (python/capability-graph/bench/bench_typescript.py), in a fresh process so
// that peak RSS figures do not mask each other. argv: MODE (parse | floor | open) and a provider file.
// parse: reading the file and JSON.parse of its text; open: CapabilityGraph.open of a configuration
// naming it, which reads it too (modules imported before the clock starts); floor: parse, then
// the serialization and hash a revision needs. Prints {"seconds",
// "rss_mb"}.
import { readFileSync } from "node:fs";

const [mode, path] = process.argv.slice(2);
let seconds;
if (mode === "parse") {
  const started = performance.now();
  JSON.parse(readFileSync(path).toString("utf8"));
  seconds = (performance.now() - started) / 1000;
} else if (mode === "floor") {
  // What open cannot do with less: read and parse the file, then write the value back as JSON
  // (JSON.stringify without a property list, faster than any canonical writer) and hash those
  // bytes with SHA-256, as a revision needs ([CG-REV-1]); no validation at all.
  const { createHash } = await import("node:crypto");
  const started = performance.now();
  const value = JSON.parse(readFileSync(path).toString("utf8"));
  createHash("sha256").update(JSON.stringify(value), "utf8").digest("hex");
  seconds = (performance.now() - started) / 1000;
} else {
  const { CapabilityGraph } = await import("../dist/src/index.js");
  const budgets = {
    maxCapabilities: 10000000,
    maxDefinitionBytes: 1073741824,
    maxResultBytes: 268435456,
  };
  const started = performance.now();
  const graph = await CapabilityGraph.open({ providers: [{ path }], budgets });
  seconds = (performance.now() - started) / 1000;
  await graph.close();
}
const rss_mb = process.resourceUsage().maxRSS / 1024;
process.stdout.write(`${JSON.stringify({ seconds, rss_mb })}\n`);
