// Reload and close storms ([CG-LIFE-1], [CG-LIFE-3], [CG-LIFE-4], [CG-LIFE-5], [CG-LIFE-8],
// [CG-LIFE-9], [CG-MODEL-4]).
//
// Reload storm: every operation is queried from many async tasks while one reloader alternates
// valid and invalid candidates (syntax, unknown key, bad relation, a cycle across providers, a
// duplicate provider id, a file over maxDefinitionBytes, a missing file). Every result names a
// published revision and shows exactly that snapshot's provider versions (describe, list,
// resolve, and the catalog a match's executor saw); nothing but defined errors; a failed reload
// never publishes.
//
// Close storm: close() during many active matches rejects every one with exactly
// CG_GRAPH_CLOSED/lifecycle within a bound; no late result is delivered (not even from an
// executor that ignores the stop and answers afterwards); the codex executor's real process
// trees (a fake `codex` on PATH that spawns a child and ignores SIGTERM) are all gone.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { afterEach, beforeEach, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { CapabilityGraph, type Executor, type ExecutorJob } from "../src/index.js";
import { fakeCodex } from "./executors/fake-codex.js";
import { generator } from "./random.js";
import { expected, outcomeOf, undefinedErrorProblem } from "./reliability.js";
import { scaled } from "./scale.js";

const CLOSED = expected("CG_GRAPH_CLOSED", "lifecycle");
const RELOAD_FAILED = expected("CG_RELOAD_FAILED", "load");
const TOOLS = [
  "describe_graph",
  "list_capabilities",
  "resolve_capabilities",
  "match_capabilities",
  "read_document",
] as const;
type Tool = (typeof TOOLS)[number];

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), "cg-storms-"));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

/** A small deterministic random source (mulberry32), so a failure replays from its seed. */
function randomSource(seed: number) {
  const next = generator(seed);
  return {
    next,
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
  };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

// --- the reload storm ---------------------------------------------------------------------------

const PROVIDERS = ["acme", "beta"] as const;
type ProviderId = (typeof PROVIDERS)[number];
type Versions = Record<ProviderId, number>;

/**
 * Provider `providerId` at `version`: 2 + version % 3 capabilities, every description carrying
 * the marker `<provider>@v<version>`, so a result shows which version it came from.
 */
function versioned(providerId: string, version: number) {
  const mark = `${providerId}@v${version}`;
  const capabilities: Record<string, unknown>[] = [
    {
      id: "base",
      name: "Base",
      description: `${mark} base`,
      tags: ["t"],
      relations: [{ kind: "requires", target: "c1" }],
      documents: [{ id: "guide", title: "Guide", path: "guide.md" }],
    },
  ];
  for (let index = 1; index < 2 + (version % 3); index += 1)
    capabilities.push({
      id: `c${index}`,
      name: `C${index}`,
      description: `${mark} c${index}`,
      tags: ["t"],
    });
  return { providerId, name: providerId, version: String(version), capabilities };
}

const INVALID_KINDS = [
  "syntax",
  "unknown-key",
  "relation-invalid",
  "cross-cycle",
  "duplicate-provider",
  "too-large",
  "missing-file",
] as const;

/** The two definition files of the storm, rewritten by renames (a reader never sees half a file). */
class StormFiles {
  readonly config: string;
  constructor(readonly directory: string) {
    writeFileSync(join(directory, "guide.md"), "guide\n");
    for (const name of PROVIDERS) this.write(name, versioned(name, 0));
    this.config = join(directory, "capability-graph.json");
    writeFileSync(
      this.config,
      JSON.stringify({
        providers: PROVIDERS.map((name) => ({ path: `${name}.json` })),
        budgets: { maxDefinitionBytes: 65_536 },
      }),
    );
  }

  write(name: string, value: unknown): void {
    const temporary = join(this.directory, `.${name}.tmp`);
    writeFileSync(temporary, typeof value === "string" ? value : JSON.stringify(value));
    renameSync(temporary, join(this.directory, `${name}.json`));
  }

  prepareValid(names: readonly ProviderId[], version: number): void {
    for (const name of names) this.write(name, versioned(name, version));
  }

  prepareInvalid(
    names: readonly ProviderId[],
    kind: (typeof INVALID_KINDS)[number],
    version: number,
  ) {
    const first = names[0] as ProviderId;
    const other = first === "acme" ? "beta" : "acme";
    if (kind === "syntax") this.write(first, `{"providerId": "${first}", "name": `);
    else if (kind === "unknown-key")
      this.write(first, { ...versioned(first, version), unknown: 1 });
    else if (kind === "relation-invalid") {
      const broken = versioned(first, version);
      (broken.capabilities[0] as Record<string, unknown>).relations = [
        { kind: "requires", target: "nope" },
      ];
      this.write(first, broken);
    } else if (kind === "cross-cycle") {
      for (const name of PROVIDERS) {
        const cyclic = versioned(name, version);
        const target = `${name === "acme" ? "beta" : "acme"}::base`;
        (cyclic.capabilities[0] as Record<string, unknown>).relations = [
          { kind: "requires", target },
        ];
        this.write(name, cyclic);
      }
    } else if (kind === "duplicate-provider") this.write(first, versioned(other, version));
    else if (kind === "too-large") {
      const padded = versioned(first, version);
      for (let index = 0; index < 20; index += 1)
        padded.capabilities.push({ id: `pad${index}`, name: "Pad", description: "p".repeat(4000) });
      this.write(first, padded);
    } else rmSync(join(this.directory, `${first}.json`), { force: true });
  }
}

/** An executor answering with the first catalog entry, its description as the reason (so the
 * result shows which snapshot's catalog it saw), after a short random pause. */
function catalogEcho(seed: number): Executor {
  const random = randomSource(seed);
  return {
    name: "echo",
    async execute(job: ExecutorJob) {
      await sleep(random.pick([0, 0, 1, 3]));
      const entry = job.catalog[0];
      assert.ok(entry !== undefined);
      return {
        status: "matched",
        candidates: [{ id: entry.id, confidence: 0.5, reason: entry.description }],
      };
    },
  };
}

const STORM_REQUESTS: Record<Tool, Record<string, unknown>> = {
  describe_graph: {},
  list_capabilities: { limit: 3 },
  resolve_capabilities: { ids: ["acme::base", "beta::base"], relations: { depth: 2 } },
  match_capabilities: { request: "find the base capability" },
  read_document: { capabilityId: "acme::base", documentId: "guide" },
};

/** The provider versions named by the markers of `text`. */
function versionsOf(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const word of text.split(" ")) {
    const at = word.indexOf("@v");
    if (at > 0) found.set(word.slice(0, at), Number(word.slice(at + 2)));
  }
  return found;
}

