// The openai executor against a real loopback HTTP server (executors.md section 9): the request
// it sends, and the projection of every answer and transport failure onto the taxonomy's codes.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { performance } from "node:perf_hooks";
import { after, describe, test } from "node:test";
import { OpenAIExecutor, openaiExecutorFactory } from "../../src/core/executors/openai.js";
import { STRICT_OUTPUT_SCHEMA } from "../../src/core/executors/prompt.js";
import { ExecutorError } from "../../src/core/executors/protocol.js";
import { executorFactory } from "../../src/core/executors/registry.js";
import {
  answerJson,
  CATALOG,
  completion,
  type LoopbackServer,
  loopbackServer,
  makeJob,
} from "./helpers.js";

const KEY = "sk-test-SECRET-0123456789";
const KEY_ENV = "CG_TEST_OPENAI_KEY";
const MATCHED = {
  status: "matched",
  candidates: [{ id: "billing::invoice.create", confidence: 0.9, reason: "fits" }],
};

const servers: LoopbackServer[] = [];
after(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

async function serve(handler: Parameters<typeof loopbackServer>[0]): Promise<LoopbackServer> {
  const server = await loopbackServer(handler);
  servers.push(server);
  return server;
}

function executorFor(baseUrl: string, environment: Record<string, string> = { [KEY_ENV]: KEY }) {
  return new OpenAIExecutor(
    { baseUrl, model: "test-model", apiKeyEnv: KEY_ENV },
    () => environment,
  );
}

/** Runs one job and returns what it raised; fails the test when it resolves. */
async function raised(promise: Promise<unknown>): Promise<ExecutorError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ExecutorError, "an ExecutorError");
    assert.ok(!JSON.stringify(error).includes(KEY), "the key is not in the error");
    assert.ok(!String(error.message).includes(KEY), "the key is not in the message");
    assert.ok(!String(error.stack).includes(KEY), "the key is not in the stack");
    return error;
  }
  assert.fail("the executor answered instead of raising");
}

function assertCode(error: ExecutorError, code: string, nextAction?: string): void {
  assert.deepEqual({ code: error.code, nextAction: error.nextAction }, { code, nextAction });
}

/** An executor answering `body` with `status` for one job. */
async function outcomeOf(status: number, body: string, job = makeJob()): Promise<ExecutorError> {
  const server = await serve((_request, response) => answerJson(response, status, body));
  return raised(executorFor(server.baseUrl).execute(job));
}

