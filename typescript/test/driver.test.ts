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

test("a handle names its call until its await or the next open; any other is a protocolError", () => {
  const config = graphFolder();
  const describe = { op: "call", tool: "describe_graph", arguments: {} };
  const answers = exchange([
    { type: "start", protocol: "1.1", suite: "1.4.0" },
    { type: "run", seq: 1, surface: "sdk", step: { op: "open", config } },
    { type: "run", seq: 2, surface: "sdk", step: { ...describe, handle: "done" } },
    { type: "run", seq: 3, surface: "sdk", step: describe }, // by now the started call is over
    { type: "run", seq: 4, surface: "sdk", step: { op: "cancel", handle: "done" } },
    { type: "run", seq: 5, surface: "sdk", step: { op: "await", handle: "done" } },
    { type: "run", seq: 6, surface: "sdk", step: { op: "await", handle: "done" } },
    { type: "run", seq: 7, surface: "sdk", step: { op: "cancel", handle: "done" } },
    { type: "run", seq: 8, surface: "sdk", step: { op: "await", handle: "nobody" } },
    { type: "run", seq: 9, surface: "sdk", step: { ...describe, handle: "old" } },
    { type: "run", seq: 10, surface: "sdk", step: { op: "open", config } },
    { type: "run", seq: 11, surface: "sdk", step: { op: "cancel", handle: "old" } },
    { type: "run", seq: 12, surface: "sdk", step: { op: "close" } },
    { type: "stop" },
  ]);
  const described = answers[3] as { observation: { outcome: string; value: unknown } };
  assert.equal(described.observation.outcome, "returned");
  const unknown = (seq: number, handle: string) => ({
    type: "protocolError",
    seq,
    message: `no started call has the handle '${handle}'`,
  });
  assert.deepEqual(answers.slice(2), [
    { type: "observation", seq: 2, observation: { outcome: "started" } },
    described,
    // cancelling a call that has finished changes nothing; its await answers what it returned
    { type: "observation", seq: 4, observation: { outcome: "returned", value: null } },
    { type: "observation", seq: 5, observation: described.observation },
    unknown(6, "done"), // already awaited
    unknown(7, "done"),
    unknown(8, "nobody"), // never started
    { type: "observation", seq: 9, observation: { outcome: "started" } },
    { type: "observation", seq: 10, observation: { outcome: "returned", value: null } },
    unknown(11, "old"), // started before the last open
    { type: "observation", seq: 12, observation: { outcome: "returned", value: null } },
    { type: "stopped" },
  ]);
});