/** Problems with `result` as a view of the one snapshot its revision names. */
function snapshotProblems(
  tool: Tool,
  result: Record<string, unknown>,
  published: ReadonlyMap<string, Versions>,
): string[] {
  if (tool === "read_document") return result.text === "guide\n" ? [] : ["read_document: text"];
  const versions = published.get(result.revision as string);
  if (versions === undefined)
    return [`${tool}: revision ${String(result.revision)} was never published`];
  const problems: string[] = [];
  const agree = (text: string, where: string) => {
    for (const [name, version] of versionsOf(text)) {
      if (versions[name as ProviderId] !== version)
        problems.push(
          `${tool}: ${where} shows ${name}@v${version}, the snapshot has ${JSON.stringify(versions)}`,
        );
    }
  };
  type Described = { id: string; description: string };
  if (tool === "describe_graph") {
    for (const entry of result.providers as Array<Record<string, unknown>>) {
      const version = versions[entry.providerId as ProviderId];
      if (entry.version !== String(version) || entry.capabilityCount !== 2 + (version % 3))
        problems.push(
          `describe: ${JSON.stringify(entry)}, the snapshot has ${JSON.stringify(versions)}`,
        );
    }
  } else if (tool === "list_capabilities") {
    for (const item of result.items as Described[]) agree(item.description, item.id);
  } else if (tool === "resolve_capabilities") {
    for (const detail of result.capabilities as Described[]) agree(detail.description, detail.id);
  } else {
    for (const candidate of result.candidates as Array<{ id: string; reason?: string }>)
      agree(candidate.reason ?? "", candidate.id);
  }
  return problems;
}

interface ReloadStorm {
  reloadsOk: number;
  reloadsFailed: number;
  queries: Map<Tool, number>;
  revisionsSeen: Set<string>;
  violations: string[];
}