describe("openai executor: the request", () => {
  test("posts the chat-completions request of the annex with the bearer key and the strict schema", async () => {
    const server = await serve((_request, response) =>
      answerJson(response, 200, completion({ content: JSON.stringify(MATCHED) })),
    );
    await executorFor(server.baseUrl).execute(makeJob());
    assert.equal(server.seen.length, 1);
    const [request] = server.seen;
    assert.ok(request);
    assert.equal(request.method, "POST");
    assert.equal(request.url, "/v1/chat/completions");
    assert.equal(request.headers.authorization, `Bearer ${KEY}`);
    assert.equal(request.headers["content-type"], "application/json");
    const body = JSON.parse(request.body);
    assert.deepEqual(Object.keys(body), ["model", "messages", "response_format"]);
    assert.equal(body.model, "test-model");
    assert.deepEqual(
      body.messages.map((message: { role: string }) => message.role),
      ["system", "user"],
    );
    assert.deepEqual(JSON.parse(body.messages[1].content), {
      request: "create an invoice",
      context: { tenant: "t1" },
      limit: 5,
      catalog: CATALOG,
    });
    assert.deepEqual(body.response_format, {
      type: "json_schema",
      json_schema: { name: "capability_match", strict: true, schema: STRICT_OUTPUT_SCHEMA },
    });
  });

  test("a trailing slash of baseUrl does not double the path separator", async () => {
    const server = await serve((_request, response) =>
      answerJson(response, 200, completion({ content: JSON.stringify(MATCHED) })),
    );
    await executorFor(`${server.baseUrl}/`).execute(makeJob());
    assert.equal(server.seen[0]?.url, "/v1/chat/completions");
  });

  test("a base URL that fits the pattern but is no URL (port 99999) fails with check_config at match time", async () => {
    const executor = executorFor("http://127.0.0.1:99999/v1");
    assertCode(await raised(executor.execute(makeJob())), "CG_MODEL_UNAVAILABLE", "check_config");
  });

  test("an unset key environment variable fails with check_config and sends no request", async () => {
    const server = await serve((_request, response) => answerJson(response, 200, "{}"));
    const error = await raised(executorFor(server.baseUrl, {}).execute(makeJob()));
    assertCode(error, "CG_MODEL_UNAVAILABLE", "check_config");
    assert.equal(server.seen.length, 0);
  });

  test("a key that cannot be a header value fails with check_config, the key in no error", async () => {
    const server = await serve((_request, response) => answerJson(response, 200, "{}"));
    const environment = { [KEY_ENV]: `${KEY}\nX-Injected: 1` };
    const error = await raised(executorFor(server.baseUrl, environment).execute(makeJob()));
    assertCode(error, "CG_MODEL_UNAVAILABLE", "check_config");
    assert.equal(server.seen.length, 0);
  });

  test("a key with a space or a Latin-1 character fails with check_config and sends no request", async () => {
    for (const key of [`${KEY} tail`, `${KEY}\u00e9`, `${KEY}\u007f`]) {
      const server = await serve((_request, response) => answerJson(response, 200, "{}"));
      const error = await raised(
        executorFor(server.baseUrl, { [KEY_ENV]: key }).execute(makeJob()),
      );
      assertCode(error, "CG_MODEL_UNAVAILABLE", "check_config");
      assert.equal(server.seen.length, 0);
    }
  });

  test("an empty key environment variable fails with check_config and sends no request", async () => {
    const server = await serve((_request, response) => answerJson(response, 200, "{}"));
    const error = await raised(executorFor(server.baseUrl, { [KEY_ENV]: "" }).execute(makeJob()));
    assertCode(error, "CG_MODEL_UNAVAILABLE", "check_config");
    assert.equal(server.seen.length, 0);
  });

  test("the strict schema has the property names, required members and statuses of the spec's schema", () => {
    const spec = (name: string) =>
      JSON.parse(
        readFileSync(
          new URL(`../../../../spec/capability-graph/schemas/${name}`, import.meta.url),
          "utf8",
        ),
      );
    const output = spec("executor-output.schema.json");
    const candidate = output.$defs.ExecutorCandidate;
    const strict = STRICT_OUTPUT_SCHEMA;
    assert.deepEqual(Object.keys(strict.properties), Object.keys(output.properties));
    assert.deepEqual([...strict.required], output.required);
    assert.deepEqual(
      Object.keys(strict.properties.candidates.items.properties),
      Object.keys(candidate.properties),
    );
    assert.deepEqual(
      [...strict.properties.status.enum],
      spec("match-result.schema.json").$defs.MatchStatus.enum,
    );
  });
});

