// The codex executor with fake `codex` programs on PATH (executors.md section 10): the
// prerequisites (version floor, sandbox probe), the run and its answer file, the projection of
// failed runs, and the process-tree kill on deadline, cancellation and close.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { describe, test } from "node:test";
import { CodexExecutor, codexExecutorFactory, meetsFloor } from "../../src/core/executors/codex.js";
import { processIsRunning } from "../../src/core/executors/process-tree.js";
import { MATCH_INSTRUCTIONS } from "../../src/core/executors/prompt.js";
import { ExecutorError } from "../../src/core/executors/protocol.js";
import { executorFactory } from "../../src/core/executors/registry.js";
import {
  answerWith,
  type FakeCodex,
  type FakeCodexOptions,
  fakeCodex,
  hangWithGrandchild,
} from "./fake-codex.js";
import { makeJob } from "./helpers.js";

const MATCHED = {
  status: "matched",
  candidates: [{ id: "billing::invoice.create", confidence: 0.8, reason: "fits" }],
};

function executorFor(fake: FakeCodex, model?: string): CodexExecutor {
  return new CodexExecutor(model === undefined ? {} : { model }, () => ({ PATH: fake.searchPath }));
}

async function raised(promise: Promise<unknown>): Promise<ExecutorError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ExecutorError, "an ExecutorError");
    return error;
  }
  assert.fail("the executor answered instead of raising");
}

function assertCode(error: ExecutorError, code: string, nextAction?: string): void {
  assert.deepEqual({ code: error.code, nextAction: error.nextAction }, { code, nextAction });
}

async function outcomeOf(options: FakeCodexOptions, job = makeJob()): Promise<ExecutorError> {
  return raised(executorFor(fakeCodex(options)).execute(job));
}

async function until(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 1000 && !condition(); attempt += 1) {
    await new Promise((wake) => setTimeout(wake, 10));
  }
  assert.ok(condition(), "the condition became true");
}

function grandchildOf(fake: FakeCodex): number {
  const pid = Number(fake.recorded("grandchild.pid"));
  assert.ok(Number.isInteger(pid) && pid > 0, "the fake recorded its grandchild");
  return pid;
}

