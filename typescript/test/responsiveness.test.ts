// The event loop keeps serving while each executor works ([CG-MODEL-3], [CG-MODEL-4],
// [CG-MODEL-12]).
//
// A ticker (a setTimeout chain) runs on the graph's event loop while a match keeps its executor
// busy past the deadline: a scripted sleep, a cold lexical index of 999 capabilities with texts
// at the schema's maximum length, an OpenAI-compatible loopback server holding its answer, a
// fake `codex` on PATH that sleeps with a child process. Asserted: the request's deadline ends
// the match with exactly CG_MODEL_TIMEOUT/match/retry, and the ticker ran again and again
// *during* the match (a loop kept busy by the executor serves no tick, and its deadline timer
// cannot fire either). Latencies depend on the machine's load and are not asserted.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { ModelConfig } from "../src/_generated/types/config.js";
import { CapabilityGraph, type HostConfig } from "../src/index.js";
import { fakeCodex, hangWithGrandchild } from "./executors/fake-codex.js";
import { type LoopbackServer, loopbackServer } from "./executors/helpers.js";
import {
  expected,
  longCatalogDefinition,
  outcomeOf,
  type Ticks,
  withTicker,
} from "./reliability.js";
import { scaled } from "./scale.js";

const TIMEOUT = expected("CG_MODEL_TIMEOUT", "match");
/** Ticks the loop must have served during a 300 ms match: a blocked loop serves none. */
const MIN_TICKS = 3;
const KEY_ENV = "CG_TICKER_OPENAI_KEY";

/** A small inline provider with `count` capabilities and the given model section. */
function tickerConfig(count: number, model: ModelConfig): HostConfig {
  const capabilities = Array.from({ length: count }, (_, n) => ({
    id: `c${n}`,
    name: `C${n}`,
    description: `Does c${n}.`,
  }));
  return {
    providers: [{ definition: { providerId: "p", name: "P", version: "1", capabilities } }],
    model,
  };
}

/** The lexical executor over 999 capabilities whose texts are at the schema's maximum length. */
function coldLexicalConfig(): HostConfig {
  return {
    providers: [{ definition: longCatalogDefinition(999, 8192) }],
    model: { executor: "lexical" },
    budgets: { maxCatalogEntries: 999, maxCapabilities: 100_000 },
  };
}

/** Open `config`, run `matches` matches one after the other, each under a ticker, and close. */
async function tickThroughMatches(config: HostConfig, matches: number): Promise<Ticks[]> {
  const graph = await CapabilityGraph.open(config);
  try {
    const runs: Ticks[] = [];
    for (let number = 0; number < matches; number += 1) {
      runs.push(
        await withTicker(() =>
          graph.match({ request: "validate the request body schema", timeoutMs: 300 }),
        ),
      );
    }
    return runs;
  } finally {
    await graph.close();
  }
}

/**
 * Two matches per executor: the first includes its one-time preparation (codex's prerequisite
 * probes, the catalog's index), the second is steady state.
 */
function assertTimedOutWhileTicking(kind: string, runs: readonly Ticks[]): void {
  for (const [number, run] of runs.entries()) {
    const figures = { kind, number, ticks: run.ticks, maxStallMs: run.maxStallMs };
    // The cold lexical index is one build shared by the matches: the first match's deadline
    // ends it, a later one may find it built in time on an idle machine and answer.
    const answered = (run.outcome as { status?: unknown }).status;
    if (kind === "lexical" && number > 0 && answered !== undefined) {
      assert.equal(answered, "matched", JSON.stringify(figures));
    } else {
      assert.deepEqual(run.outcome, TIMEOUT, JSON.stringify(figures));
    }
    assert.ok(run.ticks >= MIN_TICKS, JSON.stringify(figures));
  }
}

describe("the event loop keeps serving while the executor works, and the deadline ends it", () => {
  const servers: LoopbackServer[] = [];
  after(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });

  test("scripted: a sleeping step", async () => {
    for (let round = 0; round < scaled(1); round += 1) {
      const config = tickerConfig(1, {
        executor: "scripted",
        // biome-ignore lint/suspicious/noThenProperty: the scripted step language names it so
        steps: [{ sleepMs: 600_000, then: { return: {} } }],
      });
      assertTimedOutWhileTicking("scripted", await tickThroughMatches(config, 2));
    }
  });

  test("lexical: a cold index of 999 capabilities with texts at the maximum length", async () => {
    for (let round = 0; round < scaled(1); round += 1) {
      assertTimedOutWhileTicking("lexical", await tickThroughMatches(coldLexicalConfig(), 2));
    }
  });

  test("openai: a loopback server that holds its answer", async () => {
    // The handler never answers: the response stays open until the client goes away.
    const server = await loopbackServer(() => undefined);
    servers.push(server);
    const saved = process.env[KEY_ENV];
    process.env[KEY_ENV] = "ticker-key";
    try {
      for (let round = 0; round < scaled(1); round += 1) {
        const config = tickerConfig(3, {
          executor: "openai",
          baseUrl: server.baseUrl,
          model: "m",
          apiKeyEnv: KEY_ENV,
        });
        assertTimedOutWhileTicking("openai", await tickThroughMatches(config, 2));
      }
    } finally {
      if (saved === undefined) delete process.env[KEY_ENV];
      else process.env[KEY_ENV] = saved;
    }
  });

  test("codex: a fake codex on PATH that sleeps with a child process", async () => {
    const fake = fakeCodex({ exec: hangWithGrandchild(false) });
    const saved = process.env.PATH;
    process.env.PATH = fake.searchPath;
    try {
      for (let round = 0; round < scaled(1); round += 1) {
        const config = tickerConfig(3, { executor: "codex" });
        assertTimedOutWhileTicking("codex", await tickThroughMatches(config, 2));
      }
    } finally {
      process.env.PATH = saved;
    }
  });
});

test("a cold lexical index is built across matches until one answers", async () => {
  const graph = await CapabilityGraph.open(coldLexicalConfig());
  try {
    const short = { request: "validate the request body", timeoutMs: 30 };
    // Each short deadline ends its match; the index built so far is kept for the next one.
    const timeouts = [];
    for (let attempt = 0; attempt < 3; attempt += 1)
      timeouts.push(await outcomeOf(graph.match(short)));
    assert.deepEqual(timeouts, [TIMEOUT, TIMEOUT, TIMEOUT]);
    const patient = await graph.match({ ...short, timeoutMs: 120_000 });
    assert.equal(patient.status, "matched");
  } finally {
    await graph.close();
  }
});