describe("openai executor: answers", () => {
  test("the first choice's content is parsed as the raw output", async () => {
    const server = await serve((_request, response) =>
      answerJson(response, 200, completion({ content: JSON.stringify(MATCHED) })),
    );
    assert.deepEqual(await executorFor(server.baseUrl).execute(makeJob()), MATCHED);
  });

  test("a candidate whose reason is empty loses its reason", async () => {
    const content = {
      status: "matched",
      candidates: [{ id: "billing::invoice.create", confidence: 0.5, reason: "" }],
    };
    const server = await serve((_request, response) =>
      answerJson(response, 200, completion({ content: JSON.stringify(content) })),
    );
    assert.deepEqual(await executorFor(server.baseUrl).execute(makeJob()), {
      status: "matched",
      candidates: [{ id: "billing::invoice.create", confidence: 0.5 }],
    });
  });

  test("invented ids are passed through untouched for the pipeline's selection check", async () => {
    const invented = {
      status: "matched",
      candidates: [{ id: "nowhere::made.up", confidence: 1, reason: "x" }],
    };
    const server = await serve((_request, response) =>
      answerJson(response, 200, completion({ content: JSON.stringify(invented) })),
    );
    assert.deepEqual(await executorFor(server.baseUrl).execute(makeJob()), invented);
  });

  test("a refusal in the message is CG_MODEL_REFUSED", async () => {
    assertCode(
      await outcomeOf(200, completion({ content: null, refusal: "I can't help with that." })),
      "CG_MODEL_REFUSED",
    );
  });

  test("a refusal that is not a non-empty string is no refusal: the content decides", async () => {
    for (const refusal of [true, 1, {}, ""]) {
      const server = await serve((_request, response) =>
        answerJson(response, 200, completion({ content: JSON.stringify(MATCHED), refusal })),
      );
      assert.deepEqual(await executorFor(server.baseUrl).execute(makeJob()), MATCHED);
    }
  });

  test("finish_reason content_filter is CG_MODEL_REFUSED", async () => {
    assertCode(
      await outcomeOf(200, completion({ content: "" }, "content_filter")),
      "CG_MODEL_REFUSED",
    );
  });

  test("finish_reason length (a cut-off answer) is CG_MODEL_OUTPUT_TOO_LARGE", async () => {
    assertCode(
      await outcomeOf(200, completion({ content: '{"status": "ma' }, "length")),
      "CG_MODEL_OUTPUT_TOO_LARGE",
    );
  });

  test("finish_reason length is CG_MODEL_OUTPUT_TOO_LARGE even with complete, valid content", async () => {
    assertCode(
      await outcomeOf(200, completion({ content: JSON.stringify(MATCHED) }, "length")),
      "CG_MODEL_OUTPUT_TOO_LARGE",
    );
    assertCode(
      await outcomeOf(200, completion({ content: null }, "length")),
      "CG_MODEL_OUTPUT_TOO_LARGE",
    );
  });

  test("a refusal cut off by length is CG_MODEL_REFUSED (the refusal row comes first)", async () => {
    assertCode(
      await outcomeOf(200, completion({ content: null, refusal: "no" }, "length")),
      "CG_MODEL_REFUSED",
    );
  });

  test("a body that is not JSON is CG_MODEL_OUTPUT_INVALID", async () => {
    assertCode(await outcomeOf(200, "<html>gateway</html>"), "CG_MODEL_OUTPUT_INVALID");
  });

  test("a body that is not UTF-8 is CG_MODEL_OUTPUT_INVALID", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(Buffer.from([0x7b, 0xff, 0x7d]));
    });
    assertCode(
      await raised(executorFor(server.baseUrl).execute(makeJob())),
      "CG_MODEL_OUTPUT_INVALID",
    );
  });

  test("a completion without a choice is CG_MODEL_OUTPUT_INVALID", async () => {
    assertCode(await outcomeOf(200, JSON.stringify({ choices: [] })), "CG_MODEL_OUTPUT_INVALID");
  });

  test("a content that is not a string is CG_MODEL_OUTPUT_INVALID", async () => {
    assertCode(await outcomeOf(200, completion({ content: MATCHED })), "CG_MODEL_OUTPUT_INVALID");
  });

  test("a content that is not JSON is CG_MODEL_OUTPUT_INVALID", async () => {
    assertCode(
      await outcomeOf(200, completion({ content: "Sure! The best match is billing." })),
      "CG_MODEL_OUTPUT_INVALID",
    );
  });

  test("a content over maxModelOutputBytes is CG_MODEL_OUTPUT_TOO_LARGE", async () => {
    const content = JSON.stringify({ ...MATCHED, padding: "x".repeat(200) });
    const error = await outcomeOf(200, completion({ content }), makeJob({ maxOutputBytes: 100 }));
    assertCode(error, "CG_MODEL_OUTPUT_TOO_LARGE");
  });

  test("a content of exactly maxModelOutputBytes bytes is returned", async () => {
    const content = JSON.stringify(MATCHED);
    const server = await serve((_request, response) =>
      answerJson(response, 200, completion({ content })),
    );
    const job = makeJob({ maxOutputBytes: Buffer.byteLength(content) });
    assert.deepEqual(await executorFor(server.baseUrl).execute(job), MATCHED);
  });

  test("a streamed body over 4 x maxModelOutputBytes + 64 KiB is abandoned as CG_MODEL_OUTPUT_TOO_LARGE", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { "Content-Type": "application/json" });
      // Chunked, no Content-Length: the client has to count. The server never ends on its own.
      response.write('{"padding": "');
      const chunk = "x".repeat(16 * 1024);
      const timer = setInterval(() => response.write(chunk), 1);
      response.on("close", () => clearInterval(timer));
    });
    const error = await raised(
      executorFor(server.baseUrl).execute(makeJob({ maxOutputBytes: 1000 })),
    );
    assertCode(error, "CG_MODEL_OUTPUT_TOO_LARGE");
    await server.clientWentAway;
  });

  test("a declared Content-Length over the body limit is CG_MODEL_OUTPUT_TOO_LARGE without reading it", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, {
        "Content-Type": "application/json",
        "Content-Length": String(10 * 1024 * 1024),
      });
      response.write("{");
    });
    assertCode(
      await raised(executorFor(server.baseUrl).execute(makeJob({ maxOutputBytes: 1000 }))),
      "CG_MODEL_OUTPUT_TOO_LARGE",
    );
  });
});

