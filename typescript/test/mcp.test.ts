// The MCP server over real stdio: the SDK's own Client over StdioClientTransport, and raw JSON-RPC
// lines where a request text must be sent exactly as written (a duplicate member name).
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { argumentsText } from "../src/surfaces/mcp.js";
import { CLI, contractTools, graphFolder } from "./surface-fixtures.js";

async function connect(config: string): Promise<Client> {
  const client = new Client({ name: "surface-test", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "mcp", "--config", config],
      stderr: "pipe",
    }),
  );
  return client;
}

test("argumentsText finds the raw text of params.arguments, the last of repeated members", () => {
  const line =
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"}{\\"","a":[1,{"b":2}]}}}';
  assert.equal(argumentsText(line), '{"a":"}{\\"","a":[1,{"b":2}]}');
  assert.equal(
    argumentsText('{"params":{"arguments":{"a":1}},"params":{"arguments":{"b":2}}}'),
    '{"b":2}',
  );
  assert.equal(argumentsText('{"params":{"name":"x"}}'), undefined);
});

test("the server is named capability-graph and lists the tools of tools.json", async () => {
  const client = await connect(graphFolder());
  try {
    assert.equal(client.getServerVersion()?.name, "capability-graph");
    const { tools } = await client.listTools();
    assert.deepEqual(tools, contractTools());
  } finally {
    await client.close();
  }
});

test("a successful tools/call has structuredContent and one text item holding it as JSON", async () => {
  const client = await connect(graphFolder());
  try {
    const result = await client.callTool({ name: "list_capabilities", arguments: { limit: 1 } });
    assert.equal(result.isError, undefined);
    const content = result.content as Array<{ type: string; text: string }>;
    assert.equal(content.length, 1);
    assert.deepEqual(JSON.parse(content[0]?.text ?? ""), result.structuredContent);
  } finally {
    await client.close();
  }
});

test("a tools/call without arguments is the empty request", async () => {
  const client = await connect(graphFolder());
  try {
    const result = await client.callTool({ name: "describe_graph" });
    assert.equal(result.isError, undefined);
    assert.deepEqual(
      (result.structuredContent as { providers: Array<{ providerId: string }> }).providers.map(
        (provider) => provider.providerId,
      ),
      ["acme"],
    );
  } finally {
    await client.close();
  }
});

test("a failed tools/call is isError with exactly one text item and no structuredContent", async () => {
  const client = await connect(graphFolder());
  try {
    const result = await client.callTool({
      name: "resolve_capabilities",
      arguments: { ids: ["acme::missing"] },
    });
    assert.deepEqual(result, {
      content: [
        {
          type: "text",
          text: '{"code":"CG_CAPABILITY_NOT_FOUND","phase":"query","message":"Requested capability does not exist","nextAction":"refresh"}',
        },
      ],
      isError: true,
    });
  } finally {
    await client.close();
  }
});

test("an unknown tool is the JSON-RPC error -32602, not an isError result", async () => {
  const client = await connect(graphFolder());
  try {
    await assert.rejects(
      client.callTool({ name: "no_such_tool", arguments: {} }),
      (error: unknown) => error instanceof McpError && error.code === -32602,
    );
  } finally {
    await client.close();
  }
});

test("arguments with a duplicate member name are CG_INPUT_INVALID, judged on the raw text", async () => {
  const server = spawn(process.execPath, [CLI, "mcp", "--config", graphFolder()], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let buffer = "";
  server.stdout.setEncoding("utf8");
  server.stdout.on("data", (chunk: string) => {
    buffer += chunk;
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    lines.push(...parts);
  });
  const send = (text: string) => server.stdin.write(`${text}\n`);
  send(
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
  );
  send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  send(
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_capabilities","arguments":{"limit":1,"limit":2}}}',
  );
  for (let waited = 0; lines.length < 2 && waited < 300; waited += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  server.stdin.end();
  await once(server, "exit");
  const answer = JSON.parse(lines[1] ?? "{}");
  assert.equal(answer.id, 2);
  const result = CallToolResultSchema.parse(answer.result);
  assert.equal(result.isError, true);
  assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), {
    code: "CG_INPUT_INVALID",
    phase: "query",
    message: "/ an object has a duplicate key",
    nextAction: "fix_input",
  });
});

