import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { GraphError } from "../src/core/errors.js";
import type { Executor, ExecutorJob } from "../src/core/executors/protocol.js";
import { CapabilityGraph, parseRequestText } from "../src/core/graph.js";

const ACME = {
  providerId: "acme",
  name: "Acme",
  version: "1",
  capabilities: [
    {
      id: "route.validation",
      name: "Request validation",
      description: "Validate input.",
      tags: ["http"],
    },
  ],
};

async function errorOf(action: () => Promise<unknown>): Promise<unknown> {
  try {
    await action();
  } catch (error) {
    assert.ok(error instanceof GraphError, `not a GraphError: ${String(error)}`);
    return error.toJSON();
  }
  assert.fail("no error");
}

/** An executor that runs until it is stopped, and records what happened to it. */
function blockingExecutor(name?: string) {
  const events: string[] = [];
  const executor: Executor = {
    ...(name === undefined ? {} : { name }),
    execute(job: ExecutorJob) {
      events.push("started");
      return new Promise((_resolve, reject) => {
        job.signal.addEventListener("abort", () => {
          // The stop takes a little while; the pipeline must wait for it.
          setTimeout(() => {
            events.push("stopped");
            reject(new Error("stopped"));
          }, 30);
        });
      });
    },
    async close() {
      events.push("closed");
    },
  };
  return { executor, events };
}

test("a match running when the graph closes ends with CG_GRAPH_CLOSED after its executor stopped", async () => {
  const { executor, events } = blockingExecutor();
  const graph = await CapabilityGraph.open({ providers: [{ definition: ACME }] }, { executor });
  const running = errorOf(() => graph.match({ request: "validate" }));
  await new Promise((resolve) => setTimeout(resolve, 20));
  await graph.close();
  assert.deepEqual(await running, {
    code: "CG_GRAPH_CLOSED",
    phase: "lifecycle",
    message: "Graph is closed",
  });
  assert.deepEqual(events, ["started", "stopped", "closed"]);
});

test("a cancelled match is CG_MODEL_CANCELLED, reported once the executor has stopped", async () => {
  const { executor, events } = blockingExecutor();
  const graph = await CapabilityGraph.open({ providers: [{ definition: ACME }] }, { executor });
  const cancel = new AbortController();
  const running = errorOf(async () => {
    try {
      return await graph.match({ request: "validate" }, { signal: cancel.signal });
    } finally {
      events.push("reported");
    }
  });
  await new Promise((resolve) => setTimeout(resolve, 20));
  cancel.abort();
  assert.deepEqual(await running, {
    code: "CG_MODEL_CANCELLED",
    phase: "match",
    message: "Match was cancelled",
    nextAction: "retry",
  });
  assert.deepEqual(events, ["started", "stopped", "reported"]);
  await graph.close();
});

test("a signal already aborted never reaches the executor", async () => {
  const { executor, events } = blockingExecutor();
  const graph = await CapabilityGraph.open({ providers: [{ definition: ACME }] }, { executor });
  const error = await errorOf(() =>
    graph.match({ request: "validate" }, { signal: AbortSignal.abort() }),
  );
  assert.equal((error as { code: string }).code, "CG_MODEL_CANCELLED");
  assert.deepEqual(events, []);
  await graph.close();
});

test("an SDK executor is described by its name, or as custom when the name is not an executor name", async () => {
  for (const [name, expected] of [
    ["my-ranker", "my-ranker"],
    ["not a name!", "custom"],
    ["MyRanker", "custom"],
    [undefined, "custom"],
  ] as const) {
    const { executor } = blockingExecutor(name);
    const graph = await CapabilityGraph.open({ providers: [] }, { executor });
    assert.deepEqual((await graph.describe()).model, { configured: true, executor: expected });
    await graph.close();
  }
});

test("an executor error keeps a model code with the default action when its action is not allowed", async () => {
  const executor: Executor = {
    async execute() {
      throw Object.assign(new Error("SECRET upstream text"), {
        code: "CG_MODEL_REFUSED",
        nextAction: "retry",
      });
    },
  };
  const graph = await CapabilityGraph.open({ providers: [{ definition: ACME }] }, { executor });
  assert.deepEqual(await errorOf(() => graph.match({ request: "validate" })), {
    code: "CG_MODEL_REFUSED",
    phase: "match",
    message: "Model refused the request",
    nextAction: "fix_input",
  });
  await graph.close();
});