describe("openai executor: HTTP errors", () => {
  const cases: Array<[string, number, string, string, string | undefined]> = [
    [
      "401 is check_config",
      401,
      '{"error": {"message": "bad key"}}',
      "CG_MODEL_UNAVAILABLE",
      "check_config",
    ],
    ["403 is check_config", 403, "{}", "CG_MODEL_UNAVAILABLE", "check_config"],
    ["404 is check_config", 404, "not found", "CG_MODEL_UNAVAILABLE", "check_config"],
    [
      "a plain 400 is check_config",
      400,
      '{"error": {"message": "unknown parameter"}}',
      "CG_MODEL_UNAVAILABLE",
      "check_config",
    ],
    ["422 is check_config", 422, "{}", "CG_MODEL_UNAVAILABLE", "check_config"],
    [
      "400 with code context_length_exceeded is CG_MODEL_CONTEXT_EXCEEDED",
      400,
      '{"error": {"code": "context_length_exceeded", "message": "too long"}}',
      "CG_MODEL_CONTEXT_EXCEEDED",
      undefined,
    ],
    [
      "413 whose message speaks of the context window is CG_MODEL_CONTEXT_EXCEEDED",
      413,
      '{"error": {"message": "The prompt does not fit the context window of this model"}}',
      "CG_MODEL_CONTEXT_EXCEEDED",
      undefined,
    ],
    [
      "422 whose message speaks of the context length is CG_MODEL_CONTEXT_EXCEEDED",
      422,
      '{"error": {"message": "maximum context length is 8192 tokens"}}',
      "CG_MODEL_CONTEXT_EXCEEDED",
      undefined,
    ],
    ["408 is retry", 408, "{}", "CG_MODEL_UNAVAILABLE", "retry"],
    ["409 is retry", 409, "{}", "CG_MODEL_UNAVAILABLE", "retry"],
    ["429 is retry", 429, '{"error": {"message": "rate limit"}}', "CG_MODEL_UNAVAILABLE", "retry"],
    ["500 is retry", 500, "boom", "CG_MODEL_UNAVAILABLE", "retry"],
    ["503 is retry", 503, "{}", "CG_MODEL_UNAVAILABLE", "retry"],
    [
      "a redirect is not followed and is check_config",
      307,
      "",
      "CG_MODEL_UNAVAILABLE",
      "check_config",
    ],
  ];
  for (const [title, status, body, code, nextAction] of cases) {
    test(title, async () => {
      assertCode(await outcomeOf(status, body), code, nextAction);
    });
  }
});

describe("openai executor: a huge error body (CG-MODEL-19)", () => {
  // 52 MB in 64 KiB writes, 10 ms apart: read whole, it would outlast the 5 s deadline.
  const CHUNK = Buffer.alloc(64 * 1024, "x");
  const CHUNKS = 800;
  const HEAD = Buffer.from(
    '{"error": {"code": "context_length_exceeded", "message": "maximum context length", "x": "',
  );
  const cases: Array<[number, boolean, string]> = [
    [400, true, "check_config"],
    [400, false, "check_config"],
    [413, false, "check_config"],
    [503, false, "retry"],
  ];
  for (const [status, declared, action] of cases) {
    test(`a ${status} body over the bound${declared ? " (declared)" : ""} is read no further and projected by its status`, async () => {
      let sent = 0;
      const server = await serve((_request, response) => {
        const headers: Record<string, string> = { "Content-Type": "application/json" };
        if (declared) {
          headers["Content-Length"] = String(HEAD.length + CHUNK.length * CHUNKS + 3);
        }
        response.writeHead(status, headers);
        response.write(HEAD);
        let left = CHUNKS;
        const drip = (): void => {
          if (response.destroyed) return;
          if (left-- === 0) {
            response.end('"}}');
            return;
          }
          sent += CHUNK.length;
          response.write(CHUNK);
          setTimeout(drip, 10);
        };
        drip();
      });
      const started = performance.now();
      const job = makeJob({ deadline: performance.now() + 5000 });
      const error = await raised(executorFor(server.baseUrl).execute(job));
      assertCode(error, "CG_MODEL_UNAVAILABLE", action);
      assert.ok(performance.now() - started < 5000, "ended before the deadline");
      await server.clientWentAway;
      assert.ok(sent < CHUNK.length * CHUNKS, "the body was not read to its end");
    });
  }
});

