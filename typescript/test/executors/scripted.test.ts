import assert from "node:assert/strict";
import { test } from "node:test";
import type { ScriptedStep } from "../../src/_generated/types/config.js";
import { GraphError } from "../../src/core/errors.js";
import { CapabilityGraph } from "../../src/core/graph.js";

function nested(levels: number): ScriptedStep {
  let step: ScriptedStep = { return: { status: "unknown", candidates: [] } };
  for (let level = 0; level < levels; level += 1) {
    // `then` is the step language's member name (executors.md section 7), not a thenable.
    // biome-ignore lint/suspicious/noThenProperty: the scripted step language names it so
    step = { sleepMs: 0, then: step };
  }
  return step;
}

test("sleepMs steps nested 16 deep are accepted", async () => {
  const graph = await CapabilityGraph.open({
    providers: [],
    model: { executor: "scripted", steps: [nested(16)] },
  });
  await graph.close();
});

test("sleepMs steps nested more than 16 deep are a configuration fault at the step too deep", async () => {
  await assert.rejects(
    CapabilityGraph.open({
      providers: [],
      model: { executor: "scripted", steps: [{ return: 1 }, nested(17)] },
    }),
    (error: unknown) =>
      error instanceof GraphError &&
      error.code === "CG_CONFIG_INVALID" &&
      error.message === `/model/steps/1${"/then".repeat(17)} nests sleepMs steps more than 16 deep`,
  );
});

test("steps are consumed one per match and the last one repeats", async () => {
  const answer = (id: string) => ({
    return: { status: "matched", candidates: [{ id, confidence: 1 }] },
  });
  const graph = await CapabilityGraph.open({
    providers: [
      {
        definition: {
          providerId: "p",
          name: "P",
          version: "1",
          capabilities: [
            { id: "a", name: "A", description: "a" },
            { id: "b", name: "B", description: "b" },
          ],
        },
      },
    ],
    model: { executor: "scripted", steps: [answer("p::a"), answer("p::b")] },
  });
  const ids = [];
  for (let round = 0; round < 3; round += 1)
    ids.push((await graph.match({ request: "x" })).candidates[0]?.id);
  assert.deepEqual(ids, ["p::a", "p::b", "p::b"]);
  await graph.close();
});
