// The conformance driver over real pipes: the protocol of spec/conformance/driver-protocol.schema.json.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { contractTools, graphFolder, PACKAGE_ROOT } from "./surface-fixtures.js";

const DRIVER = join(PACKAGE_ROOT, "dist", "conformance", "driver.js");

function exchange(messages: object[]): Array<Record<string, unknown>> {
  const done = spawnSync(process.execPath, [DRIVER], {
    input: messages.map((message) => `${JSON.stringify(message)}\n`).join(""),
    encoding: "utf8",
  });
  assert.equal(done.status, 0);
  return done.stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
}

test("the driver answers start, one observation per run in order, and stop", () => {
  const config = graphFolder();
  const answers = exchange([
    { type: "start", protocol: "1.1", suite: "1.1.0" },
    { type: "run", seq: 1, surface: "sdk", step: { op: "open", config } },
    {
      type: "run",
      seq: 2,
      surface: "sdk",
      step: { op: "call", tool: "resolve_capabilities", arguments: { ids: ["acme::missing"] } },
    },
    {
      type: "run",
      seq: 3,
      surface: "tool",
      step: { op: "call", tool: "resolve_capabilities", arguments: { ids: ["acme::missing"] } },
    },
    { type: "run", seq: 4, surface: "tool", step: { op: "tools" } },
    { type: "run", seq: 5, surface: "sdk", step: { op: "tools" } },
    { type: "run", seq: 6, surface: "sdk", step: { op: "close" } },
    { type: "stop" },
  ]);
  const error = {
    code: "CG_CAPABILITY_NOT_FOUND",
    phase: "query",
    message: "Requested capability does not exist",
    nextAction: "refresh",
  };
  assert.deepEqual(answers[0], {
    type: "started",
    protocol: "1.1",
    implementation: {
      name: "typescript",
      language: "TypeScript",
      version: "0.1.0",
      contractVersion: "1.2.0",
    },
    surfaces: ["sdk", "tool"],
  });
  assert.deepEqual(answers[1], {
    type: "observation",
    seq: 1,
    observation: { outcome: "returned", value: null },
  });
  assert.deepEqual(answers[2], {
    type: "observation",
    seq: 2,
    observation: {
      outcome: "raised",
      graphError: true,
      error,
      display: "CG_CAPABILITY_NOT_FOUND (query): Requested capability does not exist",
    },
  });
  assert.deepEqual(answers[3], {
    type: "observation",
    seq: 3,
    observation: { outcome: "returned", value: { ok: false, error } },
  });
  assert.deepEqual(answers[4], {
    type: "observation",
    seq: 4,
    observation: { outcome: "returned", value: contractTools() },
  });
  assert.deepEqual(answers[5], {
    type: "observation",
    seq: 5,
    observation: {
      outcome: "unsupported",
      reason: "the SDK has no tool list; the Tool Adapter has",
    },
  });
  assert.deepEqual(answers[6], {
    type: "observation",
    seq: 6,
    observation: { outcome: "returned", value: null },
  });
  assert.deepEqual(answers[7], { type: "stopped" });
});

test("a line that is not a protocol message is a protocolError, and the driver goes on", () => {
  const answers = exchange([{ type: "nonsense" }, { type: "stop" }]);
  assert.deepEqual(answers, [
    { type: "protocolError", message: "unknown message type" },
    { type: "stopped" },
  ]);
});
