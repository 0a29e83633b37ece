// The suite's maintenance vectors (conformance/vectors/capability-graph/cli, commands init,
// mcp-install, mcp-uninstall) run in-process against the maintenance functions, with the
// working folder laid out as spec/conformance/README.md says: the fixture copied, the
// configuration patched, `{config}` replaced by its absolute path. The CLI process itself is
// the dispatcher's; this pins the functions it calls to the suite's expectations.
import assert from "node:assert/strict";
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import type { MaintenanceIo } from "../../src/maintenance/report.js";
import { runInit } from "../../src/surfaces/cli/init.js";
import { runMcpInstall, runMcpUninstall } from "../../src/surfaces/cli/mcp-install.js";
import { captureIo, freshFolder, REPOSITORY, reportOf } from "./maintenance-helpers.js";

const COMMANDS: Readonly<
  Record<string, (args: readonly string[], io: MaintenanceIo) => Promise<number>>
> = {
  init: runInit,
  "mcp-install": runMcpInstall,
  "mcp-uninstall": runMcpUninstall,
};

interface Vector {
  id: string;
  fixture: string;
  config?: Record<string, unknown>;
  argv: string[];
  /** Commands run first in the same folder, each exiting 0 (spec/conformance/README.md). */
  setup?: string[][];
  expect: {
    exit: {
      code: number;
      stdoutEmpty?: boolean;
      stdoutNonEmpty?: boolean;
      stderrEmpty?: boolean;
      stderrNonEmpty?: boolean;
      stdoutJson?: unknown;
      files?: Record<string, "unchanged" | "absent" | "present">;
    };
  };
  forbid?: string[];
}

const VECTOR_FOLDER = path.join(REPOSITORY, "conformance", "vectors", "capability-graph", "cli");
const vectors: Vector[] = readdirSync(VECTOR_FOLDER)
  .filter((name) => name.endsWith(".json"))
  .map((name) => JSON.parse(readFileSync(path.join(VECTOR_FOLDER, name), "utf8")) as Vector)
  .filter((vector) => Array.isArray(vector.argv) && Object.hasOwn(COMMANDS, vector.argv[0] ?? ""));

test("the suite has maintenance vectors for init, mcp-install and mcp-uninstall", () => {
  const commands = new Set(vectors.map((vector) => vector.argv[0]));
  assert.deepEqual([...commands].sort(), ["init", "mcp-install", "mcp-uninstall"]);
});

for (const vector of vectors) {
  test(`vector ${vector.id}`, async () => {
    const cwd = workingFolder(vector);
    const configFile = path.join(cwd, "capability-graph.json");
    const invoke = async (argv: readonly string[]) => {
      const [command, ...args] = argv.map((arg) => arg.replaceAll("{config}", configFile));
      const run = COMMANDS[command ?? ""];
      assert.ok(run !== undefined);
      const io = captureIo(cwd);
      return { exit: await run(args, io), io };
    };
    for (const command of vector.setup ?? []) {
      const setup = await invoke(command);
      assert.equal(setup.exit, 0, `setup ${command[0]}: ${setup.io.out}${setup.io.err}`);
    }
    const before = snapshot(cwd);
    const { exit, io } = await invoke(vector.argv);
    const expected = vector.expect.exit;
    assert.equal(exit, expected.code, io.out + io.err);
    if (expected.stdoutEmpty === true) assert.equal(io.out, "");
    if (expected.stdoutNonEmpty === true) assert.notEqual(io.out.trim(), "");
    if (expected.stderrEmpty === true) assert.equal(io.err, "");
    if (expected.stderrNonEmpty === true) assert.notEqual(io.err, "");
    if (expected.stdoutJson !== undefined) {
      const report = reportOf(io);
      assert.ok(
        matches(expected.stdoutJson, report),
        `${JSON.stringify(report)} matches ${JSON.stringify(expected.stdoutJson)}`,
      );
    }
    for (const [file, state] of Object.entries(expected.files ?? {})) {
      const full = path.join(cwd, file);
      if (state === "absent") assert.equal(existsSync(full), false, `${file} is absent`);
      if (state === "present") assert.equal(existsSync(full), true, `${file} is present`);
      if (state === "unchanged")
        assert.deepEqual(readFileSync(full), before.get(file), `${file} is unchanged`);
    }
    for (const forbidden of vector.forbid ?? []) {
      assert.ok(!io.out.includes(forbidden) && !io.err.includes(forbidden), `no ${forbidden}`);
    }
  });
}

function workingFolder(vector: Vector): string {
  const cwd = freshFolder();
  const fixture = path.join(REPOSITORY, "conformance", "fixtures", vector.fixture);
  cpSync(fixture, cwd, {
    recursive: true,
    filter: (source) => !["README.md", "fixture.json"].includes(path.relative(fixture, source)),
  });
  if (vector.config !== undefined) {
    const configFile = path.join(cwd, "capability-graph.json");
    const base = existsSync(configFile) ? JSON.parse(readFileSync(configFile, "utf8")) : {};
    writeFileSync(configFile, JSON.stringify(mergePatch(base, vector.config)));
  }
  return cwd;
}

/** Every regular file of the folder by relative path, to compare "unchanged" files with. */
function snapshot(cwd: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const entry of readdirSync(cwd, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    files.set(path.relative(cwd, full), readFileSync(full));
  }
  return files;
}

/** RFC 7386 JSON Merge Patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/** The suite's Pattern (spec/conformance/vector.schema.json), for the matchers these vectors use. */
function matches(pattern: unknown, observed: unknown): boolean {
  if (Array.isArray(pattern)) {
    return (
      Array.isArray(observed) &&
      observed.length === pattern.length &&
      pattern.every((item, index) => matches(item, observed[index]))
    );
  }
  if (!isObject(pattern)) return pattern === observed;
  const keys = Object.keys(pattern);
  if (keys.length === 1 && keys[0]?.startsWith("$")) {
    const argument = pattern[keys[0]];
    switch (keys[0]) {
      case "$contains":
        return Array.isArray(observed) && observed.some((item) => matches(argument, item));
      case "$length":
        return (
          (Array.isArray(observed) || typeof observed === "string") && observed.length === argument
        );
      case "$type":
        return argument === "array" ? Array.isArray(observed) : typeof observed === argument;
      default:
        throw new Error("a matcher these vectors do not use");
    }
  }
  return (
    isObject(observed) &&
    keys.every((key) => Object.hasOwn(observed, key) && matches(pattern[key], observed[key]))
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