/** Queries of every operation from `queriers` tasks while one task reloads `reloads` times. */
async function reloadStorm(reloads: number, queriers: number, seed: number): Promise<ReloadStorm> {
  const random = randomSource(seed);
  const files = new StormFiles(folder);
  const storm: ReloadStorm = {
    reloadsOk: 0,
    reloadsFailed: 0,
    queries: new Map(),
    revisionsSeen: new Set(),
    violations: [],
  };
  const graph = await CapabilityGraph.open(files.config, { executor: catalogEcho(seed) });
  const serving: Versions = { acme: 0, beta: 0 };
  /** graph revision -> the provider versions of its snapshot */
  const published = new Map<string, Versions>([
    [(await graph.describe()).revision, { ...serving }],
  ]);
  let current = [...published.keys()][0] as string;
  // Checked once the storm is over: a query may see a new snapshot before the reloader has
  // recorded what it holds.
  const results: Array<[Tool, Record<string, unknown>]> = [];
  let done = false;

  const querier = async (index: number) => {
    const local = randomSource(seed * 1000 + index);
    while (!done) {
      const tool = local.pick(TOOLS);
      try {
        const result = await graph.call(tool, STORM_REQUESTS[tool]);
        results.push([tool, result]);
        if (tool === "list_capabilities" && typeof result.nextCursor === "string") {
          const page = await graph.call(tool, { limit: 3, cursor: result.nextCursor });
          if (page.revision !== result.revision)
            storm.violations.push("a cursor crossed revisions");
          results.push([tool, page]);
        }
      } catch (error) {
        const object = (error as { toJSON?: () => unknown }).toJSON?.() ?? String(error);
        // A page whose revision was replaced meanwhile is a foreign cursor ([CG-LIFE-5]).
        const stale =
          tool === "list_capabilities" &&
          (object as { code?: unknown }).code === "CG_INPUT_INVALID";
        if (!stale) storm.violations.push(`${tool}: unexpected ${JSON.stringify(object)}`);
      }
      storm.queries.set(tool, (storm.queries.get(tool) ?? 0) + 1);
      await nextTurn();
    }
  };

  const reloader = async () => {
    for (let step = 1; step <= reloads; step += 1) {
      let names = random.pick<readonly ProviderId[]>([["acme"], ["beta"], ["acme", "beta"]]);
      let request =
        names.length === 2 && random.next() < 0.5 ? undefined : { providers: [...names] };
      if (step % 2 === 1) {
        files.prepareValid(names, step);
        const result = await graph.reload(request);
        if (!result.ok) {
          storm.violations.push(`a valid reload failed: ${JSON.stringify(result)}`);
          continue;
        }
        for (const name of names) serving[name] = step;
        if (!published.has(result.revision)) published.set(result.revision, { ...serving });
        current = result.revision;
        storm.reloadsOk += 1;
      } else {
        const kind = INVALID_KINDS[
          (step / 2) % INVALID_KINDS.length
        ] as (typeof INVALID_KINDS)[number];
        if (kind === "cross-cycle") {
          names = PROVIDERS;
          request = undefined;
        }
        files.prepareInvalid(names, kind, step);
        const result = await graph.reload(request);
        storm.reloadsFailed += 1;
        if (result.ok) storm.violations.push(`an invalid reload (${kind}) published`);
        else {
          if (
            result.revision !== current ||
            JSON.stringify(result.error) !== JSON.stringify(RELOAD_FAILED)
          )
            storm.violations.push(`a failed reload (${kind}) moved: ${JSON.stringify(result)}`);
          for (const entry of result.providers) {
            const problem = entry.ok ? undefined : undefinedErrorProblem(entry.error);
            if (problem !== undefined)
              storm.violations.push(`a failed reload (${kind}): ${problem}`);
          }
        }
        if ((await graph.describe()).revision !== current)
          storm.violations.push(`a failed reload (${kind}) is serving`);
        // Valid files again for the next step; the serving snapshot is unchanged.
        files.prepareValid(PROVIDERS, step);
      }
      await sleep(random.pick([0, 1, 5]));
    }
    done = true;
  };

  try {
    await Promise.all([
      reloader(),
      ...Array.from({ length: queriers }, (_, index) => querier(index)),
    ]);
  } finally {
    await graph.close();
  }
  for (const [tool, result] of results) {
    storm.violations.push(...snapshotProblems(tool, result, published));
    if (typeof result.revision === "string") storm.revisionsSeen.add(result.revision);
  }
  return storm;
}