test("a request text with a duplicate member name is refused at the object's pointer", async () => {
  const graph = await CapabilityGraph.open({ providers: [{ definition: ACME }] });
  assert.deepEqual(
    await errorOf(() => graph.call("list_capabilities", '{"tags": [{"a": 1, "a": 2}]}')),
    {
      code: "CG_INPUT_INVALID",
      phase: "query",
      message: "/tags/0 an object has a duplicate key",
      nextAction: "fix_input",
    },
  );
  await graph.close();
});

test("an integer literal beyond 2^53 in a request text is refused although it rounds into range", async () => {
  const graph = await CapabilityGraph.open({ providers: [{ definition: ACME }] });
  assert.deepEqual(
    await errorOf(() => graph.call("list_capabilities", '{"limit": 9007199254740993}')),
    {
      code: "CG_INPUT_INVALID",
      phase: "query",
      message: "/limit integers must stay within +/-2^53",
      nextAction: "fix_input",
    },
  );
  assert.deepEqual(await errorOf(() => graph.call("list_capabilities", '{"limit": 1e300}')), {
    code: "CG_INPUT_INVALID",
    phase: "query",
    message: "/limit must be at most 500",
    nextAction: "fix_input",
  });
  await graph.close();
});

test("changing the host's inline definition after open does not change the graph", async () => {
  const definition = structuredClone(ACME);
  const graph = await CapabilityGraph.open({ providers: [{ definition }] });
  const before = await graph.describe();
  definition.capabilities.length = 0;
  definition.name = "Changed";
  assert.deepEqual(await graph.describe(), before);
  await graph.close();
});

test("the revision of a definition is r: and 16 hex digits of SHA-256 over its canonical JSON", async () => {
  const graph = await CapabilityGraph.open({
    providers: [{ definition: { version: "1", providerId: "a", capabilities: [], name: "A" } }],
  });
  // SHA-256 of {"capabilities":[],"name":"A","providerId":"a","version":"1"}.
  const { createHash } = await import("node:crypto");
  const expected = `r:${createHash("sha256").update('{"capabilities":[],"name":"A","providerId":"a","version":"1"}').digest("hex").slice(0, 16)}`;
  const described = await graph.describe();
  assert.equal(described.providers[0]?.revision, expected);
  const graphRevision = `r:${createHash("sha256").update(`{"a":"${expected}"}`).digest("hex").slice(0, 16)}`;
  assert.equal(described.revision, graphRevision);
  await graph.close();
});

test("a language value JSON cannot carry is refused as input", async () => {
  const graph = await CapabilityGraph.open({ providers: [{ definition: ACME }] });
  const error = await errorOf(() => graph.call("list_capabilities", { tags: [new Date(0)] }));
  assert.equal((error as { code: string }).code, "CG_INPUT_INVALID");
  await graph.close();
});

test("parseRequestText tells a usage fault from a request fault", () => {
  assert.deepEqual(parseRequestText("list_capabilities", "{not json"), {
    kind: "not-json",
    reason: "syntax",
  });
  assert.deepEqual(parseRequestText("list_capabilities", Buffer.from([0xff])), {
    kind: "not-json",
    reason: "utf8",
  });
  assert.throws(
    () => parseRequestText("match_capabilities", '{"request": "x", "request": "y"}'),
    (error: unknown) =>
      error instanceof GraphError &&
      JSON.stringify(error.toJSON()) ===
        '{"code":"CG_INPUT_INVALID","phase":"match","message":"/ an object has a duplicate key","nextAction":"fix_input"}',
  );
  assert.throws(
    () => parseRequestText("no_such_tool", `[${"1".repeat(401)}]`),
    (error: unknown) =>
      error instanceof GraphError &&
      error.phase === "query" &&
      error.message === "/0 integers must stay within +/-2^53",
  );
});

test("reload refuses a providers value that is not an array as not a non-empty array", async () => {
  const graph = await CapabilityGraph.open({ providers: [{ definition: ACME }] });
  try {
    assert.deepEqual(await errorOf(() => graph.reload({ providers: "acme" } as never)), {
      code: "CG_CONFIG_INVALID",
      phase: "config",
      message: "/providers must be a non-empty array",
      nextAction: "check_config",
    });
  } finally {
    await graph.close();
  }
});

test("reload refuses a malformed id or a non-string item as a provider that is not loaded", async () => {
  const graph = await CapabilityGraph.open({ providers: [{ definition: ACME }] });
  try {
    for (const providers of [["Bad"], ["acme", 7]]) {
      assert.deepEqual(await errorOf(() => graph.reload({ providers } as never)), {
        code: "CG_CONFIG_INVALID",
        phase: "config",
        message: `/providers/${providers.length - 1} names a provider that is not loaded`,
        nextAction: "check_config",
      });
    }
  } finally {
    await graph.close();
  }
});

