// Cursor fuzzing (fast-check), through the public API: whatever text is given as a cursor, the
// answer is the next page only for the cursor the graph issued; anything else is CG_INPUT_INVALID
// with the cursor message ([CG-CUR-2], [CG-CUR-6], [CG-CUR-7]) or, for a character outside the
// schema's pattern, the format message ([CG-MSG-5]) — never another error, never a page.
import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import { test } from "node:test";
import * as jcs from "canonicalize";
import fc from "fast-check";
import { CapabilityGraph, GraphError } from "../../src/index.js";
import { scaled } from "../scale.js";

const CONFIG = {
  providers: [
    {
      definition: {
        providerId: "acme",
        name: "Acme",
        version: "1",
        capabilities: ["a", "b", "c", "d"].map((id) => ({
          id,
          name: id.toUpperCase(),
          description: `Capability ${id}.`,
        })),
      },
    },
  ],
};
const canonicalize = jcs.default as unknown as (input: unknown) => string;
const CURSOR_MESSAGE = "Cursor is malformed, foreign or stale; restart listing without it";
const FORMAT_MESSAGE =
  "/cursor does not have the required format (expected: the nextCursor of a previous page)";

async function page(graph: CapabilityGraph, cursor: string): Promise<unknown> {
  try {
    return { result: await graph.call("list_capabilities", { limit: 2, cursor }) };
  } catch (error) {
    if (error instanceof GraphError) return { error: error.toJSON() };
    throw error;
  }
}

function refused(answer: unknown): boolean {
  const error = (answer as { error?: { code?: string; message?: string } }).error;
  return (
    error?.code === "CG_INPUT_INVALID" &&
    (error.message === CURSOR_MESSAGE ||
      error.message === FORMAT_MESSAGE ||
      error.message === "/cursor must have at least 1 characters")
  );
}

/** The MAC of a payload under the configuration's key, as CG-CUR-5 writes it. */
function sign(payload: string): string {
  const identity = { providers: [{ definition: true }] };
  const key = createHash("sha256")
    .update(
      Buffer.concat([
        Buffer.from("capability-graph list cursor key"),
        Buffer.from([0]),
        Buffer.from(canonicalize(identity)),
      ]),
    )
    .digest();
  const mac = createHmac("sha256", key).update(payload).digest().subarray(0, 16);
  return Buffer.concat([mac, Buffer.from(payload)]).toString("base64url");
}

test("a text given as a cursor is a page only when it is the issued cursor", async () => {
  const graph = await CapabilityGraph.open(CONFIG);
  try {
    const issued = (await graph.list({ limit: 2 })).nextCursor as string;
    const edited = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.base64String({ maxLength: 120 }),
      fc
        .tuple(fc.nat(issued.length - 1), fc.constantFrom(..."AZaz09-_=+/."))
        .map(([at, char]) => issued.slice(0, at) + char + issued.slice(at + 1)),
      fc.constantFrom("=", "==", "A", "AA").map((tail) => issued + tail),
      fc.nat(issued.length - 1).map((cut) => issued.slice(0, cut)),
    );
    await fc.assert(
      fc.asyncProperty(edited, async (cursor) => {
        const answer = await page(graph, cursor);
        if (cursor === issued) assert.ok("result" in (answer as object));
        else assert.ok(refused(answer), JSON.stringify(answer));
      }),
      { numRuns: scaled(400), seed: 20261202 },
    );
  } finally {
    await graph.close();
  }
});

test("a payload with a valid MAC is accepted only byte for byte as the graph writes it", async () => {
  const graph = await CapabilityGraph.open(CONFIG);
  try {
    const issued = (await graph.list({ limit: 2 })).nextCursor as string;
    const written = Buffer.from(issued, "base64url").subarray(16).toString();
    const payload = JSON.parse(written) as Record<string, unknown>;
    const forged = fc.oneof(
      fc
        .record({ o: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(2)) })
        .map((edit) => JSON.stringify({ ...payload, ...edit })),
      fc.constantFrom(
        written.replace('"o":2', '"o":2.0'),
        written.replace('"o":2', '"o":02'),
        written.replace('"o":2', '"o":4'),
        written.replace('"o":2', '"o":18446744073709551617'),
        written.replace("{", "{ "),
        written.replace('"v":2', '"v":1'),
        written.replace("}", ',"x":1}'),
        JSON.stringify({ o: payload.o, f: payload.f, r: payload.r, v: payload.v }),
      ),
    );
    await fc.assert(
      fc.asyncProperty(forged, async (text) => {
        const answer = await page(graph, sign(text));
        if (text === written) assert.ok("result" in (answer as object));
        else assert.ok(refused(answer), `${text}: ${JSON.stringify(answer)}`);
      }),
      { numRuns: scaled(300), seed: 20261202 },
    );
  } finally {
    await graph.close();
  }
});