describe("codex executor: prerequisites", () => {
  test("no codex on PATH is CG_MODEL_UNAVAILABLE with check_config", async () => {
    const executor = new CodexExecutor({}, () => ({ PATH: "/nonexistent-folder" }));
    assertCode(await raised(executor.execute(makeJob())), "CG_MODEL_UNAVAILABLE", "check_config");
  });

  test("a version below 0.46.0 is CG_MODEL_EXECUTOR_UNSAFE and nothing else runs", async () => {
    const fake = fakeCodex({ version: "0.45.9" });
    assertCode(await raised(executorFor(fake).execute(makeJob())), "CG_MODEL_EXECUTOR_UNSAFE");
    assert.deepEqual(fake.calls(), ["--version"]);
  });

  test("an unparseable version is CG_MODEL_EXECUTOR_UNSAFE", async () => {
    assertCode(await outcomeOf({ version: "dev-build" }), "CG_MODEL_EXECUTOR_UNSAFE");
  });

  test("a failing --version is CG_MODEL_EXECUTOR_UNSAFE", async () => {
    assertCode(
      await outcomeOf({ versionScript: 'echo "codex-cli 9.9.9"; exit 1' }),
      "CG_MODEL_EXECUTOR_UNSAFE",
    );
  });

  test("a sandbox probe that fails is CG_MODEL_EXECUTOR_UNSAFE and the model is never run", async () => {
    const fake = fakeCodex({ sandboxExit: 1, exec: answerWith(JSON.stringify(MATCHED)) });
    assertCode(await raised(executorFor(fake).execute(makeJob())), "CG_MODEL_EXECUTOR_UNSAFE");
    assert.deepEqual(fake.calls(), ["--version", "sandbox linux -- true"]);
  });

  test("a probe that cannot start is CG_MODEL_UNAVAILABLE with check_config", async () => {
    const fake = fakeCodex({});
    writeFileSync(
      fake.program,
      `#!/nonexistent/interpreter\n${readFileSync(fake.program, "utf8")}`,
    );
    assertCode(
      await raised(executorFor(fake).execute(makeJob())),
      "CG_MODEL_UNAVAILABLE",
      "check_config",
    );
  });

  test("the version floor compares X.Y.Z numerically", () => {
    assert.equal(meetsFloor("codex-cli 0.46.0"), true);
    assert.equal(meetsFloor("codex-cli 0.100.0"), true);
    assert.equal(meetsFloor("codex-cli 1.0.0"), true);
    assert.equal(meetsFloor("codex-cli 0.45.99"), false);
    assert.equal(meetsFloor("codex-cli 0.46"), false);
    assert.equal(meetsFloor("codex"), false);
  });

  test("the version is 1 to 6 digits per part and not part of a longer dotted number", () => {
    assert.equal(meetsFloor("codex-cli 1.2.3.4"), false);
    assert.equal(meetsFloor("codex-cli 0.46.0.1 then 0.50.0"), true);
    assert.equal(meetsFloor("codex-cli 1234567.0.0"), false);
    assert.equal(meetsFloor("codex-cli 0.999999.0"), true);
  });

  test("a passed check is remembered for the same binary", async () => {
    const fake = fakeCodex({ exec: answerWith(JSON.stringify(MATCHED)) });
    const executor = executorFor(fake);
    await executor.execute(makeJob());
    await executor.execute(makeJob());
    assert.deepEqual(
      fake.calls().map((call) => call.split(" ")[0]),
      ["--version", "sandbox", "exec", "exec"],
    );
  });

  test("a changed binary is probed again", async () => {
    const fake = fakeCodex({ exec: answerWith(JSON.stringify(MATCHED)) });
    const executor = executorFor(fake);
    await executor.execute(makeJob());
    fake.rewrite({ version: "0.45.0", exec: answerWith(JSON.stringify(MATCHED)) });
    assertCode(await raised(executor.execute(makeJob())), "CG_MODEL_EXECUTOR_UNSAFE");
  });
});