test("a configuration that cannot be read leaves stdout empty, the envelope on stderr, exit 1", () => {
  const done = spawnSync(process.execPath, [CLI, "mcp", "--config", "/nonexistent/cg.json"], {
    encoding: "utf8",
    input: "",
  });
  assert.equal(done.status, 1);
  assert.equal(done.stdout, "");
  assert.equal(
    done.stderr,
    '{"ok":false,"error":{"code":"CG_CONFIG_INVALID","phase":"config","message":"Cannot read a valid bounded JSON configuration file","nextAction":"check_config"}}\n',
  );
});

test("the server exits 0 when the client closes stdin", () => {
  const done = spawnSync(process.execPath, [CLI, "mcp", "--config", graphFolder()], {
    encoding: "utf8",
    input: "",
  });
  assert.equal(done.status, 0);
  assert.equal(done.stdout, "");
});

test("notifications/cancelled for a running match: no answer to it, and the server goes on", async () => {
  // A scripted executor that answers only after 60 s (`then` is the executor annex's member).
  const config = graphFolder(
    JSON.parse(
      '{"executor": "scripted", "steps": [{"sleepMs": 60000, "then": {"return": {"status": "no_match", "candidates": []}}}]}',
    ),
  );
  const server = spawn(process.execPath, [CLI, "mcp", "--config", config], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const exited = once(server, "exit");
  const lines: string[] = [];
  let buffer = "";
  server.stdout.setEncoding("utf8");
  server.stdout.on("data", (chunk: string) => {
    buffer += chunk;
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    lines.push(...parts);
  });
  const send = (message: object) => server.stdin.write(`${JSON.stringify(message)}\n`);
  const answered = async (count: number) => {
    for (let waited = 0; lines.length < count && waited < 400; waited += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    },
  });
  await answered(1);
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  send({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "match_capabilities", arguments: { request: "anything" } },
  });
  send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2 } });
  send({
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "describe_graph", arguments: {} },
  });
  await answered(2);
  server.stdin.end();
  const [code] = await exited;
  assert.equal(code, 0);
  assert.deepEqual(
    lines.map((line) => JSON.parse(line).id),
    [1, 3],
  );
});

