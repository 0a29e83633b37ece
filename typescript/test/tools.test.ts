import assert from "node:assert/strict";
import { test } from "node:test";
import { CapabilityGraph } from "../src/core/graph.js";
import {
  anthropicTools,
  openAIChatTools,
  openAIResponsesTools,
  ToolAdapter,
  toolDefinitions,
} from "../src/surfaces/tools.js";
import { contractTools, graphFolder } from "./surface-fixtures.js";

test("the tool definitions equal the entries of tools.json, in order, every member included", () => {
  assert.deepEqual(toolDefinitions(), contractTools());
});

test("every read of the tool definitions is a fresh copy", () => {
  const first = toolDefinitions();
  (first[0] as { inputSchema: Record<string, unknown> }).inputSchema.type = "changed";
  assert.deepEqual(toolDefinitions(), contractTools());
});

test("the OpenAI Chat Completions export wraps name, description and the input schema as parameters", () => {
  assert.deepEqual(
    openAIChatTools(),
    contractTools().map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
    })),
  );
});

test("the OpenAI Responses export is flat and states strict false", () => {
  assert.deepEqual(
    openAIResponsesTools(),
    contractTools().map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: tool.inputSchema,
      strict: false,
    })),
  );
});

test("the Anthropic export carries the input schema as input_schema", () => {
  assert.deepEqual(
    anthropicTools(),
    contractTools().map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.inputSchema,
    })),
  );
});

test("call returns exactly ok and result on success", async () => {
  const graph = await CapabilityGraph.open(graphFolder());
  try {
    const outcome = await new ToolAdapter(graph).call("list_capabilities", { limit: 1 });
    assert.deepEqual(Object.keys(outcome), ["ok", "result"]);
    assert.equal(outcome.ok, true);
  } finally {
    await graph.close();
  }
});

test("call projects a GraphError to exactly ok false and the error object", async () => {
  const graph = await CapabilityGraph.open(graphFolder());
  try {
    const outcome = await new ToolAdapter(graph).call("resolve_capabilities", {
      ids: ["acme::missing"],
    });
    assert.deepEqual(outcome, {
      ok: false,
      error: {
        code: "CG_CAPABILITY_NOT_FOUND",
        phase: "query",
        message: "Requested capability does not exist",
        nextAction: "refresh",
      },
    });
  } finally {
    await graph.close();
  }
});

test("an unknown tool name is an envelope with Unknown tool, never a raised GraphError", async () => {
  const graph = await CapabilityGraph.open(graphFolder());
  try {
    const outcome = await new ToolAdapter(graph).call("no_such_tool", {});
    assert.deepEqual(outcome, {
      ok: false,
      error: {
        code: "CG_INPUT_INVALID",
        phase: "query",
        message: "Unknown tool",
        nextAction: "fix_input",
      },
    });
  } finally {
    await graph.close();
  }
});