describe("codex executor: a run", () => {
  test("runs codex exec read-only in an empty work folder with the schema and the prompt on stdin", async () => {
    const fake = fakeCodex({ exec: answerWith(JSON.stringify(MATCHED)) });
    assert.deepEqual(await executorFor(fake, "o4-mini").execute(makeJob()), MATCHED);
    const exec = fake.calls()[2]?.split(" ") ?? [];
    const work = fake.recorded("work.txt")?.trim() ?? "";
    const folder = path.dirname(work);
    assert.deepEqual(exec, [
      "exec",
      "--sandbox",
      "read-only",
      "--skip-git-repo-check",
      "--cd",
      work,
      "--color",
      "never",
      "--output-schema",
      path.join(folder, "schema.json"),
      "--output-last-message",
      path.join(folder, "last-message.json"),
      "--model",
      "o4-mini",
      "-",
    ]);
    assert.equal(path.basename(work), "work");
    assert.equal(fake.recorded("cwd.txt")?.trim(), work);
    assert.equal(fake.recorded("work-listing.txt"), "");
    const stdin = fake.recorded("stdin.txt") ?? "";
    assert.ok(stdin.startsWith(`${MATCH_INSTRUCTIONS}\n\n`));
    assert.deepEqual(
      JSON.parse(stdin.slice(MATCH_INSTRUCTIONS.length + 2)).request,
      "create an invoice",
    );
  });

  test("the temporary folder is removed afterwards", async () => {
    const fake = fakeCodex({ exec: answerWith(JSON.stringify(MATCHED)) });
    await executorFor(fake).execute(makeJob());
    const work = fake.recorded("work.txt")?.trim() ?? "";
    assert.notEqual(work, "");
    assert.equal(existsSync(path.dirname(work)), false);
  });

  test("without a model option no --model is passed", async () => {
    const fake = fakeCodex({ exec: answerWith(JSON.stringify(MATCHED)) });
    await executorFor(fake).execute(makeJob());
    assert.equal(fake.calls()[2]?.includes("--model"), false);
  });

  test("a candidate whose reason is empty loses its reason", async () => {
    const answer = {
      status: "matched",
      candidates: [{ id: "billing::invoice.create", confidence: 0.5, reason: "" }],
    };
    const fake = fakeCodex({ exec: answerWith(JSON.stringify(answer)) });
    assert.deepEqual(await executorFor(fake).execute(makeJob()), {
      status: "matched",
      candidates: [{ id: "billing::invoice.create", confidence: 0.5 }],
    });
  });

  test("a last message that is not JSON is CG_MODEL_OUTPUT_INVALID", async () => {
    assertCode(
      await outcomeOf({ exec: answerWith("I think billing fits.") }),
      "CG_MODEL_OUTPUT_INVALID",
    );
  });

  test("a missing last-message file is CG_MODEL_OUTPUT_INVALID", async () => {
    assertCode(await outcomeOf({ exec: "exit 0" }), "CG_MODEL_OUTPUT_INVALID");
  });

  test("a last message that is not UTF-8 is CG_MODEL_OUTPUT_INVALID", async () => {
    assertCode(
      await outcomeOf({ exec: `printf '{\\377}' > "$answer"; exit 0` }),
      "CG_MODEL_OUTPUT_INVALID",
    );
  });

  // CG-MODEL-26: texts that one runtime's JSON parser reads and another refuses.
  const UNKNOWN_TEXT = '{"status":"unknown","candidates":[]}';
  for (const [name, text] of [
    ["a byte order mark", `\ufeff${UNKNOWN_TEXT}`],
    ["NaN", JSON.stringify(MATCHED).replace("0.8", "NaN")],
    ["a duplicate member", '{"status":"matched","status":"unknown","candidates":[]}'],
    ["U+3000 before it", `\u3000${UNKNOWN_TEXT}`],
    ["U+00A0 after it", `${UNKNOWN_TEXT}\u00a0`],
    ["U+0085 after it", `${UNKNOWN_TEXT}\u0085`],
  ]) {
    test(`a last message with ${name} is CG_MODEL_OUTPUT_INVALID`, async () => {
      assertCode(await outcomeOf({ exec: answerWith(text ?? "") }), "CG_MODEL_OUTPUT_INVALID");
    });
  }

  test("a last message with JSON whitespace around it is the answer", async () => {
    const fake = fakeCodex({ exec: answerWith(` \t\r\n${UNKNOWN_TEXT}\n`) });
    assert.deepEqual(await executorFor(fake).execute(makeJob()), {
      status: "unknown",
      candidates: [],
    });
  });

  test("a last message over maxModelOutputBytes is CG_MODEL_OUTPUT_TOO_LARGE", async () => {
    const answer = JSON.stringify(MATCHED);
    const job = makeJob({ maxOutputBytes: Buffer.byteLength(answer) - 1 });
    assertCode(await outcomeOf({ exec: answerWith(answer) }, job), "CG_MODEL_OUTPUT_TOO_LARGE");
  });

  test("a last message of exactly maxModelOutputBytes is read", async () => {
    const answer = JSON.stringify(MATCHED);
    const fake = fakeCodex({ exec: answerWith(answer) });
    const job = makeJob({ maxOutputBytes: Buffer.byteLength(answer) });
    assert.deepEqual(await executorFor(fake).execute(job), MATCHED);
  });

  // Whatever the run leaves in place of its answer file, the answer is decided at once, with
  // bounded I/O, and the temporary folder is removed (executors.md section 10: only a regular
  // file is read; a link or fifo planted in T is neither followed nor waited on).
  const planted: Array<[string, string, string, boolean]> = [
    ["a fifo", 'mkfifo "$answer"', "CG_MODEL_OUTPUT_INVALID", false],
    [
      "a symbolic link to a valid answer",
      `printf '%s' '${JSON.stringify(MATCHED)}' > "$here/real.json"; ln -s "$here/real.json" "$answer"`,
      "CG_MODEL_OUTPUT_INVALID",
      false,
    ],
    [
      "a symbolic link to a fifo",
      'mkfifo "$here/pipe"; ln -s "$here/pipe" "$answer"',
      "CG_MODEL_OUTPUT_INVALID",
      false,
    ],
    [
      "a character device (/dev/zero's numbers)",
      'mknod "$answer" c 1 5',
      "CG_MODEL_OUTPUT_INVALID",
      true,
    ],
    ["a folder", 'mkdir "$answer"', "CG_MODEL_OUTPUT_INVALID", false],
    ["a sparse file of 1 TiB", 'truncate -s 1T "$answer"', "CG_MODEL_OUTPUT_TOO_LARGE", false],
    [
      "a sparse file under the limit (NUL bytes)",
      'truncate -s 100 "$answer"',
      "CG_MODEL_OUTPUT_INVALID",
      false,
    ],
  ];
  for (const [what, plant, code, needsRoot] of planted) {
    test(`${what} as the answer file is ${code} at once, the folder removed`, {
      skip: needsRoot && process.getuid?.() !== 0 ? "creating a device needs root" : false,
      timeout: 20_000,
    }, async () => {
      const fake = fakeCodex({ exec: `${plant}; exit 0` });
      const started = performance.now();
      const error = await raised(executorFor(fake).execute(makeJob()));
      assert.ok(performance.now() - started < 10_000, "decided long before the deadline");
      assertCode(error, code);
      const work = fake.recorded("work.txt")?.trim() ?? "";
      assert.notEqual(work, "");
      assert.equal(existsSync(path.dirname(work)), false);
    });
  }

  const failures: Array<[string, string, string, string | undefined]> = [
    [
      "a rate limit is retry",
      "ERROR: 429 Too Many Requests: rate limit reached",
      "CG_MODEL_UNAVAILABLE",
      "retry",
    ],
    [
      "an overloaded service is retry",
      "error: model overloaded (529)",
      "CG_MODEL_UNAVAILABLE",
      "retry",
    ],
    [
      "a missing login ('not logged in') is check_config",
      "Error: you are not logged in",
      "CG_MODEL_UNAVAILABLE",
      "check_config",
    ],
    [
      "a login problem is check_config",
      "Error: not logged in; run codex login",
      "CG_MODEL_UNAVAILABLE",
      "check_config",
    ],
    [
      "a 401 is check_config",
      "unexpected status 401 Unauthorized",
      "CG_MODEL_UNAVAILABLE",
      "check_config",
    ],
    [
      "a context overflow is CG_MODEL_CONTEXT_EXCEEDED",
      "input exceeds the context window of this model",
      "CG_MODEL_CONTEXT_EXCEEDED",
      undefined,
    ],
    ["any other failure is retry", "something broke", "CG_MODEL_UNAVAILABLE", "retry"],
  ];
  for (const [title, output, code, nextAction] of failures) {
    test(`a non-zero exit: ${title}`, async () => {
      assertCode(await outcomeOf({ exec: `echo "${output}" >&2; exit 1` }), code, nextAction);
    });
  }

  // Every alternative of the annex's three patterns (executors.md section 10), one run each: the
  // text also holds a word of every later pattern, so only the first matching pattern, tried in
  // the annex's order, gives the expected outcome. A text matching none is retry.
  const RETRY = ["CG_MODEL_UNAVAILABLE", "retry"] as const;
  const CREDENTIALS = ["CG_MODEL_UNAVAILABLE", "check_config"] as const;
  const CONTEXT = ["CG_MODEL_CONTEXT_EXCEEDED", undefined] as const;
  const LATER_THAN_RETRY = "; not logged in; context window full";
  const LATER_THAN_CREDENTIALS = "; context window full";
  const patterns: Array<[string, readonly [string, string | undefined]]> = [
    [`Rate limit reached${LATER_THAN_RETRY}`, RETRY],
    [`rate-limited${LATER_THAN_RETRY}`, RETRY],
    [`ratelimit${LATER_THAN_RETRY}`, RETRY],
    [`Session limit reached for this plan${LATER_THAN_RETRY}`, RETRY],
    [`TOO MANY REQUESTS${LATER_THAN_RETRY}`, RETRY],
    [`monthly quota exhausted${LATER_THAN_RETRY}`, RETRY],
    [`the model is overloaded${LATER_THAN_RETRY}`, RETRY],
    [`status 429${LATER_THAN_RETRY}`, RETRY],
    [`status 529${LATER_THAN_RETRY}`, RETRY],
    [`please log in${LATER_THAN_CREDENTIALS}`, CREDENTIALS],
    [`run codex login${LATER_THAN_CREDENTIALS}`, CREDENTIALS],
    [`You are logged out${LATER_THAN_CREDENTIALS}`, CREDENTIALS],
    [`AUTH token expired${LATER_THAN_CREDENTIALS}`, CREDENTIALS],
    [`unauthorized${LATER_THAN_CREDENTIALS}`, CREDENTIALS],
    [`unauthorised${LATER_THAN_CREDENTIALS}`, CREDENTIALS],
    [`status 401${LATER_THAN_CREDENTIALS}`, CREDENTIALS],
    [`status 403${LATER_THAN_CREDENTIALS}`, CREDENTIALS],
    [`missing api key${LATER_THAN_CREDENTIALS}`, CREDENTIALS],
    [`bad API_KEY${LATER_THAN_CREDENTIALS}`, CREDENTIALS],
    [`invalid apikey${LATER_THAN_CREDENTIALS}`, CREDENTIALS],
    [`no credentials found${LATER_THAN_CREDENTIALS}`, CREDENTIALS],
    ["prompt exceeds the context length", CONTEXT],
    ["context_window exceeded", CONTEXT],
    ["contextwindow exceeded", CONTEXT],
    ["the maximum context of this model is 8192 tokens", CONTEXT],
    // Whole words only for the status numbers; no pattern at all is retry.
    ["request 4290 failed; code 14010", RETRY],
    ["status 4010; context window full", CONTEXT],
  ];
  for (const [output, [code, nextAction]] of patterns) {
    test(`a non-zero exit printing "${output}" is ${code} ${nextAction ?? ""}`, async () => {
      assertCode(await outcomeOf({ exec: `echo '${output}' >&2; exit 1` }), code, nextAction);
    });
  }

  test("a pattern is found on stdout as well as on stderr", async () => {
    assertCode(
      await outcomeOf({ exec: "echo 'maximum context exceeded'; exit 1" }),
      "CG_MODEL_CONTEXT_EXCEEDED",
    );
  });
});

