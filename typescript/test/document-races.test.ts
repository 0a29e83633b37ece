// Documents read while a concurrent process swaps entries of the root for links that leave it
// ([CG-DOC-2], [CG-DOC-3], [CG-DOC-4], [CG-DOC-7], [CG-DOC-12], [CG-DOC-14], [CG-DOC-15]).
//
// A flipper (a separate Node process, so its renames really run while the graph's reads are in
// flight) swaps, as fast as it can, one of:
//   - a link in the root retargeted between a file of the root and `../outside.md`;
//   - a regular file of the root replaced by a link to `../outside.md` and back;
//   - a folder of the root replaced by a link to `../outside` (a folder outside) and back.
// Meanwhile read_document runs in a loop through the public API. Every read answers either the
// in-root content or exactly one of the defined errors the swap can cause; never a byte from
// outside the root, never an undefined error. The loops are bounded by read counts.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { CapabilityGraph } from "../src/index.js";
import { expected, outcomeOf } from "./reliability.js";
import { scaled } from "./scale.js";

const SECRET = "SECRET outside the root";
const IN_ROOT = "# Guide in the root\n";
const IN_SUB = "# Guide in the root's folder\n";
const DENIED = expected("CG_DOCUMENT_ACCESS_DENIED", "document");
const NOT_FOUND = expected("CG_DOCUMENT_NOT_FOUND", "document");
const UNREADABLE = expected("CG_DOCUMENT_UNREADABLE", "document");
/** Reader loops running at once, so that several reads are in flight during each swap. */
const READERS = 4;

// <top>/outside.md, <top>/outside/guide.md      outside the root: never read
// <top>/root/guide.md, <top>/root/sub/guide.md  the root's own files
let top: string;
let root: string;
let flipper: ChildProcess | undefined;

beforeEach(() => {
  top = realpathSync(mkdtempSync(join(tmpdir(), "cg-document-races-")));
  root = join(top, "root");
  mkdirSync(join(root, "sub"), { recursive: true });
  mkdirSync(join(top, "outside"));
  writeFileSync(join(top, "outside.md"), SECRET);
  writeFileSync(join(top, "outside", "guide.md"), SECRET);
  writeFileSync(join(root, "guide.md"), IN_ROOT);
  writeFileSync(join(root, "sub", "guide.md"), IN_SUB);
});

afterEach(() => {
  flipper?.kill("SIGKILL");
  flipper = undefined;
  rmSync(top, { recursive: true, force: true });
});

/**
 * The flipper's program: in `root`, repeat the named swap until killed. It says "ready" once the
 * first swap is done. Every step is one system call, so the root is never left half-changed
 * except where the swap itself cannot be atomic (a folder cannot be renamed over a link).
 */
const FLIPPER = `
const fs = require("node:fs");
process.chdir(process.argv[1]);
const kind = process.argv[2];
const replace = (make, name) => { make("swap.tmp"); fs.renameSync("swap.tmp", name); };
const steps = {
  // link.md -> guide.md, then link.md -> ../outside.md (a rename over the link: atomic).
  link: [
    () => replace((tmp) => fs.symlinkSync("guide.md", tmp), "link.md"),
    () => replace((tmp) => fs.symlinkSync("../outside.md", tmp), "link.md"),
  ],
  // file.md is a file of the root (written afresh), then a link to ../outside.md.
  file: [
    () => replace((tmp) => fs.writeFileSync(tmp, fs.readFileSync("guide.md")), "file.md"),
    () => replace((tmp) => fs.symlinkSync("../outside.md", tmp), "file.md"),
  ],
  // sub is the root's folder, then a link to ../outside (missing for a moment in between).
  folder: [
    () => { fs.renameSync("sub", "sub.away"); replace((tmp) => fs.symlinkSync("../outside", tmp), "sub"); },
    () => { fs.unlinkSync("sub"); fs.renameSync("sub.away", "sub"); },
  ],
}[kind];
// A file written afresh for each swap is there far more briefly than a link: it stays 1 ms, so
// that some reads can find it in place from the first look to the last.
const hold = new Int32Array(new SharedArrayBuffer(4));
const holdMs = kind === "file" ? 1 : 0;
steps[0]();
process.stdout.write("ready\\n");
for (let step = 1; ; step += 1) {
  steps[step % 2]();
  if (step % 2 === 0 && holdMs > 0) Atomics.wait(hold, 0, 0, holdMs);
}
`;

