// The operation table against the handlers (as the Python reference's table test): every
// operation of the generated table has a handler module in src/core/operations/ named after its
// SDK method (kebab-case: read_document -> read-document.ts), whose one export is the handler the
// record dispatches to; no handler module lacks a table entry; the record has exactly the tools.
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { OPERATIONS } from "../src/_generated/operations.js";
import { HANDLERS } from "../src/core/operations/index.js";
import { packageRoot } from "./support.js";

/** The modules of core/operations/ that are no operation's handler. */
const SHARED = new Set(["index", "common", "requests", "handlers"]);

const moduleName = (method: string) => method.replaceAll("_", "-");

const handlerModules = () =>
  readdirSync(join(packageRoot, "src", "core", "operations"))
    .filter((name) => name.endsWith(".ts"))
    .map((name) => name.slice(0, -".ts".length))
    .filter((name) => !SHARED.has(name))
    .sort();

test("every operation of the table has a handler module, and every handler module an operation", () => {
  const expected = OPERATIONS.map((operation) => moduleName(operation.sdk.method)).sort();
  assert.deepEqual(handlerModules(), expected);
});

test("the handler record has exactly the table's tools", () => {
  assert.deepEqual(
    Object.keys(HANDLERS).sort(),
    OPERATIONS.map((operation) => operation.tool).sort(),
  );
});

test("each handler module exports one function, the record's handler of its tool", async () => {
  for (const operation of OPERATIONS) {
    const file = join(
      packageRoot,
      "dist",
      "src",
      "core",
      "operations",
      `${moduleName(operation.sdk.method)}.js`,
    );
    const exported: Record<string, unknown> = await import(pathToFileURL(file).href);
    const values = Object.values(exported);
    assert.equal(values.length, 1, `${operation.tool}: one export`);
    assert.equal(values[0], HANDLERS[operation.tool], `${operation.tool}: the record's handler`);
  }
});