/** A server spoken to in raw JSON-RPC lines, initialized; answers are looked up by id. */
async function rawServer(config: string) {
  const server = spawn(process.execPath, [CLI, "mcp", "--config", config], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const exited = once(server, "exit");
  const answers = new Map<unknown, Record<string, unknown>>();
  let buffer = "";
  server.stdout.setEncoding("utf8");
  server.stdout.on("data", (chunk: string) => {
    buffer += chunk;
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    for (const part of parts) {
      const message = JSON.parse(part) as Record<string, unknown>;
      answers.set(message.id, message);
    }
  });
  const send = (text: string) => server.stdin.write(`${text}\n`);
  const answer = async (id: unknown, waitMs = 30_000): Promise<Record<string, unknown>> => {
    for (let waited = 0; !answers.has(id) && waited < waitMs; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const message = answers.get(id);
    answers.delete(id);
    assert.ok(message, `no answer to ${String(id)}`);
    return message;
  };
  send(
    '{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
  );
  const initialized = await answer("init");
  send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  const call = (id: number, params: string) =>
    send(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params}}`);
  const close = async () => {
    server.stdin.end();
    const [code] = await exited;
    return code;
  };
  return { initialized, send, call, answer, close };
}

function toolErrorOf(message: Record<string, unknown>): unknown {
  const result = message.result as { isError?: boolean; content: Array<{ text: string }> };
  assert.equal(result.isError, true);
  assert.equal("structuredContent" in result, false);
  return JSON.parse(result.content[0]?.text ?? "");
}

const inputInvalid = (message: string, phase = "query") => ({
  code: "CG_INPUT_INVALID",
  phase,
  message,
  nextAction: "fix_input",
});

test("every tools/call is answered: lone surrogates, any depth, non-object arguments ([CG-MCP-6], [CG-MCP-7])", async () => {
  const server = await rawServer(graphFolder());
  try {
    server.call(1, '{"name":"list_capabilities","arguments":{"tags":["\\ud800"]}}');
    assert.deepEqual(
      toolErrorOf(await server.answer(1)),
      inputInvalid("/tags/0 a string has a lone surrogate"),
    );
    server.call(
      2,
      '{"name":"match_capabilities","arguments":{"request":"x","context":{"a":"\\ud800"}}}',
    );
    assert.deepEqual(toolErrorOf(await server.answer(2)), {
      code: "CG_CONTEXT_INVALID",
      phase: "match",
      message: "/context values must be strings of valid Unicode text",
      nextAction: "fix_input",
    });
    const deep = (levels: number) => `{"tags":${"[".repeat(levels)}${"]".repeat(levels)}}`;
    server.call(3, `{"name":"list_capabilities","arguments":${deep(300)}}`);
    assert.deepEqual(
      toolErrorOf(await server.answer(3)),
      inputInvalid(`/tags${"/0".repeat(32)} nesting deeper than 32`),
    );
    const started = performance.now();
    server.call(4, `{"name":"list_capabilities","arguments":${deep(1_000_000)}}`);
    const error = toolErrorOf(await server.answer(4, 60_000)) as { code: string };
    assert.ok(performance.now() - started < 30_000);
    assert.match(error.code, /^CG_INPUT_(INVALID|TOO_LARGE)$/);
    for (const [id, value] of [
      [5, "null"],
      [6, "[]"],
      [7, '"x"'],
      [8, "1"],
      [9, "true"],
    ] as const) {
      server.call(id, `{"name":"describe_graph","arguments":${value}}`);
      assert.deepEqual(toolErrorOf(await server.answer(id)), inputInvalid("/ must be an object"));
    }
    server.call(10, '{"name":"describe_graph"}');
    const result = (await server.answer(10)).result as Record<string, unknown>;
    assert.deepEqual(Object.keys(result).sort(), ["content", "structuredContent"]);
  } finally {
    assert.equal(await server.close(), 0);
  }
});

test("a tools/call naming no tool is exactly -32602 Unknown tool, other params members change nothing ([CG-MCP-8], [CG-MCP-9])", async () => {
  const server = await rawServer(graphFolder());
  try {
    const params = [
      '{"name":"nope","arguments":{}}',
      '{"name":5}',
      '{"arguments":{}}',
      '{"name":"\\ud800"}',
    ];
    for (const [index, text] of params.entries()) {
      server.call(20 + index, text);
      assert.deepEqual(await server.answer(20 + index), {
        jsonrpc: "2.0",
        id: 20 + index,
        error: { code: -32602, message: "Unknown tool" },
      });
    }
    server.send('{"jsonrpc":"2.0","id":30,"method":"tools/call"}');
    assert.deepEqual((await server.answer(30)).error, { code: -32602, message: "Unknown tool" });
    for (const [index, params] of ["[]", "null", "5", '"describe_graph"'].entries()) {
      server.send(`{"jsonrpc":"2.0","id":${31 + index},"method":"tools/call","params":${params}}`);
      assert.deepEqual((await server.answer(31 + index)).error, {
        code: -32602,
        message: "Unknown tool",
      });
    }
    const extras = [
      ',"_meta":{"progressToken":1}',
      ',"_meta":5',
      ',"_meta":{"a":"\\ud800"}',
      ',"unknown":1',
    ];
    for (const [index, extra] of extras.entries()) {
      server.call(40 + index, `{"name":"describe_graph","arguments":{}${extra}}`);
      const result = (await server.answer(40 + index)).result as Record<string, unknown>;
      assert.deepEqual(Object.keys(result).sort(), ["content", "structuredContent"]);
    }
  } finally {
    assert.equal(await server.close(), 0);
  }
});

test("initialize carries the instructions text ([CG-MCP-10])", async () => {
  const server = await rawServer(graphFolder());
  try {
    const result = server.initialized.result as {
      instructions: string;
      serverInfo: { name: string };
    };
    assert.equal(result.serverInfo.name, "capability-graph");
    assert.equal(
      result.instructions,
      "Capability Graph: discover what the configured products and services can do. Call describe_graph first, then list_capabilities or match_capabilities to find capabilities, resolve_capabilities for their details, relations and documents, and read_document for a local document's text. A failed call returns isError with a JSON error object whose nextAction says what to do next.",
    );
  } finally {
    assert.equal(await server.close(), 0);
  }
});
