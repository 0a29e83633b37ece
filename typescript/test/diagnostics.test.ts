import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { validateMaintenanceReport } from "../src/_generated/contract-validators.js";
import type { HostConfig } from "../src/_generated/types/config.js";
import { diagnose } from "../src/maintenance/diagnose.js";

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), "cg-doctor-"));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

function write(name: string, value: unknown): string {
  const path = join(folder, name);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  return path;
}

const provider = (providerId: string, documents: unknown[] = []) => ({
  providerId,
  name: providerId.toUpperCase(),
  version: "1",
  capabilities: [{ id: "a", name: "A", description: "Capability a.", documents }],
});

async function report(configPath: string) {
  const result = await diagnose(configPath);
  const { error, ...json } = result;
  assert.ok(validateMaintenanceReport(json), "the report is a valid MaintenanceReport");
  return { ...json, error: error?.toJSON() };
}

test("an unreadable configuration fails the config check, names the cause for the host and carries the unreadable error", async () => {
  const result = await report(join(folder, "missing.json"));
  assert.equal(result.status, "failed");
  assert.deepEqual(result.checks[0], {
    id: "config",
    status: "fail",
    message: `Cannot read the configuration: ${join(folder, "missing.json")} does not exist`,
  });
  assert.deepEqual(
    result.checks.slice(1).map((check) => check.status),
    ["skip"],
  );
  assert.deepEqual(result.error, {
    code: "CG_CONFIG_INVALID",
    phase: "config",
    message: "Cannot read a valid bounded JSON configuration file",
    nextAction: "check_config",
  });
});

test("every source is checked even after one fails, and the checks that cannot run are listed as skip", async () => {
  write("good.json", provider("good"));
  const config = write("capability-graph.json", {
    providers: [{ path: "absent.json" }, { path: "good.json" }],
  });
  const result = await report(config);
  assert.equal(result.status, "failed");
  // [CG-MAINT-15]: 2N + 4 checks in one order; documents.0 is listed although source 0 failed.
  assert.deepEqual(
    result.checks.map((check) => [check.id, check.status]),
    [
      ["config", "ok"],
      ["source.0", "fail"],
      ["source.1", "ok"],
      ["relations", "skip"],
      ["documents.0", "skip"],
      ["documents.1", "skip"],
      ["executor", "skip"],
      ["open", "skip"],
    ],
  );
  assert.equal(result.error, undefined);
});

test("a declared document that cannot be read fails its documents check", async () => {
  write("p/guide.md", "# Guide\n");
  write(
    "p/p.json",
    provider("p", [
      { id: "guide", title: "Guide", path: "guide.md" },
      { id: "gone", title: "Gone", path: "gone.md" },
    ]),
  );
  const config = write("capability-graph.json", { providers: [{ path: "p/p.json" }] });
  const result = await report(config);
  assert.equal(result.status, "failed");
  const documents = result.checks.find((check) => check.id === "documents.0");
  assert.equal(documents?.status, "fail");
  assert.equal(
    documents?.message,
    "Provider p: 1 of 2 local documents cannot be read: p::a/gone CG_DOCUMENT_NOT_FOUND",
  );
});

test("a healthy configuration reports ok with the revision the graph opens with", async () => {
  write("p.json", provider("p"));
  const config = write("capability-graph.json", {
    providers: [{ path: "p.json" }],
    model: { executor: "lexical" },
  });
  const result = await report(config);
  assert.equal(result.status, "ok");
  assert.deepEqual(
    result.checks.map((check) => [check.id, check.status]),
    [
      ["config", "ok"],
      ["source.0", "ok"],
      ["relations", "ok"],
      ["documents.0", "skip"],
      ["executor", "ok"],
      ["open", "ok"],
    ],
  );
  assert.match(
    result.checks.at(-1)?.message ?? "",
    /^The graph opens: revision r:[0-9a-f]{16}, 1 provider and 1 capability in scope$/,
  );
});

test("diagnose takes a configuration object as open does, and judges it as it is", async () => {
  const ok = await diagnose({ providers: [{ definition: provider("acme") }] });
  assert.equal(ok.status, "ok");
  assert.deepEqual(
    ok.checks.map((check) => [check.id, check.status]),
    [
      ["config", "ok"],
      ["source.0", "ok"],
      ["relations", "ok"],
      ["documents.0", "skip"],
      ["executor", "skip"],
      ["open", "ok"],
    ],
  );
  // The TypeScript shape of an older call is a configuration with a key it does not allow.
  const old = await diagnose({ configPath: "x.json" } as unknown as HostConfig);
  assert.equal(old.status, "failed");
  assert.equal(old.checks[0]?.id, "config");
  assert.match(old.checks[0]?.message ?? "", /^CG_CONFIG_INVALID: /);
});