describe("codex executor: stopping the process tree", () => {
  test("the deadline is CG_MODEL_TIMEOUT and the grandchild is dead when the error arrives", async () => {
    const fake = fakeCodex({ exec: hangWithGrandchild(false) });
    const job = makeJob({ deadline: performance.now() + 3000 });
    assertCode(await raised(executorFor(fake).execute(job)), "CG_MODEL_TIMEOUT");
    assert.equal(processIsRunning(grandchildOf(fake)), false);
  });

  test("cancelling mid-run is CG_MODEL_CANCELLED and the grandchild is dead when the error arrives", async () => {
    const fake = fakeCodex({ exec: hangWithGrandchild(false) });
    const controller = new AbortController();
    const running = executorFor(fake).execute(makeJob({ signal: controller.signal }));
    await until(() => fake.recorded("grandchild.pid") !== undefined);
    const grandchild = grandchildOf(fake);
    assert.equal(processIsRunning(grandchild), true);
    controller.abort();
    assertCode(await raised(running), "CG_MODEL_CANCELLED");
    assert.equal(processIsRunning(grandchild), false);
  });

  test("a tree that ignores TERM is killed after the grace period", async () => {
    const fake = fakeCodex({ exec: hangWithGrandchild(true) });
    const controller = new AbortController();
    const running = executorFor(fake).execute(makeJob({ signal: controller.signal }));
    await until(() => fake.recorded("grandchild.pid") !== undefined);
    controller.abort();
    assertCode(await raised(running), "CG_MODEL_CANCELLED");
    assert.equal(processIsRunning(grandchildOf(fake)), false);
  });

  test("close stops a run in progress and kills its tree before it resolves", async () => {
    const fake = fakeCodex({ exec: hangWithGrandchild(false) });
    const executor = executorFor(fake);
    const running = raised(executor.execute(makeJob()));
    await until(() => fake.recorded("grandchild.pid") !== undefined);
    await executor.close();
    assert.equal(processIsRunning(grandchildOf(fake)), false);
    assertCode(await running, "CG_MODEL_CANCELLED");
  });

  test("a version probe that hangs is stopped by the deadline as CG_MODEL_TIMEOUT", async () => {
    const fake = fakeCodex({ versionScript: "sleep 1000" });
    const job = makeJob({ deadline: performance.now() + 300 });
    assertCode(await raised(executorFor(fake).execute(job)), "CG_MODEL_TIMEOUT");
  });

  test("a finished run leaves no process of its group behind", async () => {
    const fake = fakeCodex({
      exec: `sleep 1000 & echo $! > "$here/grandchild.pid"; ${answerWith(JSON.stringify(MATCHED))}`,
    });
    assert.deepEqual(await executorFor(fake).execute(makeJob()), MATCHED);
    assert.equal(processIsRunning(grandchildOf(fake)), false);
  });
});

