// Messages of a value that fails a oneOf/anyOf by an unknown key ([CG-MSG-17]), of the `model`
// section ([CG-MSG-18]) and of a null match context ([CG-CTX-5]), through the public API.
import assert from "node:assert/strict";
import { test } from "node:test";
import { GraphError } from "../src/core/errors.js";
import { CapabilityGraph } from "../src/core/graph.js";

const SECRET_KEY = "zz-secret-7f3a";
const UNKNOWN = { status: "unknown", candidates: [] };

async function openError(config: unknown): Promise<unknown> {
  try {
    const graph = await CapabilityGraph.open(config as never);
    await graph.close();
  } catch (error) {
    assert.ok(error instanceof GraphError, `not a GraphError: ${String(error)}`);
    return error.toJSON();
  }
  assert.fail("no error");
}

const configFault = (message: string) => ({
  code: "CG_CONFIG_INVALID",
  phase: "config",
  nextAction: "check_config",
  message,
});

const VARIANT_CASES: ReadonlyArray<readonly [string, unknown, string]> = [
  [
    "the scripted executor's keys",
    { model: { executor: "scripted", steps: [], [SECRET_KEY]: 1 } },
    "/model has a key that is not allowed (allowed: executor, steps, timeoutMs)",
  ],
  [
    "the lexical executor's keys, given an option of another executor",
    { model: { executor: "lexical", steps: [] } },
    "/model has a key that is not allowed (allowed: executor, timeoutMs)",
  ],
  [
    "the codex executor's keys",
    { model: { executor: "codex", [SECRET_KEY]: 1 } },
    "/model has a key that is not allowed (allowed: executor, model, timeoutMs)",
  ],
  [
    "a file source's keys",
    { providers: [{ path: "a.json", [SECRET_KEY]: "d" }] },
    "/providers/0 has a key that is not allowed (allowed: path, documentRoot)",
  ],
  [
    "a return step's keys",
    { model: { executor: "scripted", steps: [{ return: UNKNOWN, x: 1 }] } },
    "/model/steps/0 has a key that is not allowed (allowed: return)",
  ],
  [
    "the keys of a step under sleepMs",
    // biome-ignore lint/suspicious/noThenProperty: the scripted step language names it so
    { model: { executor: "scripted", steps: [{ sleepMs: 0, then: { return: UNKNOWN, x: 1 } }] } },
    "/model/steps/0/then has a key that is not allowed (allowed: return)",
  ],
  [
    "no keys when two variants fit but for one member each",
    { providers: [{ path: "a.json", definition: {} }] },
    "/providers/0 does not match any allowed shape",
  ],
  [
    "no keys for a step of two kinds",
    { model: { executor: "scripted", steps: [{ return: 1, raiseException: "x" }] } },
    "/model/steps/0 does not match any allowed shape",
  ],
];

for (const [what, config, message] of VARIANT_CASES) {
  test(`an unknown key of a variant names ${what}`, async () => {
    const full = { providers: [], ...(config as object) };
    assert.deepEqual(await openError(full), configFault(message));
  });
}

test("an unknown key of a path document names the keys of a path document", async () => {
  const definition = {
    providerId: "docs",
    name: "Docs",
    version: "1",
    capabilities: [
      {
        id: "a",
        name: "A",
        description: "A capability.",
        documents: [{ id: "d", title: "D", path: "d.md", [SECRET_KEY]: "en" }],
      },
    ],
  };
  assert.deepEqual(await openError({ providers: [{ definition }] }), {
    code: "CG_DEFINITION_INVALID",
    phase: "load",
    nextAction: "check_config",
    message:
      "/capabilities/0/documents/0 has a key that is not allowed (allowed: id, title, role, locale, path)",
  });
});

test("a sleepMs out of range has the grammar's phrases of minimum and maximum", async () => {
  // biome-ignore lint/suspicious/noThenProperty: the scripted step language names it so
  const step = (sleepMs: number) => ({ sleepMs, then: { return: UNKNOWN } });
  assert.deepEqual(
    await openError({ providers: [], model: { executor: "scripted", steps: [step(-1)] } }),
    configFault("/model/steps/0/sleepMs must be at least 0"),
  );
  assert.deepEqual(
    await openError({ providers: [], model: { executor: "scripted", steps: [step(600001)] } }),
    configFault("/model/steps/0/sleepMs must be at most 600000"),
  );
});

test("a null match context is the request's null rule, before scope ([CG-CTX-5])", async () => {
  const graph = await CapabilityGraph.open({ providers: [] });
  try {
    const outcome = await graph.call("match_capabilities", {
      request: "pay",
      context: null,
      providers: ["elsewhere"],
    });
    assert.fail(`no error: ${JSON.stringify(outcome)}`);
  } catch (error) {
    assert.ok(error instanceof GraphError);
    assert.deepEqual(error.toJSON(), {
      code: "CG_INPUT_INVALID",
      phase: "match",
      nextAction: "fix_input",
      message: "/context must not be null (omit the key instead)",
    });
  } finally {
    await graph.close();
  }
});
