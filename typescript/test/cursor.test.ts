import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { GraphError } from "../src/errors.js";
import { CapabilityGraph } from "../src/graph.js";

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
