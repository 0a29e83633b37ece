// [CG-CLI-11]: an unknown tool keeps its one-line envelope on stderr; when stderr is a terminal a
// hint listing the tools follows. Node has no pseudo-terminal of its own, so a small Python
// program (the standard library's pty module) gives the CLI a terminal as stderr.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { OPERATIONS } from "../../src/_generated/operations.js";
import { CLI } from "../surface-fixtures.js";

const ENVELOPE =
  '{"ok":false,"error":{"code":"CG_INPUT_INVALID","phase":"query","message":"Unknown tool","nextAction":"fix_input"}}';

// Runs argv[1:] with stdout a pipe and stderr a pseudo-terminal; prints what came out as JSON.
const WITH_TERMINAL_STDERR = `
import json, os, pty, subprocess, sys
master, slave = pty.openpty()
done = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, timeout=60)
os.close(slave)
chunks = []
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    chunks.append(chunk)
os.close(master)
print(json.dumps({"status": done.returncode, "stdout": done.stdout.decode(), "stderr": b"".join(chunks).decode()}))
`;

let folder: string;
let config: string;
before(() => {
  folder = mkdtempSync(join(tmpdir(), "cg-terminal-"));
  config = join(folder, "capability-graph.json");
  writeFileSync(
    config,
    JSON.stringify({
      providers: [
        { definition: { providerId: "acme", name: "A", version: "1", capabilities: [] } },
      ],
    }),
  );
});
after(() => rmSync(folder, { recursive: true, force: true }));

function withTerminalStderr(args: string[]) {
  const done = spawnSync(
    "python3",
    ["-c", WITH_TERMINAL_STDERR, process.execPath, CLI, ...args, "--config", config],
    { encoding: "utf8", env: { ...process.env, CAPABILITY_GRAPH_CONFIG: "" } },
  );
  assert.equal(done.status, 0, done.stderr);
  return JSON.parse(done.stdout) as { status: number; stdout: string; stderr: string };
}

test("an unknown tool with stderr a terminal: the envelope, then a hint naming every tool", () => {
  const done = withTerminalStderr(["call", "no_such_tool"]);
  assert.equal(done.status, 1);
  assert.equal(done.stdout, "");
  const tools = OPERATIONS.map((operation) => operation.tool).join(", ");
  // The terminal turns each line feed into CR LF.
  assert.equal(done.stderr, `${ENVELOPE}\r\nhint: the tools are ${tools}\r\n`);
  assert.equal(
    tools,
    "describe_graph, list_capabilities, resolve_capabilities, match_capabilities, read_document",
  );
});

test("a known tool failing with stderr a terminal gets no hint", () => {
  const done = withTerminalStderr([
    "call",
    "resolve_capabilities",
    "--arguments",
    '{"ids":["acme::x"]}',
  ]);
  assert.equal(done.status, 1);
  assert.doesNotMatch(done.stderr, /hint:/);
});

test("an unknown tool with stderr a pipe: the one-line envelope only", () => {
  const done = spawnSync(process.execPath, [CLI, "call", "no_such_tool", "--config", config], {
    encoding: "utf8",
    env: { ...process.env, CAPABILITY_GRAPH_CONFIG: "" },
  });
  assert.equal(done.status, 1);
  assert.equal(done.stderr, `${ENVELOPE}\n`);
});
