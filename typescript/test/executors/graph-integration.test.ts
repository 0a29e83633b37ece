// The openai and codex executors inside a real graph: configured by the model section, run by the
// match pipeline, their failures projected to the caller's error objects (executors.md sections
// 2-4, 9, 10). The loopback server and the fake codex program are real; so is the graph.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { processIsRunning } from "../../src/core/executors/process-tree.js";
import { CapabilityGraph } from "../../src/core/graph.js";
import { fakeCodex, hangWithGrandchild } from "./fake-codex.js";
import { answerJson, completion, type LoopbackServer, loopbackServer } from "./helpers.js";

const KEY = "sk-graph-SECRET-987654321";
const KEY_ENV = "CG_GRAPH_TEST_OPENAI_KEY";
process.env[KEY_ENV] = KEY;

const PROVIDER = {
  definition: {
    providerId: "billing",
    name: "Billing",
    version: "1",
    capabilities: [
      {
        id: "invoice.create",
        name: "Create invoice",
        description: "Create and send an invoice to a customer.",
      },
    ],
  },
};

const servers: LoopbackServer[] = [];
after(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

async function openaiGraph(answer: (response: import("node:http").ServerResponse) => void) {
  const server = await loopbackServer((_request, response) => answer(response));
  servers.push(server);
  const graph = await CapabilityGraph.open({
    providers: [PROVIDER],
    model: { executor: "openai", baseUrl: server.baseUrl, model: "test-model", apiKeyEnv: KEY_ENV },
  });
  return { graph, server };
}

/** The error object the match raised, checked to carry no trace of the key. */
async function matchError(
  graph: CapabilityGraph,
  request: Record<string, unknown>,
  signal?: AbortSignal,
) {
  try {
    await graph.match(
      { request: "create an invoice", ...request } as never,
      signal === undefined ? {} : { signal },
    );
  } catch (error) {
    const object = (error as { toJSON(): Record<string, unknown> }).toJSON();
    assert.ok(!JSON.stringify(object).includes(KEY));
    assert.ok(!String((error as Error).stack).includes(KEY));
    return object;
  }
  assert.fail("the match succeeded");
}

describe("openai executor in a graph", () => {
  test("a valid answer becomes the match result", async () => {
    const content = {
      status: "matched",
      candidates: [{ id: "billing::invoice.create", confidence: 0.9, reason: "" }],
    };
    const { graph } = await openaiGraph((response) =>
      answerJson(response, 200, completion({ content: JSON.stringify(content) })),
    );
    const result = await graph.match({ request: "create an invoice" } as never);
    assert.equal(result.executor, "openai");
    assert.equal(result.status, "matched");
    assert.deepEqual(result.candidates, [{ id: "billing::invoice.create", confidence: 0.9 }]);
    await graph.close();
  });

  test("an invented id is CG_MODEL_INVALID_SELECTION", async () => {
    const content = {
      status: "matched",
      candidates: [{ id: "billing::invoice.forge", confidence: 0.9, reason: "x" }],
    };
    const { graph } = await openaiGraph((response) =>
      answerJson(response, 200, completion({ content: JSON.stringify(content) })),
    );
    assert.deepEqual(await matchError(graph, {}), {
      code: "CG_MODEL_INVALID_SELECTION",
      phase: "match",
      message: "Model selected an id outside the authorized catalog",
      nextAction: "refresh",
    });
    await graph.close();
  });

  test("a refusal is CG_MODEL_REFUSED, never no_match", async () => {
    const { graph } = await openaiGraph((response) =>
      answerJson(response, 200, completion({ content: null, refusal: "no" })),
    );
    assert.deepEqual(await matchError(graph, {}), {
      code: "CG_MODEL_REFUSED",
      phase: "match",
      message: "Model refused the request",
      nextAction: "fix_input",
    });
    await graph.close();
  });

  test("a rejected key is CG_MODEL_UNAVAILABLE with check_config and the registry message", async () => {
    const { graph } = await openaiGraph((response) =>
      answerJson(
        response,
        401,
        JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } }),
      ),
    );
    assert.deepEqual(await matchError(graph, {}), {
      code: "CG_MODEL_UNAVAILABLE",
      phase: "match",
      message: "Model executor is unavailable",
      nextAction: "check_config",
    });
    await graph.close();
  });

  test("a server slower than the request's timeoutMs is CG_MODEL_TIMEOUT and the connection is closed", async () => {
    const { graph, server } = await openaiGraph(() => undefined);
    assert.deepEqual(await matchError(graph, { timeoutMs: 200 }), {
      code: "CG_MODEL_TIMEOUT",
      phase: "match",
      message: "Model executor timed out",
      nextAction: "retry",
    });
    await server.clientWentAway;
    await graph.close();
  });

  test("cancelling a running match is CG_MODEL_CANCELLED and the connection is closed", async () => {
    const controller = new AbortController();
    const server = await loopbackServer(() => controller.abort());
    servers.push(server);
    const graph = await CapabilityGraph.open({
      providers: [PROVIDER],
      model: { executor: "openai", baseUrl: server.baseUrl, model: "m", apiKeyEnv: KEY_ENV },
    });
    assert.deepEqual(await matchError(graph, {}, controller.signal), {
      code: "CG_MODEL_CANCELLED",
      phase: "match",
      message: "Match was cancelled",
      nextAction: "retry",
    });
    await server.clientWentAway;
    await graph.close();
  });
});