test("an inline definition with an integer beyond 2^53 is refused before its schema", async () => {
  const definition = { ...ACME, version: 2 ** 60 };
  assert.deepEqual(await errorOf(() => CapabilityGraph.open({ providers: [{ definition }] })), {
    code: "CG_DEFINITION_INVALID",
    phase: "load",
    message: "/version integers must stay within +/-2^53",
    nextAction: "check_config",
  });
});

test("a definition file with an integer literal beyond 2^53 or over 400 digits is refused with the range message", async () => {
  const folder = mkdtempSync(join(tmpdir(), "cg-integers-"));
  try {
    for (const literal of ["9007199254740993", "1".repeat(401)]) {
      const text = JSON.stringify(ACME).replace('"version":"1"', `"version":${literal}`);
      writeFileSync(join(folder, "acme.json"), text);
      writeFileSync(join(folder, "capability-graph.json"), '{"providers":[{"path":"acme.json"}]}');
      assert.deepEqual(
        await errorOf(() => CapabilityGraph.open(join(folder, "capability-graph.json"))),
        {
          code: "CG_DEFINITION_INVALID",
          phase: "load",
          message: "/version integers must stay within +/-2^53",
          nextAction: "check_config",
        },
      );
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

test("an inline definition in a configuration file is judged on its literals: 1e300 is a number", async () => {
  const folder = mkdtempSync(join(tmpdir(), "cg-integers-"));
  try {
    const text = JSON.stringify({ providers: [{ definition: ACME }] }).replace(
      '"version":"1"',
      '"version":1e300',
    );
    writeFileSync(join(folder, "capability-graph.json"), text);
    const error = (await errorOf(() =>
      CapabilityGraph.open(join(folder, "capability-graph.json")),
    )) as { message: string };
    assert.notEqual(error.message, "/version integers must stay within +/-2^53");
    const overLong = JSON.stringify({ providers: [{ definition: ACME }] }).replace(
      '"version":"1"',
      '"version":9007199254740993',
    );
    writeFileSync(join(folder, "capability-graph.json"), overLong);
    assert.deepEqual(
      await errorOf(() => CapabilityGraph.open(join(folder, "capability-graph.json"))),
      {
        code: "CG_DEFINITION_INVALID",
        phase: "load",
        message: "/version integers must stay within +/-2^53",
        nextAction: "check_config",
      },
    );
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

test("a url document's media type comes from the URL path only: no path is text/plain", async () => {
  const documents = [
    { id: "host", title: "Host", url: "https://guide.md" },
    { id: "path", title: "Path", url: "https://example.org/guide.md" },
  ];
  const definition = { ...ACME, capabilities: [{ ...ACME.capabilities[0], documents }] };
  const graph = await CapabilityGraph.open({ providers: [{ definition }] });
  try {
    const result = await graph.resolve({ ids: ["acme::route.validation"] });
    assert.deepEqual(
      result.capabilities[0]?.documents.map((document) => [document.id, document.mediaType]),
      [
        ["host", "text/plain"],
        ["path", "text/markdown"],
      ],
    );
  } finally {
    await graph.close();
  }
});

test("Symbol.asyncDispose closes the graph, as close() does (await using)", async () => {
  const graph = await CapabilityGraph.open({ providers: [{ definition: ACME }] });
  await graph[Symbol.asyncDispose]();
  const error = await errorOf(() => graph.describe());
  assert.equal((error as { code: string }).code, "CG_GRAPH_CLOSED");
  await graph[Symbol.asyncDispose](); // idempotent, as close() is
});

test("match takes the request text alone, never as JSON text", async () => {
  const graph = await CapabilityGraph.open({
    providers: [{ definition: ACME }],
    model: { executor: "lexical" },
  });
  try {
    const byText = await graph.match("validate input tomorrow");
    const byObject = await graph.match({ request: "validate input tomorrow" });
    assert.deepEqual(byText, byObject);
    assert.equal(byText.status, "matched");
    const jsonLooking = '{"request": "validate"}';
    assert.deepEqual(await graph.match(jsonLooking), await graph.match({ request: jsonLooking }));
  } finally {
    await graph.close();
  }
});

test("closed is false while open and true once close() was called", async () => {
  const graph = await CapabilityGraph.open({ providers: [{ definition: ACME }] });
  assert.equal(graph.closed, false);
  const closing = graph.close();
  assert.equal(graph.closed, true);
  await closing;
});
