// The Tool Adapter's exports in the official SDKs, as their documentation shows them: this file
// is compiled with `strict` against the `openai` and `@anthropic-ai/sdk` declarations, so
// `tools: adapter.openAIChatTools()` and its two siblings must need no cast; then each SDK sends
// its request through a fetch of the test's own, which records the `tools` the SDK serialized
// and answers with one call of list_capabilities, run through the adapter.
import assert from "node:assert/strict";
import { test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { CapabilityGraph } from "../src/core/graph.js";
import { ToolAdapter } from "../src/surfaces/tools.js";

const CONFIG = {
  providers: [
    {
      definition: {
        providerId: "acme",
        name: "Acme",
        version: "1",
        capabilities: [{ id: "a", name: "Validate input", description: "Validate a body." }],
      },
    },
  ],
};

const CHAT_ANSWER = {
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 0,
  model: "m",
  choices: [
    {
      index: 0,
      finish_reason: "tool_calls",
      message: {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call-1",
            type: "function",
            function: { name: "list_capabilities", arguments: '{"limit": 1}' },
          },
        ],
      },
    },
  ],
};
const RESPONSES_ANSWER = {
  id: "resp-1",
  object: "response",
  created_at: 0,
  model: "m",
  status: "completed",
  parallel_tool_calls: true,
  tool_choice: "auto",
  tools: [],
  output: [
    {
      type: "function_call",
      id: "fc-1",
      call_id: "call-1",
      name: "list_capabilities",
      arguments: '{"limit": 1}',
      status: "completed",
    },
  ],
};
const MESSAGES_ANSWER = {
  id: "msg-1",
  type: "message",
  role: "assistant",
  model: "m",
  content: [{ type: "tool_use", id: "tu-1", name: "list_capabilities", input: { limit: 1 } }],
  stop_reason: "tool_use",
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 },
};

/** A fetch that records each request's `tools` in `sent` and answers `answer`. */
function recordingFetch(answer: object, sent: unknown[]): typeof fetch {
  return async (_input, init) => {
    sent.push(JSON.parse(String(init?.body)).tools);
    return new Response(JSON.stringify(answer), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  };
}

async function withAdapter(use: (adapter: ToolAdapter) => Promise<void>): Promise<void> {
  const graph = await CapabilityGraph.open(CONFIG);
  try {
    await use(new ToolAdapter(graph));
  } finally {
    await graph.close();
  }
}

test("openai chat.completions sends openAIChatTools() as exported; the call runs", async () => {
  await withAdapter(async (adapter) => {
    const sent: unknown[] = [];
    const client = new OpenAI({ apiKey: "k", fetch: recordingFetch(CHAT_ANSWER, sent) });
    const tools = adapter.openAIChatTools();
    const completion = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "what can you do?" }],
      tools,
    });
    assert.deepEqual(sent, [tools]);
    const calls = completion.choices[0]?.message.tool_calls ?? [];
    assert.equal(calls.length, 1);
    for (const call of calls) {
      if (call.type !== "function") assert.fail(`unexpected ${call.type} call`);
      const outcome = await adapter.call(call.function.name, call.function.arguments);
      assert.equal(outcome.ok, true);
    }
  });
});

test("openai responses sends openAIResponsesTools() as exported; the call runs", async () => {
  await withAdapter(async (adapter) => {
    const sent: unknown[] = [];
    const client = new OpenAI({ apiKey: "k", fetch: recordingFetch(RESPONSES_ANSWER, sent) });
    const tools = adapter.openAIResponsesTools();
    const response = await client.responses.create({
      model: "m",
      input: "what can you do?",
      tools,
    });
    assert.deepEqual(sent, [tools]);
    const calls = response.output.filter((item) => item.type === "function_call");
    assert.equal(calls.length, 1);
    for (const call of calls) {
      const outcome = await adapter.call(call.name, call.arguments);
      assert.equal(outcome.ok, true);
    }
  });
});

test("anthropic messages sends anthropicTools() as exported; the tool_use runs", async () => {
  await withAdapter(async (adapter) => {
    const sent: unknown[] = [];
    const client = new Anthropic({ apiKey: "k", fetch: recordingFetch(MESSAGES_ANSWER, sent) });
    const tools = adapter.anthropicTools();
    const message = await client.messages.create({
      model: "m",
      max_tokens: 64,
      messages: [{ role: "user", content: "what can you do?" }],
      tools,
    });
    assert.deepEqual(sent, [tools]);
    const uses = message.content.filter((block) => block.type === "tool_use");
    assert.equal(uses.length, 1);
    for (const block of uses) {
      const outcome = await adapter.call(block.name, block.input);
      assert.equal(outcome.ok, true);
    }
  });
});