describe("openai executor: transport", () => {
  test("connection refused is CG_MODEL_UNAVAILABLE with retry", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const address = probe.address();
    assert.ok(address !== null && typeof address === "object");
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const error = await raised(
      executorFor(`http://127.0.0.1:${address.port}/v1`).execute(makeJob()),
    );
    assertCode(error, "CG_MODEL_UNAVAILABLE", "retry");
  });

  test("a connection reset before the answer is CG_MODEL_UNAVAILABLE with retry", async () => {
    const server = await serve((_request, response) => response.socket?.destroy());
    assertCode(
      await raised(executorFor(server.baseUrl).execute(makeJob())),
      "CG_MODEL_UNAVAILABLE",
      "retry",
    );
  });

  test("a server slower than the deadline is CG_MODEL_TIMEOUT and the connection is closed", async () => {
    const server = await serve(() => undefined);
    const job = makeJob({ deadline: performance.now() + 200 });
    assertCode(await raised(executorFor(server.baseUrl).execute(job)), "CG_MODEL_TIMEOUT");
    await server.clientWentAway;
  });

  test("a deadline already past is CG_MODEL_TIMEOUT and sends no request", async () => {
    const server = await serve(() => undefined);
    const job = makeJob({ deadline: performance.now() - 1 });
    assertCode(await raised(executorFor(server.baseUrl).execute(job)), "CG_MODEL_TIMEOUT");
    assert.equal(server.seen.length, 0);
  });

  test("cancelling mid-request is CG_MODEL_CANCELLED and closes the connection", async () => {
    const controller = new AbortController();
    const server = await serve(() => controller.abort());
    const job = makeJob({ signal: controller.signal });
    assertCode(await raised(executorFor(server.baseUrl).execute(job)), "CG_MODEL_CANCELLED");
    await server.clientWentAway;
  });

  test("an already cancelled job sends no request", async () => {
    const server = await serve((_request, response) => answerJson(response, 200, "{}"));
    const controller = new AbortController();
    controller.abort();
    const error = await raised(
      executorFor(server.baseUrl).execute(makeJob({ signal: controller.signal })),
    );
    assertCode(error, "CG_MODEL_CANCELLED");
    assert.equal(server.seen.length, 0);
  });

  test("close aborts a request in flight", async () => {
    let executor: OpenAIExecutor | undefined;
    const server = await serve(() => void executor?.close());
    executor = executorFor(server.baseUrl);
    assertCode(await raised(executor.execute(makeJob())), "CG_MODEL_UNAVAILABLE", "retry");
    await server.clientWentAway;
  });
});

describe("openai executor: registry", () => {
  test("the registry builds the openai executor from the model section and it reads the key at match time", async () => {
    const server = await serve((_request, response) =>
      answerJson(response, 200, completion({ content: JSON.stringify(MATCHED) })),
    );
    const factory = executorFactory("openai");
    assert.equal(factory, openaiExecutorFactory);
    const executor = factory.create({
      executor: "openai",
      baseUrl: server.baseUrl,
      model: "m",
      apiKeyEnv: KEY_ENV,
    });
    assert.equal(executor.name, "openai");
    process.env[KEY_ENV] = KEY;
    try {
      assert.deepEqual(await executor.execute(makeJob()), MATCHED);
    } finally {
      delete process.env[KEY_ENV];
    }
    assert.equal(server.seen[0]?.headers.authorization, `Bearer ${KEY}`);
  });
});

describe("openai executor: doctor's diagnosis", () => {
  const model = {
    executor: "openai",
    baseUrl: "http://127.0.0.1:9/v1",
    model: "m",
    apiKeyEnv: KEY_ENV,
  };

  test("an unset key variable is a warning naming the variable", async () => {
    delete process.env[KEY_ENV];
    assert.deepEqual(await openaiExecutorFactory.diagnose?.(model, new AbortController().signal), {
      status: "warn",
      message: `The environment variable ${KEY_ENV} (apiKeyEnv) is not set`,
    });
  });

  test("a set key variable is ok and the key itself is never shown", async () => {
    process.env[KEY_ENV] = KEY;
    try {
      const diagnosis = await openaiExecutorFactory.diagnose?.(model, new AbortController().signal);
      assert.deepEqual(diagnosis, {
        status: "ok",
        message: "The openai executor is configured",
      });
    } finally {
      delete process.env[KEY_ENV];
    }
  });
});