describe("reload storm ([CG-LIFE-1], [CG-LIFE-3] .. [CG-LIFE-5])", () => {
  test("queries from many tasks during a reload storm see only whole published snapshots", async (t) => {
    const reloads = scaled(30);
    const storm = await reloadStorm(reloads, 16, 9);
    t.diagnostic(
      JSON.stringify({
        queries: Object.fromEntries(storm.queries),
        revisionsSeen: storm.revisionsSeen.size,
      }),
    );
    assert.deepEqual(storm.violations, []);
    assert.equal(storm.reloadsOk, reloads / 2);
    assert.equal(storm.reloadsFailed, reloads / 2);
    assert.deepEqual(new Set(storm.queries.keys()), new Set(TOOLS));
    const total = [...storm.queries.values()].reduce((sum, count) => sum + count, 0);
    assert.ok(total >= 200, `only ${total} queries`);
    // The queries really did straddle publications.
    assert.ok(storm.revisionsSeen.size >= 3, `only ${storm.revisionsSeen.size} revisions seen`);
  });
});

// --- the close storm ----------------------------------------------------------------------------

const CONFIG = {
  providers: [
    {
      definition: {
        providerId: "acme",
        name: "Acme",
        version: "1",
        capabilities: [
          {
            id: "a",
            name: "A",
            description: "Does a.",
            documents: [{ id: "guide", title: "Guide", path: "guide.md" }],
          },
          { id: "b", name: "B", description: "Does b." },
        ],
      },
    },
  ],
};
const VALID_REQUESTS: Record<Tool, Record<string, unknown>> = {
  describe_graph: {},
  list_capabilities: {},
  resolve_capabilities: { ids: ["acme::a"] },
  match_capabilities: { request: "x" },
  read_document: { capabilityId: "acme::a", documentId: "guide" },
};
/** close() -> the last active match rejected, for executors that stop when told to (loaded
 * 2-core machine). */
const CLOSE_BOUND_MS = 2000;
/** For the codex executor: TERM to the process group, then KILL after one second. */
const CODEX_CLOSE_BOUND_MS = 5000;

/** An executor that sleeps until stopped and would answer a valid result afterwards. */
function sleeper() {
  const counts = { entered: 0, finished: 0 };
  const executor: Executor = {
    name: "sleeper",
    async execute(job: ExecutorJob) {
      counts.entered += 1;
      await sleep(30_000, undefined, { signal: job.signal });
      counts.finished += 1;
      return { status: "matched", candidates: [{ id: job.catalog[0]?.id, confidence: 1 }] };
    },
  };
  return { executor, counts };
}

/** An executor that ignores the stop and answers a *valid* result 200 ms after it. */
function stubborn() {
  const counts = { entered: 0, lateAnswers: 0 };
  const executor: Executor = {
    name: "stubborn",
    async execute(job: ExecutorJob) {
      counts.entered += 1;
      await new Promise<void>((resolve) => job.signal.addEventListener("abort", () => resolve()));
      await sleep(200);
      counts.lateAnswers += 1;
      return { status: "matched", candidates: [{ id: job.catalog[0]?.id, confidence: 1 }] };
    },
  };
  return { executor, counts };
}

/** Wait (bounded) until `ready()`. */
async function until(ready: () => boolean, boundMs = 30_000): Promise<void> {
  const end = performance.now() + boundMs;
  while (!ready() && performance.now() < end) await sleep(10);
}

interface CloseStorm {
  outcomes: unknown[];
  /** close() -> the last match ended, in milliseconds. */
  closeToLastMs: number;
}

/** `matches` concurrent matches; close() once every one is inside the executor. */
async function closeStorm(
  graph: CapabilityGraph,
  matches: number,
  entered: () => number,
): Promise<CloseStorm> {
  let lastEnd = 0;
  const running = Array.from({ length: matches }, () =>
    outcomeOf(graph.match({ request: "x", timeoutMs: 600_000 })).finally(() => {
      lastEnd = performance.now();
    }),
  );
  await until(() => entered() >= matches);
  assert.equal(entered(), matches, "not every match reached the executor");
  const closing = performance.now();
  await graph.close();
  const outcomes = await Promise.all(running);
  return { outcomes, closeToLastMs: lastEnd - closing };
}

