// The MCP server's stdio streams under load, over real stdio: a line over the frame limit
// ([CG-MCP-11]), a client that stops reading ([CG-CLI-7]: bounded memory, every request answered
// once reading resumes), and many concurrent matches on one graph (stderr stays quiet).
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { CLI, graphFolder } from "./surface-fixtures.js";

const INITIALIZE =
  '{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}';
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';

/** The largest line a server must read, 65 MiB ([CG-MCP-11]). */
const MAX_FRAME_BYTES = 65 * 1024 * 1024;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The server's peak resident set (VmHWM) in MiB, from /proc. */
function peakRssMib(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]) / 1024;
}

/** A server on real stdio, spoken to in raw lines; answers are kept in order of arrival. */
function startServer(config: string) {
  const server = spawn(process.execPath, [CLI, "mcp", "--config", config], {
    stdio: ["pipe", "pipe", "pipe"],
  }) as ChildProcessWithoutNullStreams;
  const exited = once(server, "exit");
  const answers: Array<Record<string, unknown>> = [];
  let stderr = "";
  let buffer = "";
  server.stderr.setEncoding("utf8");
  server.stderr.on("data", (chunk: string) => {
    stderr += chunk;
  });
  server.stdout.setEncoding("utf8");
  server.stdout.on("data", (chunk: string) => {
    buffer += chunk;
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    for (const part of parts) answers.push(JSON.parse(part));
  });
  /** Write one line; resolves once the pipe took it (false: it did not within `ms`). */
  const send = (text: string, ms = 30_000): Promise<boolean> =>
    new Promise((resolve) => {
      if (server.stdin.write(`${text}\n`)) {
        resolve(true);
        return;
      }
      const timer = setTimeout(() => {
        server.stdin.off("drain", drained);
        resolve(false);
      }, ms);
      const drained = () => {
        clearTimeout(timer);
        resolve(true);
      };
      server.stdin.once("drain", drained);
    });
  const answered = async (count: number, ms: number) => {
    for (let waited = 0; answers.length < count && waited < ms; waited += 20) await sleep(20);
    assert.ok(answers.length >= count, `${answers.length} answers of ${count}`);
  };
  const close = async () => {
    server.stdin.end();
    const [code] = await exited;
    return { code, stderr };
  };
  return { server, answers, send, answered, close };
}

test("a line over the frame limit is refused at once and the server goes on ([CG-MCP-11])", async () => {
  const mcp = startServer(graphFolder());
  try {
    await mcp.send(INITIALIZE);
    await mcp.answered(1, 30_000);
    await mcp.send(INITIALIZED);
    const head =
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"match_capabilities","arguments":{"request":"';
    const tail = '"}}}';
    const line = head + "x".repeat(MAX_FRAME_BYTES + 1 - head.length - tail.length) + tail;
    assert.equal(Buffer.byteLength(line), MAX_FRAME_BYTES + 1);
    const started = performance.now();
    assert.ok(await mcp.send(line));
    await mcp.send(
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"describe_graph"}}',
    );
    // The quadratic reader took minutes for this line; a linear one takes about a second.
    await mcp.answered(3, 20_000);
    assert.ok(performance.now() - started < 20_000);
    assert.deepEqual(mcp.answers[1], {
      jsonrpc: "2.0",
      error: { code: -32600, message: "Request too large" },
    });
    assert.equal(mcp.answers[2]?.id, 2);
    assert.ok("structuredContent" in ((mcp.answers[2]?.result ?? {}) as object));
    // Bounded: at most the limit is held (the quadratic reader peaked near 1 GB for 64 MiB).
    const peak = peakRssMib(mcp.server.pid as number);
    assert.ok(peak < 300, `peak ${peak} MiB`);
  } finally {
    assert.equal((await mcp.close()).code, 0);
  }
});

test("a client that stops reading stops the server reading; every request is answered after", async () => {
  const mcp = startServer(graphFolder());
  try {
    await mcp.send(INITIALIZE);
    await mcp.answered(1, 30_000);
    await mcp.send(INITIALIZED);
    mcp.server.stdout.pause();
    // Requests until the server stops taking them (its stdout is full, so it stops reading
    // stdin and the pipe fills up), or for at most 5 s.
    const until = performance.now() + 5_000;
    let sent = 0;
    let blocked = false;
    while (!blocked && performance.now() < until) {
      sent += 1;
      const line = `{"jsonrpc":"2.0","id":${sent},"method":"tools/call","params":{"name":"describe_graph"}}`;
      blocked = !(await mcp.send(line, 1_000));
    }
    assert.ok(blocked, `the server read all of ${sent} requests without their answers being read`);
    assert.ok(peakRssMib(mcp.server.pid as number) < 150);
    mcp.server.stdout.resume();
    await mcp.answered(1 + sent, 60_000);
    const ids = mcp.answers.slice(1).map((answer) => answer.id);
    assert.deepEqual(
      [...ids].sort((a, b) => Number(a) - Number(b)),
      Array.from({ length: sent }, (_, index) => index + 1),
    );
  } finally {
    assert.equal((await mcp.close()).code, 0);
  }
});

test("concurrent matches leave the server's stderr empty (no listener warning)", async () => {
  const config = graphFolder(
    JSON.parse(
      '{"executor": "scripted", "steps": [{"sleepMs": 200, "then": {"return": {"status": "no_match", "candidates": []}}}]}',
    ),
  );
  const mcp = startServer(config);
  await mcp.send(INITIALIZE);
  await mcp.answered(1, 30_000);
  await mcp.send(INITIALIZED);
  const count = 24;
  for (let id = 1; id <= count; id += 1) {
    await mcp.send(
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"match_capabilities","arguments":{"request":"x"}}}`,
    );
  }
  await mcp.answered(1 + count, 30_000);
  for (const answer of mcp.answers.slice(1)) {
    assert.ok("structuredContent" in (answer.result as object));
  }
  const { code, stderr } = await mcp.close();
  assert.equal(code, 0);
  assert.equal(stderr, "");
});
