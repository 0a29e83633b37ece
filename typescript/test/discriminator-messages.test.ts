// Messages of a value that fails a oneOf with a discriminator ([CG-MSG-21]): the model section is
// judged by the executor its `executor` selects, and a section that selects none names
// `executor`; a oneOf without a discriminator keeps "does not match any allowed shape"
// ([CG-MSG-14]). The same cases as the reference's tests/test_messages.py.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { DISCRIMINATED_UNIONS as CONTRACT_UNIONS } from "../src/_generated/contract-validators.js";
import { DISCRIMINATED_UNIONS, validateConfig } from "../src/_generated/validators.js";
import { GraphError } from "../src/core/errors.js";
import { CapabilityGraph } from "../src/core/graph.js";
import { schemaFaultMessage } from "../src/core/schemas.js";
import { scaled } from "./scale.js";

const SECRET_KEY = "zz-secret-7f3a";
const UNKNOWN = { status: "unknown", candidates: [] };
const EXECUTORS = '"scripted", "lexical", "openai", "codex"';

/** One valid section of each executor, every option given. */
const VALID_MODELS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  scripted: { executor: "scripted", steps: [{ return: UNKNOWN }], timeoutMs: 1000 },
  lexical: { executor: "lexical", timeoutMs: 1000 },
  openai: {
    executor: "openai",
    baseUrl: "https://api.example.com/v1",
    model: "gpt-x",
    apiKeyEnv: "CG_KEY",
    timeoutMs: 1000,
  },
  codex: { executor: "codex", model: "o4-mini", timeoutMs: 1000 },
};
const REQUIRED: Readonly<Record<string, readonly string[]>> = {
  scripted: ["executor", "steps"],
  lexical: ["executor"],
  openai: ["executor", "baseUrl", "model", "apiKeyEnv"],
  codex: ["executor"],
};

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

/** The message of the configuration check alone (no graph opened). */
function configMessage(config: unknown): string | undefined {
  return validateConfig(config)
    ? undefined
    : schemaFaultMessage(config, validateConfig.errors ?? [], validateConfig);
}

test("the discriminators are derived from the schemas", () => {
  const table = Object.fromEntries(
    Object.entries(CONTRACT_UNIONS).map(([title, union]) => [
      title,
      [union.propertyName, union.branches.map((branch) => branch.value)],
    ]),
  );
  assert.deepEqual(table, {
    ModelConfig: ["executor", ["scripted", "lexical", "openai", "codex"]],
    DocumentMetadata: ["kind", ["file", "url"]],
    ReloadResult: ["ok", [true, false]],
    ProviderReloadOutcome: ["ok", [true, false]],
    ToolOutcome: ["ok", [true, false]],
  });
});

test("the run-time validators carry the discriminators of the schemas checked at run time only", () => {
  assert.deepEqual(Object.keys(DISCRIMINATED_UNIONS), ["ModelConfig"]);
});

const BRANCH_CASES: ReadonlyArray<readonly [string, unknown, string]> = [
  [
    "an openai section without baseUrl",
    { executor: "openai", model: "gpt-x" },
    "/model requires the key baseUrl",
  ],
  [
    "an openai section without apiKeyEnv",
    { executor: "openai", baseUrl: "https://a.example/v1", model: "m" },
    "/model requires the key apiKeyEnv",
  ],
  [
    "a scripted section without steps",
    { executor: "scripted", timeoutMs: 5 },
    "/model requires the key steps",
  ],
  [
    "an openai model that is a number",
    { ...VALID_MODELS.openai, model: 5 },
    "/model/model must be a string",
  ],
  [
    "an openai apiKeyEnv that is an array",
    { ...VALID_MODELS.openai, apiKeyEnv: ["K"] },
    "/model/apiKeyEnv must be a string",
  ],
  [
    "a codex model with a space",
    { executor: "codex", model: "a b" },
    "/model/model does not have the required format",
  ],
  [
    "a codex timeoutMs that is a string",
    { executor: "codex", timeoutMs: "5000" },
    "/model/timeoutMs must be an integer",
  ],
  [
    "a lexical timeoutMs of 0",
    { executor: "lexical", timeoutMs: 0 },
    "/model/timeoutMs must be at least 1",
  ],
  [
    "scripted steps that are an object",
    { executor: "scripted", steps: {} },
    "/model/steps must be an array",
  ],
  [
    "a scripted timeoutMs above the maximum",
    { executor: "scripted", steps: [{ return: UNKNOWN }], timeoutMs: 600001 },
    "/model/timeoutMs must be at most 600000",
  ],
  [
    "an openai baseUrl that is not http(s)",
    { ...VALID_MODELS.openai, baseUrl: "ftp://x" },
    "/model/baseUrl does not have the required format (expected: an absolute http or https URL without query or fragment)",
  ],
  [
    "a fault below the branch, in a step",
    // biome-ignore lint/suspicious/noThenProperty: the scripted step language names it so
    { executor: "scripted", steps: [{ sleepMs: -1, then: { return: 1 } }] },
    "/model/steps/0/sleepMs must be at least 0",
  ],
  [
    "a step of no kind",
    { executor: "scripted", steps: [{ sleepMs: 5 }] },
    "/model/steps/0 does not match any allowed shape",
  ],
  [
    "an unknown key",
    { executor: "codex", [SECRET_KEY]: 1 },
    "/model has a key that is not allowed (allowed: executor, model, timeoutMs)",
  ],
];

for (const [what, model, message] of BRANCH_CASES) {
  test(`a fault of the executor chosen is named in its terms: ${what}`, async () => {
    assert.deepEqual(await openError({ providers: [], model }), configFault(message));
  });
}