/** After close, every operation and reload is exactly CG_GRAPH_CLOSED ([CG-LIFE-8]). */
async function assertEverythingClosed(graph: CapabilityGraph): Promise<void> {
  for (const tool of TOOLS)
    assert.deepEqual(await outcomeOf(graph.call(tool, VALID_REQUESTS[tool])), CLOSED, tool);
  assert.deepEqual(await outcomeOf(graph.reload()), CLOSED);
  await graph.close(); // idempotent, never throws
}

describe("close storm ([CG-LIFE-8], [CG-LIFE-9], [CG-MODEL-4])", () => {
  test("close rejects every active match promptly with CG_GRAPH_CLOSED", async () => {
    const matches = scaled(200);
    const { executor, counts } = sleeper();
    const graph = await CapabilityGraph.open(CONFIG, { executor });
    const storm = await closeStorm(graph, matches, () => counts.entered);
    assert.deepEqual(storm.outcomes, Array(matches).fill(CLOSED));
    assert.ok(storm.closeToLastMs < CLOSE_BOUND_MS, `${storm.closeToLastMs} ms`);
    assert.equal(counts.finished, 0);
    await assertEverythingClosed(graph);
  });

  test("close never delivers the late answer of an executor that ignores the stop", async () => {
    const matches = scaled(30);
    const { executor, counts } = stubborn();
    const graph = await CapabilityGraph.open(CONFIG, { executor });
    const storm = await closeStorm(graph, matches, () => counts.entered);
    assert.equal(counts.lateAnswers, matches); // each did answer, after the close...
    assert.deepEqual(storm.outcomes, Array(matches).fill(CLOSED)); // ...and each caller got closed
    assert.ok(storm.closeToLastMs < CLOSE_BOUND_MS, `${storm.closeToLastMs} ms`);
    await assertEverythingClosed(graph);
  });

  test("close kills every codex process tree, even one ignoring SIGTERM, and leaves no process", async () => {
    const matches = scaled(6);
    // Each `codex exec` ignores TERM, starts a child (which inherits that), records both pids,
    // sleeps, and would then answer and mark itself done.
    const fake = fakeCodex({
      exec: `trap '' TERM
mkdir -p "$here/pids" "$here/done"
sleep 120 &
echo "$$ $!" > "$here/pids/$$"
sleep 60
printf '%s' '{"status":"unknown","candidates":[]}' > "$answer"
: > "$here/done/$$"`,
    });
    const listed = (name: string) => {
      try {
        return readdirSync(join(fake.folder, name));
      } catch {
        return [];
      }
    };
    const saved = process.env.PATH;
    process.env.PATH = fake.searchPath;
    try {
      const graph = await CapabilityGraph.open({
        ...CONFIG,
        model: { executor: "codex", timeoutMs: 600_000 },
      });
      const storm = await closeStorm(graph, matches, () => listed("pids").length);
      assert.deepEqual(storm.outcomes, Array(matches).fill(CLOSED));
      assert.ok(storm.closeToLastMs < CODEX_CLOSE_BOUND_MS, `${storm.closeToLastMs} ms`);
      const pids = listed("pids").flatMap((name) =>
        readFileSync(join(fake.folder, "pids", name), "utf8")
          .trim()
          .split(" ")
          .map(Number),
      );
      assert.equal(pids.length, 2 * matches); // each exec and the child it started
      assert.deepEqual(pids.filter(isRunning), []); // gone by the time the rejections arrived
      assert.deepEqual(descendants(), []);
      assert.deepEqual(listed("done"), []); // no run completed: no late answer existed
      await assertEverythingClosed(graph);
    } finally {
      process.env.PATH = saved;
    }
  });
});

/** Whether `pid` is a live process (a zombie, dead but not yet reaped, is not). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** The live processes descended from this one (Linux /proc). */
function descendants(): number[] {
  const parents = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] !== "Z") parents.set(Number(name), Number(fields[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  for (const pid of parents.keys()) {
    for (
      let parent = parents.get(pid);
      parent !== undefined && parent > 1;
      parent = parents.get(parent)
    ) {
      if (parent === process.pid) {
        found.push(pid);
        break;
      }
    }
  }
  return found;
}
