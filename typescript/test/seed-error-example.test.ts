import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { packageRoot } from "./support.js";

// The seed's error example, verbatim: the program imports the package by its name, resolved to
// this built package through node_modules like any installed dependency.
const PROGRAM = `import { CapabilityGraph, GraphError } from 'capability-graph';
let graph;
try {
  graph = await CapabilityGraph.open({ providers: [{ definition: {
    providerId: 'acme', name: 'Error example', version: '1', capabilities: []
  } }] });
  await graph.resolve({ ids: ['acme::missing'] });
} catch (error) {
  if (!(error instanceof GraphError)) throw error;
  console.error(JSON.stringify(error.toJSON()));
  process.exitCode = 1;
} finally {
  await graph?.close();
}
`;

test("the seed's error example prints the capability-not-found error object and exits 1", () => {
  const folder = mkdtempSync(join(tmpdir(), "cg-seed-"));
  try {
    mkdirSync(join(folder, "node_modules"));
    symlinkSync(packageRoot, join(folder, "node_modules", "capability-graph"));
    writeFileSync(join(folder, "error.mjs"), PROGRAM);
    const run = spawnSync(process.execPath, ["error.mjs"], { cwd: folder, encoding: "utf8" });
    assert.equal(run.stdout, "");
    assert.equal(
      run.stderr,
      '{"code":"CG_CAPABILITY_NOT_FOUND","phase":"query","message":"Requested capability does not exist","nextAction":"refresh"}\n',
    );
    assert.equal(run.status, 1);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