async function startFlipper(kind: "link" | "file" | "folder"): Promise<void> {
  const child = spawn(process.execPath, ["-e", FLIPPER, root, kind], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  flipper = child;
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`the flipper exited early (${code})`)));
  });
}

/** A graph whose one document `acme::doc/guide` is `path` under the root. */
function openGraph(path: string): Promise<CapabilityGraph> {
  const capability = {
    id: "doc",
    name: "Doc",
    description: "Has a guide.",
    documents: [{ id: "guide", title: "Guide", path }],
  };
  return CapabilityGraph.open({
    providers: [
      {
        definition: { providerId: "acme", name: "Acme", version: "1", capabilities: [capability] },
        documentRoot: root,
      },
    ],
    documents: { bodies: ["acme"] },
  });
}

/**
 * `reads` reads in each of READERS concurrent loops; how often each outcome was seen (the text
 * for a result, the JSON of an error object otherwise).
 */
async function readInLoops(graph: CapabilityGraph, reads: number): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  const reader = async () => {
    for (let read = 0; read < reads; read += 1) {
      const outcome = await outcomeOf(
        graph.readDocument({ capabilityId: "acme::doc", documentId: "guide" }),
      );
      const text = (outcome as { text?: unknown }).text;
      const key = typeof text === "string" ? text : JSON.stringify(outcome);
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: READERS }, reader));
  return seen;
}

/** Every outcome is the in-root text or an allowed error; both kinds were seen. */
function assertOnlyAllowed(
  seen: Map<string, number>,
  text: string,
  errors: readonly Record<string, string>[],
): void {
  const allowed = new Set([text, ...errors.map((error) => JSON.stringify(error))]);
  const figures = JSON.stringify(Object.fromEntries(seen));
  assert.equal(flipper?.exitCode, null, "the flipper stopped before the reads ended");
  for (const key of seen.keys()) {
    assert.ok(!key.includes(SECRET), `a read returned bytes from outside the root: ${figures}`);
    assert.ok(allowed.has(key), `an outcome the swap cannot explain: ${figures}`);
  }
  // The race really happened: some reads saw the root's file, some saw the swap.
  assert.ok(seen.has(text), `no read saw the root's file: ${figures}`);
  assert.ok(seen.size > 1, `no read saw the swap: ${figures}`);
}

test("a link retargeted between a file of the root and a file outside is read or denied", async () => {
  symlinkSync("guide.md", join(root, "link.md"));
  const graph = await openGraph("link.md");
  try {
    await startFlipper("link");
    const seen = await readInLoops(graph, scaled(400));
    // The link is examined without following it: either target is judged as a whole.
    assertOnlyAllowed(seen, IN_ROOT, [DENIED]);
  } finally {
    await graph.close();
  }
});

test("a file swapped for a link out of the root is read, denied or unreadable", async () => {
  writeFileSync(join(root, "file.md"), IN_ROOT);
  const graph = await openGraph("file.md");
  try {
    await startFlipper("file");
    const seen = await readInLoops(graph, scaled(400));
    // Denied when the link is examined or met by the no-follow open; unreadable when the file
    // examined is no longer the one the path names after the read ([CG-DOC-12]).
    assertOnlyAllowed(seen, IN_ROOT, [DENIED, UNREADABLE]);
  } finally {
    await graph.close();
  }
});

test("a folder swapped for a link out of the root is read, denied, missing or unreadable", async () => {
  const graph = await openGraph("sub/guide.md");
  try {
    await startFlipper("folder");
    const seen = await readInLoops(graph, scaled(400));
    // Denied when the link is examined, not found while the folder is away, unreadable when
    // a folder on the way is no longer the one examined ([CG-DOC-15]).
    assertOnlyAllowed(seen, IN_SUB, [DENIED, NOT_FOUND, UNREADABLE]);
  } finally {
    await graph.close();
  }
});
