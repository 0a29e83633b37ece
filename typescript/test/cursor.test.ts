import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash, createHmac } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { cursorKey, issueCursor, readCursor } from "../src/core/cursor.js";
import { GraphError } from "../src/core/errors.js";
import { CapabilityGraph } from "../src/core/graph.js";
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
    [join(packageRoot, "dist", "src", "surfaces", "cli", "main.js"), ...args],
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

// Which cursor texts and payloads a graph accepts ([CG-CUR-5] .. [CG-CUR-8], [CG-LIST-2]). The
// cursors below are made as the specification says, not with this implementation's functions:
// a payload with a valid MAC can say anything (anyone with the configuration can make one), and
// the graph must still accept exactly the cursors it could have issued.
const ASTRAL = "\u{1F600}";
const BMP_HIGH = "\uFF21";
const PAYLOAD_CONFIG = {
  providers: [
    {
      definition: {
        providerId: "acme",
        name: "Acme",
        version: "1",
        capabilities: [
          { id: "a", tags: [ASTRAL, BMP_HIGH] },
          { id: "b", tags: ["http", ASTRAL, BMP_HIGH] },
          { id: "c", tags: [BMP_HIGH, ASTRAL] },
          { id: "d" },
        ].map((capability) => ({ ...capability, name: "N", description: "D." })),
      },
    },
  ],
};
const FOREIGN_JSON =
  '{"code":"CG_INPUT_INVALID","phase":"query","message":"Cursor is malformed, foreign or stale; restart listing without it","nextAction":"fix_input"}';

