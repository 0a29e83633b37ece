import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { packageRoot } from "./support.js";

const script = join(packageRoot, "scripts", "codegen.mjs");

function codegen(...args: string[]) {
  return spawnSync(process.execPath, [script, ...args], { encoding: "utf8" });
}

test("the committed generated files match the spec", () => {
  const run = codegen("--check");
  assert.equal(run.stderr, "");
  assert.equal(run.status, 0);
});

test("codegen --check fails when a generated file was edited", () => {
  const scratch = mkdtempSync(join(tmpdir(), "cg-codegen-"));
  try {
    assert.equal(codegen("--out", scratch).status, 0);
    assert.equal(codegen("--check", "--out", scratch).status, 0);
    appendFileSync(join(scratch, "taxonomy.ts"), "// hand edit\n");
    const run = codegen("--check", "--out", scratch);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /taxonomy\.ts/);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});

test("codegen --check fails on a file codegen does not write", () => {
  const scratch = mkdtempSync(join(tmpdir(), "cg-codegen-"));
  try {
    assert.equal(codegen("--out", scratch).status, 0);
    writeFileSync(join(scratch, "stray.ts"), "export {};\n");
    const run = codegen("--check", "--out", scratch);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /stray\.ts \(not generated\)/);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
