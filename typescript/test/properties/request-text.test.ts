// Properties of the request text (fast-check): `call` given a string reads it as the request's
// JSON text, once ([CG-CONV-17]), so the text of a value and the value are the same request on
// every input — the same result or the same error object.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { CapabilityGraph, GraphError } from "../../src/index.js";
import { scaled } from "../scale.js";

const DEFINITION = {
  providerId: "acme",
  name: "Acme",
  version: "1",
  capabilities: ["a", "b", "c"].map((id) => ({
    id,
    name: id.toUpperCase(),
    description: `Capability ${id}.`,
    tags: [id === "a" ? "x" : "y"],
  })),
};

async function outcome(graph: CapabilityGraph, tool: string, args: unknown): Promise<unknown> {
  try {
    return { result: await graph.call(tool, args) };
  } catch (error) {
    if (error instanceof GraphError) return { error: error.toJSON() };
    throw error;
  }
}

/**
 * Requests near the schemas: the members of the tools' requests with any JSON value, or any JSON
 * value but a string (a string given to `call` is itself a text, not a value).
 */
const member = fc.constantFrom("ids", "providers", "tags", "limit", "cursor", "relations", "x");
const request = fc.oneof(
  fc.dictionary(member, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 }),
  fc.jsonValue({ maxDepth: 4 }).filter((value) => typeof value !== "string"),
);

test("a request's JSON text and the request itself are the same request (CG-CONV-17)", async () => {
  const graph = await CapabilityGraph.open({ providers: [{ definition: DEFINITION }] });
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("list_capabilities", "resolve_capabilities", "describe_graph"),
        request,
        async (tool, value) => {
          const text = JSON.stringify(value);
          assert.deepEqual(await outcome(graph, tool, text), await outcome(graph, tool, value));
        },
      ),
      { numRuns: scaled(300), seed: 20261202 },
    );
  } finally {
    await graph.close();
  }
});

test("a text holding a JSON string is a request that is not an object, never read again", async () => {
  const graph = await CapabilityGraph.open({ providers: [{ definition: DEFINITION }] });
  try {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 2 }), async (value) => {
        const twice = JSON.stringify(JSON.stringify(value));
        assert.deepEqual(await outcome(graph, "describe_graph", twice), {
          error: {
            code: "CG_INPUT_INVALID",
            phase: "query",
            message: "/ must be an object",
            nextAction: "fix_input",
          },
        });
      }),
      { numRuns: scaled(100), seed: 20261202 },
    );
  } finally {
    await graph.close();
  }
});
