// A graph over definition files: a linked definition's default root ([CG-CFG-10]), documents with
// a byte order mark and upper-case suffixes ([CG-DOC-11], [CG-DEF-7]), a reload whose source
// renames its provider ([CG-LIFE-11]), and no executor before the catalog budget ([CG-PREC-11]).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { GraphError } from "../src/core/errors.js";
import { CapabilityGraph } from "../src/core/graph.js";

let top: string;

beforeEach(() => {
  top = realpathSync(mkdtempSync(join(tmpdir(), "cg-sources-")));
});

afterEach(() => {
  rmSync(top, { recursive: true, force: true });
});

function provider(providerId: string, documents: unknown[] = []) {
  return {
    providerId,
    name: "Acme",
    version: "1",
    capabilities: [{ id: "a", name: "A", description: "A capability.", documents }],
  };
}

function writeJson(path: string, value: unknown): string {
  writeFileSync(path, JSON.stringify(value));
  return path;
}

async function errorOf(action: () => Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await action();
  } catch (error) {
    assert.ok(error instanceof GraphError, `not a GraphError: ${String(error)}`);
    return error.toJSON() as unknown as Record<string, unknown>;
  }
  assert.fail("no error");
}

test("a linked definition file has the link's folder as its default document root", async () => {
  mkdirSync(join(top, "defs"));
  mkdirSync(join(top, "site"));
  writeJson(
    join(top, "defs", "acme.json"),
    provider("acme", [{ id: "g", title: "G", path: "guide.md" }]),
  );
  writeFileSync(join(top, "defs", "guide.md"), "target folder\n");
  writeFileSync(join(top, "site", "guide.md"), "link folder\n");
  symlinkSync("../defs/acme.json", join(top, "site", "acme.json"));
  const config = writeJson(join(top, "config.json"), { providers: [{ path: "site/acme.json" }] });
  const graph = await CapabilityGraph.open(config);
  try {
    const read = await graph.readDocument({ capabilityId: "acme::a", documentId: "g" });
    assert.equal(read.text, "link folder\n");
  } finally {
    await graph.close();
  }
});

test("a byte order mark stays in the text and suffixes match in any ASCII case", async () => {
  const documents = [
    { id: "bom", title: "Bom", path: "bom.MD" },
    { id: "mixed", title: "Mixed", path: "notes.Mdx" },
    { id: "data", title: "Data", path: "data.Json" },
  ];
  writeJson(join(top, "acme.json"), provider("acme", documents));
  const body = Buffer.from("\ufeff# Title\r\n", "utf8");
  writeFileSync(join(top, "bom.MD"), body);
  const config = writeJson(join(top, "config.json"), { providers: [{ path: "acme.json" }] });
  const graph = await CapabilityGraph.open(config);
  try {
    const read = await graph.readDocument({ capabilityId: "acme::a", documentId: "bom" });
    assert.equal(read.text, "\ufeff# Title\r\n");
    assert.equal(read.bytes, body.length);
    assert.equal(read.sha256, createHash("sha256").update(body).digest("hex"));
    const resolved = await graph.resolve({ ids: ["acme::a"] });
    assert.deepEqual(
      resolved.capabilities[0]?.documents.map((document) => [document.id, document.mediaType]),
      [
        ["bom", "text/markdown"],
        ["mixed", "text/markdown"],
        ["data", "text/plain"],
      ],
    );
  } finally {
    await graph.close();
  }
});

test("a reloaded source that renames its provider has one entry with the new id", async () => {
  writeJson(join(top, "acme.json"), provider("acme"));
  writeJson(join(top, "billing.json"), provider("billing"));
  const config = writeJson(join(top, "config.json"), {
    providers: [{ path: "acme.json" }, { path: "billing.json" }],
  });
  const graph = await CapabilityGraph.open(config);
  try {
    writeJson(join(top, "acme.json"), provider("acme2"));
    const result = await graph.reload();
    assert.equal(result.ok, true);
    assert.deepEqual(
      result.providers.map((entry) => [entry.providerId, entry.ok && entry.changed]),
      [
        ["acme2", true],
        ["billing", false],
      ],
    );
    const listed = await graph.list({});
    assert.deepEqual(
      listed.items.map((item) => item.id),
      ["acme2::a", "billing::a"],
    );
    const error = await errorOf(() => graph.list({ providers: ["acme"] }));
    assert.equal(error.code, "CG_PROVIDER_NOT_FOUND");
  } finally {
    await graph.close();
  }
});

test("a failed reload names a renamed source by its new id and the failing one by its old", async () => {
  writeJson(join(top, "acme.json"), provider("acme"));
  writeJson(join(top, "billing.json"), provider("billing"));
  const config = writeJson(join(top, "config.json"), {
    providers: [{ path: "acme.json" }, { path: "billing.json" }],
  });
  const graph = await CapabilityGraph.open(config);
  try {
    writeJson(join(top, "acme.json"), provider("acme2"));
    writeJson(join(top, "billing.json"), { providerId: "billing2" });
    const result = await graph.reload();
    assert.equal(result.ok, false);
    assert.deepEqual(
      result.providers.map((entry) => [entry.providerId, entry.ok]),
      [
        ["acme2", true],
        ["billing", false],
      ],
    );
    const listed = await graph.list({});
    assert.deepEqual(
      listed.items.map((item) => item.id),
      ["acme::a", "billing::a"],
    );
  } finally {
    await graph.close();
  }
});

test("no executor is reported before a catalog over maxCatalogEntries", async () => {
  const definition = {
    ...provider("acme"),
    capabilities: [
      { id: "a", name: "A", description: "A." },
      { id: "b", name: "B", description: "B." },
    ],
  };
  const graph = await CapabilityGraph.open({
    providers: [{ definition }],
    budgets: { maxCatalogEntries: 1 },
  });
  try {
    const error = await errorOf(() => graph.match({ request: "anything" }));
    assert.deepEqual(error, {
      code: "CG_MODEL_NOT_CONFIGURED",
      phase: "match",
      nextAction: "check_config",
      message: "No model executor is configured",
    });
  } finally {
    await graph.close();
  }
});