/** RFC 8785 for what these configurations hold (strings, integers, objects, arrays). */
function jcs(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(jcs).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${jcs(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function specKey(config: { providers: object[] }): Buffer {
  const providers = config.providers.map((source) =>
    "definition" in source ? { ...source, definition: true } : source,
  );
  return createHash("sha256")
    .update("capability-graph list cursor key\u0000", "utf8")
    .update(jcs({ ...config, providers }), "utf8")
    .digest();
}

/** The filter key of [CG-CUR-5]; `tags` given already sorted by code point. */
function specFilters(tags: readonly string[] = []): string {
  return createHash("sha256")
    .update(jcs({ providers: null, tags }), "utf8")
    .digest("hex")
    .slice(0, 16);
}

function specCursor(config: { providers: object[] }, payload: string): string {
  const data = Buffer.from(payload, "utf8");
  const mac = createHmac("sha256", specKey(config)).update(data).digest().subarray(0, 16);
  return Buffer.concat([mac, data]).toString("base64url");
}

function specPayload(revision: string, offset: string, filters = specFilters()): string {
  return `{"v":2,"r":"${revision}","f":"${filters}","o":${offset}}`;
}

async function withPayloadGraph(
  body: (graph: CapabilityGraph, revision: string) => Promise<void>,
): Promise<void> {
  const graph = await CapabilityGraph.open(PAYLOAD_CONFIG);
  try {
    await body(graph, (await graph.list({})).revision);
  } finally {
    await graph.close();
  }
}

async function assertForeign(graph: CapabilityGraph, request: object): Promise<void> {
  await assert.rejects(
    graph.list(request),
    (error: unknown) =>
      error instanceof GraphError && JSON.stringify(error.toJSON()) === FOREIGN_JSON,
  );
}

const ids = (page: { items: readonly { id: string }[] }) => page.items.map((item) => item.id);

test("a cursor made as the specification says is the one the graph issues", async () => {
  await withPayloadGraph(async (graph, revision) => {
    const issued = (await graph.list({ limit: 1 })).nextCursor;
    assert.equal(issued, specCursor(PAYLOAD_CONFIG, specPayload(revision, "1")));
  });
});

test("an issued cursor with padding appended or its unused bits set is refused", async () => {
  await withPayloadGraph(async (graph) => {
    const issued = (await graph.list({ limit: 1 })).nextCursor as string;
    await assertForeign(graph, { limit: 1, cursor: `${issued}=` });
    await assertForeign(graph, { limit: 1, cursor: `${issued}==` });
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const unused = issued.length % 4 === 2 ? 0b1111 : 0b11;
    assert.notEqual(issued.length % 4, 0);
    const last = alphabet[alphabet.indexOf(issued.at(-1) as string) | unused] as string;
    const altered = `${issued.slice(0, -1)}${last}`;
    assert.deepEqual(Buffer.from(altered, "base64url"), Buffer.from(issued, "base64url"));
    await assertForeign(graph, { limit: 1, cursor: altered });
  });
});

test("a payload with a valid MAC is refused unless written as the graph writes it", async () => {
  await withPayloadGraph(async (graph, revision) => {
    for (const payload of [
      '{"v":2,"r":"REV","f":"FILTERS","o":1.0}',
      '{"v":2,"r":"REV","f":"FILTERS","o":01}',
      '{"v":2,"r":"REV","f":"FILTERS","o":1e0}',
      '{"v":2,"r":"REV","f":"FILTERS","o":"1"}',
      '{"v":2,"r":"REV","f":"FILTERS","o":0}',
      '{"v":2,"r":"REV","f":"FILTERS","o":-1}',
      '{"o":1,"v":2,"r":"REV","f":"FILTERS"}',
      '{"v":2, "r":"REV","f":"FILTERS","o":1}',
      '{"v":2,"r":"REV","f":"FILTERS","o":1,"x":0}',
      '{"v":2,"r":"REV","f":"FILTERS","o":3,"o":1}',
    ]) {
      const forged = payload.replace("REV", revision).replace("FILTERS", specFilters());
      await assertForeign(graph, { limit: 1, cursor: specCursor(PAYLOAD_CONFIG, forged) });
    }
  });
});

test("a cursor at the last item answers it; at or past the end it is refused", async () => {
  await withPayloadGraph(async (graph, revision) => {
    const last = await graph.list({
      cursor: specCursor(PAYLOAD_CONFIG, specPayload(revision, "3")),
    });
    assert.deepEqual(ids(last), ["acme::d"]);
    assert.equal(last.nextCursor, undefined);
    for (const offset of [
      "4",
      "5",
      "9007199254740993",
      "9223372036854775808",
      `1${"0".repeat(100)}`,
    ]) {
      await assertForeign(graph, {
        cursor: specCursor(PAYLOAD_CONFIG, specPayload(revision, offset)),
      });
    }
    // tags ["http"] select one item of four: offset 1 is past the end of that selection.
    const filtered = specCursor(PAYLOAD_CONFIG, specPayload(revision, "1", specFilters(["http"])));
    await assertForeign(graph, { tags: ["http"], cursor: filtered });
  });
});

test("a cursor on an empty catalog is refused, not answered as empty", async () => {
  const empty = {
    providers: [{ definition: { providerId: "acme", name: "A", version: "1", capabilities: [] } }],
  };
  const graph = await CapabilityGraph.open(empty);
  try {
    const page = await graph.list({});
    assert.equal(page.status, "empty");
    await assertForeign(graph, { cursor: specCursor(empty, specPayload(page.revision, "1")) });
  } finally {
    await graph.close();
  }
});

test("the tags a cursor binds are a set sorted by code point, whatever their order", async () => {
  await withPayloadGraph(async (graph, revision) => {
    const first = await graph.list({ limit: 1, tags: [BMP_HIGH, ASTRAL] });
    const second = await graph.list({
      limit: 1,
      tags: [ASTRAL, BMP_HIGH],
      cursor: first.nextCursor as string,
    });
    assert.deepEqual([...ids(first), ...ids(second)], ["acme::a", "acme::b"]);
    // Code point order puts U+FF21 before U+1F600; UTF-16 code units would not.
    const cursor = specCursor(
      PAYLOAD_CONFIG,
      specPayload(revision, "2", specFilters([BMP_HIGH, ASTRAL])),
    );
    assert.deepEqual(ids(await graph.list({ tags: [ASTRAL, BMP_HIGH], cursor })), ["acme::c"]);
  });
});