describe("codex executor in a graph", () => {
  test("cancelling a running match kills the whole tree before the error arrives", async () => {
    const fake = fakeCodex({ exec: hangWithGrandchild(false) });
    const savedPath = process.env.PATH;
    process.env.PATH = fake.searchPath;
    try {
      const graph = await CapabilityGraph.open({
        providers: [PROVIDER],
        model: { executor: "codex" },
      });
      const controller = new AbortController();
      const running = matchError(graph, {}, controller.signal);
      for (
        let attempt = 0;
        attempt < 1000 && fake.recorded("grandchild.pid") === undefined;
        attempt += 1
      ) {
        await new Promise((wake) => setTimeout(wake, 10));
      }
      controller.abort();
      assert.deepEqual(await running, {
        code: "CG_MODEL_CANCELLED",
        phase: "match",
        message: "Match was cancelled",
        nextAction: "retry",
      });
      assert.equal(processIsRunning(Number(fake.recorded("grandchild.pid"))), false);
      await graph.close();
    } finally {
      process.env.PATH = savedPath;
    }
  });

  test("closing the graph during a match is CG_GRAPH_CLOSED and the tree is dead", async () => {
    const fake = fakeCodex({ exec: hangWithGrandchild(true) });
    const savedPath = process.env.PATH;
    process.env.PATH = fake.searchPath;
    try {
      const graph = await CapabilityGraph.open({
        providers: [PROVIDER],
        model: { executor: "codex" },
      });
      const running = matchError(graph, {});
      for (
        let attempt = 0;
        attempt < 1000 && fake.recorded("grandchild.pid") === undefined;
        attempt += 1
      ) {
        await new Promise((wake) => setTimeout(wake, 10));
      }
      await graph.close();
      assert.deepEqual(await running, {
        code: "CG_GRAPH_CLOSED",
        phase: "lifecycle",
        message: "Graph is closed",
      });
      assert.equal(processIsRunning(Number(fake.recorded("grandchild.pid"))), false);
    } finally {
      process.env.PATH = savedPath;
    }
  });

  test("an old codex is CG_MODEL_EXECUTOR_UNSAFE through the graph", async () => {
    const fake = fakeCodex({ version: "0.40.0" });
    const savedPath = process.env.PATH;
    process.env.PATH = fake.searchPath;
    try {
      const graph = await CapabilityGraph.open({
        providers: [PROVIDER],
        model: { executor: "codex" },
      });
      assert.deepEqual(await matchError(graph, {}), {
        code: "CG_MODEL_EXECUTOR_UNSAFE",
        phase: "match",
        message: "Model executor isolation prerequisites are not met",
        nextAction: "check_config",
      });
      await graph.close();
    } finally {
      process.env.PATH = savedPath;
    }
  });
});