describe("codex executor: registry", () => {
  test("the registry builds the codex executor", () => {
    const factory = executorFactory("codex");
    assert.equal(factory, codexExecutorFactory);
    assert.equal(factory.create({ executor: "codex" }).name, "codex");
  });
});

describe("codex executor: doctor's diagnosis", () => {
  async function diagnosisWith(searchPath: string) {
    const savedPath = process.env.PATH;
    process.env.PATH = searchPath;
    try {
      return await codexExecutorFactory.diagnose?.(
        { executor: "codex" },
        new AbortController().signal,
      );
    } finally {
      process.env.PATH = savedPath;
    }
  }

  test("a codex that passes both probes is ok", async () => {
    const fake = fakeCodex({});
    assert.deepEqual(await diagnosisWith(fake.searchPath), {
      status: "ok",
      message: `${fake.program} meets the version floor 0.46.0 and its sandbox works`,
    });
  });

  test("no codex on PATH fails", async () => {
    assert.deepEqual(await diagnosisWith("/nonexistent-folder"), {
      status: "fail",
      message: "The codex executor needs the codex CLI on PATH",
    });
  });

  test("an old codex fails naming the floor", async () => {
    const fake = fakeCodex({ version: "0.45.0" });
    assert.deepEqual(await diagnosisWith(fake.searchPath), {
      status: "fail",
      message: `The codex executor cannot run safely: ${fake.program} --version does not report a version of at least 0.46.0`,
    });
  });

  test("a broken sandbox fails", async () => {
    const fake = fakeCodex({ sandboxExit: 1 });
    assert.deepEqual(await diagnosisWith(fake.searchPath), {
      status: "fail",
      message: `The codex executor cannot run safely: the platform sandbox does not work (${fake.program} sandbox linux -- true failed)`,
    });
  });
});