const NO_BRANCH_CASES: ReadonlyArray<readonly [string, unknown, string]> = [
  ["an unknown executor", { executor: "oracle" }, `/model/executor must be one of: ${EXECUTORS}`],
  [
    "an executor in another case",
    { executor: "OpenAI", model: "gpt-x" },
    `/model/executor must be one of: ${EXECUTORS}`,
  ],
  ["a number", { executor: 5 }, `/model/executor must be one of: ${EXECUTORS}`],
  ["a boolean", { executor: true }, `/model/executor must be one of: ${EXECUTORS}`],
  ["an array", { executor: ["openai"] }, `/model/executor must be one of: ${EXECUTORS}`],
  [
    "no executor",
    { model: "gpt-x", baseUrl: "https://a.example/v1" },
    "/model requires the key executor",
  ],
  ["an empty section", {}, "/model requires the key executor"],
  ["only a key of the caller's", { [SECRET_KEY]: "openai" }, "/model requires the key executor"],
  ["a string section", "openai", "/model must be an object"],
  ["an array section", [{ executor: "openai" }], "/model must be an object"],
  ["a number section", 5, "/model must be an object"],
];

for (const [what, model, message] of NO_BRANCH_CASES) {
  test(`a model section that selects no executor names the discriminator: ${what}`, async () => {
    const error = await openError({ providers: [], model });
    assert.deepEqual(error, configFault(message));
    assert.ok(!JSON.stringify(error).includes(SECRET_KEY));
  });
}

const NO_DISCRIMINATOR_CASES: ReadonlyArray<readonly [string, unknown, string]> = [
  [
    "a source of two kinds",
    { providers: [{ path: "a.json", definition: {} }] },
    "/providers/0 does not match any allowed shape",
  ],
  ["a source of no kind", { providers: [{}] }, "/providers/0 does not match any allowed shape"],
  [
    "a step of two kinds",
    {
      providers: [],
      model: { executor: "scripted", steps: [{ return: 1, raise: { code: "x" } }] },
    },
    "/model/steps/0 does not match any allowed shape",
  ],
];

for (const [what, config, message] of NO_DISCRIMINATOR_CASES) {
  test(`a oneOf without a discriminator keeps the combinator message: ${what}`, async () => {
    assert.deepEqual(await openError(config), configFault(message));
  });
}

test("one fault of one object is chosen as the reference chooses it: the schema's keyword order", () => {
  // An unknown key and a missing key of one object are two faults ([CG-MSG-8]); both
  // implementations report the keyword written first in the schema (additionalProperties).
  assert.equal(
    configMessage({
      providers: [],
      model: { executor: "openai", model: "m", apiKeyEnv: "K", baseURL: "https://x" },
    }),
    "/model has a key that is not allowed (allowed: executor, baseUrl, model, apiKeyEnv, timeoutMs)",
  );
  assert.equal(
    configMessage({ [SECRET_KEY]: 1 }),
    "/ has a key that is not allowed (allowed: providers, scope, documents, budgets, model)",
  );
});

// Any JSON value (no null inside containers: a null is the pure-JSON rule, judged before).
const scalar = fc.oneof(
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 8 }),
);
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    scalar,
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 5 }), tie("value"), { maxKeys: 3 }),
  ),
})).value;

/** Strings each string member cannot take. */
const BAD_TEXT: Readonly<Record<string, readonly string[]>> = {
  baseUrl: ["", "ftp://x", "https://a b/v1", "https://a.example/v1?q=1"],
  model: ["", "a\nb", "m".repeat(257)],
  apiKeyEnv: ["", "1ABC", "A-B"],
};
const BAD_CODEX_MODEL = ["", "a b", "-x", "m".repeat(129)];

/** Values `member` cannot take: another JSON type, or its own type out of its rules. */
function corrupt(executor: string, member: string): fc.Arbitrary<unknown> {
  if (member === "executor")
    return json.filter(
      (value) => !(typeof value === "string" && Object.hasOwn(VALID_MODELS, value)),
    );
  if (member === "timeoutMs")
    return fc.oneof(
      json.filter((value) => !Number.isInteger(value)),
      fc.integer({ max: 0 }),
      fc.integer({ min: 600001, max: 2 ** 53 }),
    );
  if (member === "steps")
    return fc.oneof(
      json.filter((value) => !Array.isArray(value)),
      fc.array(scalar, { minLength: 1, maxLength: 3 }),
    );
  const texts = executor === "codex" ? BAD_CODEX_MODEL : (BAD_TEXT[member] ?? []);
  return fc.oneof(
    json.filter((value) => typeof value !== "string"),
    fc.constantFrom(...texts),
  );
}

const broken = fc.constantFrom(...Object.keys(VALID_MODELS)).chain((executor) =>
  fc.constantFrom(...Object.keys(VALID_MODELS[executor] ?? {})).chain((member) => {
    const required = REQUIRED[executor]?.includes(member) ?? false;
    return fc.oneof(
      ...(required
        ? [fc.constant({ executor, member, deleted: true, value: undefined as unknown })]
        : []),
      corrupt(executor, member).map((value) => ({ executor, member, deleted: false, value })),
    );
  }),
);

test("a single member deleted or corrupted is named (property)", () => {
  fc.assert(
    fc.property(broken, ({ executor, member, deleted, value }) => {
      const model: Record<string, unknown> = structuredClone({ ...VALID_MODELS[executor] });
      if (deleted) delete model[member];
      else model[member] = value;
      const message = configMessage({ providers: [], model });
      assert.ok(message !== undefined, "accepted");
      if (deleted) assert.equal(message, `/model requires the key ${member}`);
      else
        assert.ok(
          message.startsWith(`/model/${member} `) || message.startsWith(`/model/${member}/`),
          message,
        );
    }),
    { numRuns: scaled(300), seed: 20261203 },
  );
});
