// Stress figures of the MCP server's stdio transport (docs/reliability.md, TypeScript section).
//
//   node bench/mcp-streams.mjs long-line MIB [CLI]    one tools/call of MIB MiB, then describe_graph
//   node bench/mcp-streams.mjs slow-reader SECONDS [CLI]  requests for SECONDS while nothing is read
//
// Prints one JSON line: seconds to the answers and the server's peak RSS (VmHWM) in MB.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const [mode, amount, cliArgument] = process.argv.slice(2);
const cli =
  cliArgument ?? resolve(fileURLToPath(import.meta.url), "../../dist/src/surfaces/cli/main.js");

const folder = mkdtempSync(join(tmpdir(), "cg-bench-streams-"));
writeFileSync(
  join(folder, "acme.json"),
  JSON.stringify({
    providerId: "acme",
    name: "Acme",
    version: "1",
    capabilities: [{ id: "a.b", name: "A", description: "An A." }],
  }),
);
writeFileSync(
  join(folder, "capability-graph.json"),
  JSON.stringify({ providers: [{ path: "acme.json" }] }),
);

const server = spawn(
  process.execPath,
  [cli, "mcp", "--config", join(folder, "capability-graph.json")],
  {
    stdio: ["pipe", "pipe", "inherit"],
  },
);
const peakMb = () => {
  try {
    const status = readFileSync(`/proc/${server.pid}/status`, "utf8");
    return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return Number.NaN;
  }
};
const answers = new Map();
let buffer = "";
const reading = () => {
  server.stdout.on("data", (chunk) => {
    buffer += chunk.toString("utf8");
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    for (const part of parts) {
      const message = JSON.parse(part);
      answers.set(message.id ?? null, { at: performance.now(), message });
    }
  });
};
const send = (text) =>
  new Promise((done) => {
    if (server.stdin.write(`${text}\n`)) done();
    else server.stdin.once("drain", done);
  });
const waitFor = async (id, ms = 600_000) => {
  for (let waited = 0; !answers.has(id) && waited < ms; waited += 10) {
    await new Promise((done) => setTimeout(done, 10));
  }
  return answers.get(id);
};

reading();
await send(
  '{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}',
);
await waitFor("init");
await send('{"jsonrpc":"2.0","method":"notifications/initialized"}');

if (mode === "long-line") {
  const size = Number(amount) * 1024 * 1024;
  const head =
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"match_capabilities","arguments":{"request":"';
  const tail = '"}}}';
  const line = head + "x".repeat(size - head.length - tail.length) + tail;
  const started = performance.now();
  await send(line);
  await send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"describe_graph"}}');
  const small = await waitFor(2, 300_000);
  const big = answers.get(1);
  const refused = answers.get(null);
  const first = big ?? refused;
  console.log(
    JSON.stringify({
      mode,
      mib: Number(amount),
      answer: big ? JSON.parse(big.message.result.content[0].text).code : refused?.message.error,
      secondsToAnswer: first ? (first.at - started) / 1000 : null,
      secondsToNext: small ? (small.at - started) / 1000 : null,
      peakRssMb: Math.round(peakMb()),
    }),
  );
} else {
  // The client stops reading: requests go on being written for SECONDS.
  server.stdout.pause();
  server.stdout.removeAllListeners("data");
  const until = performance.now() + Number(amount) * 1000;
  let id = 10;
  const request = (n) =>
    `{"jsonrpc":"2.0","id":${n},"method":"tools/call","params":{"name":"describe_graph"}}`;
  let sent = 0;
  let blocked = false;
  while (performance.now() < until) {
    const wrote = server.stdin.write(`${request(id)}\n`);
    id += 1;
    sent += 1;
    if (!wrote) {
      const drained = await Promise.race([
        new Promise((done) => server.stdin.once("drain", () => done(true))),
        new Promise((done) =>
          setTimeout(() => done(false), Math.max(0, until - performance.now())),
        ),
      ]);
      if (!drained) blocked = true;
    }
  }
  const peakWhileBlocked = peakMb();
  const started = performance.now();
  reading();
  server.stdout.resume();
  const last = await waitFor(id - 1, 600_000);
  let answered = 0;
  for (let n = 10; n < id; n += 1) if (answers.has(n)) answered += 1;
  console.log(
    JSON.stringify({
      mode,
      seconds: Number(amount),
      sent,
      answered,
      writerBlocked: blocked,
      secondsToDrain: last ? (last.at - started) / 1000 : null,
      peakRssMbWhileNotReading: Math.round(peakWhileBlocked),
      peakRssMb: Math.round(peakMb()),
    }),
  );
}
server.stdin.end();
server.kill();
