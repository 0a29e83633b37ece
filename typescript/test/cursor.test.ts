import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { cursorKey, issueCursor, readCursor } from "../src/cursor.js";
import { GraphError } from "../src/errors.js";
import { CapabilityGraph } from "../src/graph.js";
import { packageRoot } from "./support.js";

const DEFINITION = {
  providerId: "acme",
  name: "Acme",
  version: "1",
  capabilities: ["a", "b", "c"].map((id) => ({
    id,
    name: id.toUpperCase(),
    description: `Capability ${id}.`,
  })),
};

async function secondPage(configPath: string, cursor: string) {
  const graph = await CapabilityGraph.open(configPath);
  try {
    return await graph.list({ limit: 2, cursor });
  } finally {
    await graph.close();
  }
}

test("a cursor is accepted by another graph opened from the same configuration, as the next CLI process would", async () => {
  const folder = mkdtempSync(join(tmpdir(), "cg-cursor-"));
  try {
    const configPath = join(folder, "capability-graph.json");
    writeFileSync(configPath, JSON.stringify({ providers: [{ definition: DEFINITION }] }));
    const first = await CapabilityGraph.open(configPath);
    const page = await first.list({ limit: 2 });
    await first.close();
    assert.deepEqual(
      page.items.map((item) => item.id),
      ["acme::a", "acme::b"],
    );
    const next = await secondPage(configPath, page.nextCursor as string);
    assert.deepEqual(
      next.items.map((item) => item.id),
      ["acme::c"],
    );
    assert.equal(next.nextCursor, undefined);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

test("a cursor is foreign to a graph of another configuration with the same catalog", async () => {
  const folder = mkdtempSync(join(tmpdir(), "cg-cursor-"));
  try {
    const configPath = join(folder, "capability-graph.json");
    writeFileSync(configPath, JSON.stringify({ providers: [{ definition: DEFINITION }] }));
    const otherPath = join(folder, "other.json");
    writeFileSync(
      otherPath,
      JSON.stringify({ providers: [{ definition: DEFINITION }], budgets: { maxInputBytes: 4096 } }),
    );
    const first = await CapabilityGraph.open(configPath);
    const page = await first.list({ limit: 2 });
    await first.close();
    await assert.rejects(
      secondPage(otherPath, page.nextCursor as string),
      (error: unknown) =>
        error instanceof GraphError &&
        JSON.stringify(error.toJSON()) ===
          '{"code":"CG_INPUT_INVALID","phase":"query","message":"Cursor is malformed, foreign or stale; restart listing without it","nextAction":"fix_input"}',
    );
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

test("a cursor with one flipped payload byte is refused with the cursor message", async () => {
  const graph = await CapabilityGraph.open({ providers: [{ definition: DEFINITION }] });
  const page = await graph.list({ limit: 1 });
  const bytes = Buffer.from(page.nextCursor as string, "base64url");
  bytes[bytes.length - 2] = (bytes[bytes.length - 2] as number) ^ 1;
  await assert.rejects(
    graph.list({ limit: 1, cursor: bytes.toString("base64url") }),
    (error: unknown) =>
      error instanceof GraphError &&
      error.message === "Cursor is malformed, foreign or stale; restart listing without it",
  );
  await graph.close();
});

// Cursors cross implementations ([CG-CUR-5]). The configuration below, written as this text
// (a whole number written with a fraction, an inline definition), and the cursors the Python
// reference printed for it:
//   capability-graph list --limit 1 --config capability-graph.json
//   capability-graph list --limit 1 --config capability-graph.json --tag t --provider acme --provider acme
const CROSS_CONFIG_TEXT = `{"providers":[{"definition":{"providerId":"acme","name":"Acme","version":"1","capabilities":[{"id":"a","name":"A","description":"Capability a.","tags":["t"]},{"id":"b","name":"B","description":"Capability b.","tags":["t"]},{"id":"c","name":"C","description":"Capability c.","tags":["t"]}]}}],"budgets":{"maxInputBytes":4096.0}}\n`;
const PYTHON_CURSOR_UNFILTERED =
  "Ioyu4_uRJp3mklhdc68x_3sidiI6MiwiciI6InI6MjQzOTAyZTU2N2JmZDhhNSIsImYiOiJkMjY1MTIwMDU0N2I2N2U4IiwibyI6MX0";
const PYTHON_CURSOR_FILTERED =
  "rI_s9DX31TugokO3Jgviq3sidiI6MiwiciI6InI6MjQzOTAyZTU2N2JmZDhhNSIsImYiOiJkZTRiNmY2Yjg1MTY5NjZlIiwibyI6MX0";

function runCli(args: readonly string[], cwd: string): { status: number | null; stdout: string } {
  const run = spawnSync(
    process.execPath,
    [join(packageRoot, "dist", "src", "cli", "main.js"), ...args],
    {
      cwd,
      encoding: "utf8",
    },
  );
  return { status: run.status, stdout: run.stdout };
}

function withCrossConfig(body: (folder: string) => void): void {
  const folder = mkdtempSync(join(tmpdir(), "cg-cursor-"));
  try {
    writeFileSync(join(folder, "capability-graph.json"), CROSS_CONFIG_TEXT);
    body(folder);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

test("the CLI prints the same first-page cursor as the Python reference for the same configuration", () => {
  withCrossConfig((folder) => {
    const unfiltered = runCli(["list", "--limit", "1"], folder);
    assert.equal(unfiltered.status, 0);
    assert.equal(JSON.parse(unfiltered.stdout).nextCursor, PYTHON_CURSOR_UNFILTERED);
    const filtered = runCli(
      ["list", "--limit", "1", "--tag", "t", "--provider", "acme", "--provider", "acme"],
      folder,
    );
    assert.equal(filtered.status, 0);
    assert.equal(JSON.parse(filtered.stdout).nextCursor, PYTHON_CURSOR_FILTERED);
  });
});

test("the CLI accepts a cursor the Python reference printed for the same configuration", () => {
  withCrossConfig((folder) => {
    const next = runCli(["list", "--limit", "1", "--cursor", PYTHON_CURSOR_UNFILTERED], folder);
    assert.equal(next.status, 0);
    assert.deepEqual(
      JSON.parse(next.stdout).items.map((item: { id: string }) => item.id),
      ["acme::b"],
    );
    const filtered = runCli(
      [
        "list",
        "--limit",
        "1",
        "--provider",
        "acme",
        "--tag",
        "t",
        "--cursor",
        PYTHON_CURSOR_FILTERED,
      ],
      folder,
    );
    assert.equal(filtered.status, 0);
    assert.deepEqual(
      JSON.parse(filtered.stdout).items.map((item: { id: string }) => item.id),
      ["acme::b"],
    );
  });
});

test("a cursor longer than 256 characters is refused even when its MAC verifies", () => {
  const key = cursorKey({ providers: [] });
  const longRevision = `r:${"0".repeat(200)}`;
  const cursor = issueCursor(key, longRevision, "0123456789abcdef", 1);
  assert.ok(cursor.length > 256);
  assert.equal(readCursor(key, cursor, longRevision, "0123456789abcdef", 5), undefined);
  const shortCursor = issueCursor(key, "r:0", "0123456789abcdef", 1);
  assert.equal(readCursor(key, shortCursor, "r:0", "0123456789abcdef", 5), 1);
});

test("the cursor key ignores the content of an inline definition", () => {
  const withDefinition = (definition: unknown) => ({ providers: [{ definition }] });
  assert.deepEqual(cursorKey(withDefinition({ a: 1 })), cursorKey(withDefinition(true)));
  assert.notDeepEqual(
    cursorKey(withDefinition({ a: 1 })),
    cursorKey({ providers: [{ path: "a.json" }] }),
  );
});
