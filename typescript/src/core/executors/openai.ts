// The `openai` executor (executors.md section 9): one POST to an OpenAI-compatible
// chat-completions endpoint per match, over Node's own http/https client (no SDK, no client-side
// retries). Every failure is raised as an ExecutorError carrying only a code and an action, so
// nothing the server, the transport or the environment said can reach a caller; the API key is
// read from the named environment variable at match time and only ever written into the
// Authorization header.
import type http from "node:http";
import { parseJsonBytes, parseJsonText, REQUEST_TEXT } from "../json/text.js";
import { nodeHttp, nodeHttps } from "./on-first-use.js";
import { dropEmptyReasons, jobText, MATCH_INSTRUCTIONS, STRICT_OUTPUT_SCHEMA } from "./prompt.js";
import {
  type Executor,
  type ExecutorDiagnosis,
  ExecutorError,
  type ExecutorFactory,
  type ExecutorJob,
  type ModelSection,
} from "./protocol.js";

/** The options of `{"executor": "openai", ...}` after the configuration schema accepted them. */
export interface OpenAIExecutorOptions {
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKeyEnv: string;
}

/** Where the key is looked up; the process environment unless a test gives another one. */
export type EnvironmentSource = () => Readonly<Record<string, string | undefined>>;

/** A response body may be this much larger than the output budget (JSON envelope, usage, ...). */
const BODY_SLACK_BYTES = 64 * 1024;

/** Statuses of a 4xx answer that mean "try again later" rather than "fix the configuration". */
const RETRYABLE_CLIENT_STATUSES = new Set([408, 409, 429]);
/** A key is sent unchanged as a header value: only U+0021..U+007E (executors.md section 9). */
const HEADER_SAFE_KEY = /^[\u0021-\u007e]+$/;

/** Statuses whose error body is read to recognize a context-window overflow. */
const CONTEXT_STATUSES = new Set([400, 413, 422]);

/** A model message that speaks of the context length or window. */
const CONTEXT_WORDS = /context[ _-]?(length|window)/i;

export class OpenAIExecutor implements Executor {
  readonly name = "openai";
  /** Undefined when the base URL passes the schema's pattern but is no URL (e.g. a bad port). */
  readonly #endpoint: URL | undefined;
  readonly #options: OpenAIExecutorOptions;
  readonly #environment: EnvironmentSource;
  /** Requests in flight, so that `close` can abort them. */
  readonly #inFlight = new Set<http.ClientRequest>();

  constructor(options: OpenAIExecutorOptions, environment: EnvironmentSource = () => process.env) {
    this.#options = options;
    this.#environment = environment;
    this.#endpoint = completionsUrl(options.baseUrl);
  }

  async execute(job: ExecutorJob): Promise<unknown> {
    const key = this.#environment()[this.#options.apiKeyEnv];
    if (key === undefined || key === "" || !HEADER_SAFE_KEY.test(key)) {
      throw new ExecutorError("CG_MODEL_UNAVAILABLE", "check_config");
    }
    const endpoint = this.#endpoint;
    if (endpoint === undefined) throw new ExecutorError("CG_MODEL_UNAVAILABLE", "check_config");
    if (job.signal.aborted) throw new ExecutorError("CG_MODEL_CANCELLED");
    if (performance.now() >= job.deadline) throw new ExecutorError("CG_MODEL_TIMEOUT");
    const body = Buffer.from(JSON.stringify(this.#requestBody(job)), "utf8");
    const response = await this.#post(endpoint, body, key, job);
    return interpretCompletion(response, job.maxOutputBytes);
  }

  async close(): Promise<void> {
    for (const request of this.#inFlight) request.destroy();
    this.#inFlight.clear();
  }

  #requestBody(job: ExecutorJob): Record<string, unknown> {
    return {
      model: this.#options.model,
      messages: [
        { role: "system", content: MATCH_INSTRUCTIONS },
        { role: "user", content: jobText(job) },
      ],
      response_format: {
        type: "json_schema",
        json_schema: { name: "capability_match", strict: true, schema: STRICT_OUTPUT_SCHEMA },
      },
    };
  }

  /**
   * Send the request and read the answer, bounded three ways: the match deadline (the transport's
   * own timeout), the job's abort signal, and the body budget. Settles only after the connection
   * is destroyed, so a stopped match leaves no socket behind.
   */
  #post(endpoint: URL, body: Buffer, key: string, job: ExecutorJob): Promise<HttpAnswer> {
    // No body, whatever its status, is read past this bound (CG-MODEL-19).
    const bodyLimit = 4 * job.maxOutputBytes + BODY_SLACK_BYTES;
    const transport = endpoint.protocol === "https:" ? nodeHttps() : nodeHttp();
    return new Promise<HttpAnswer>((resolve, reject) => {
      let settled = false;
      let request: http.ClientRequest;
      try {
        request = transport.request(endpoint, {
          method: "POST",
          agent: false,
          headers: {
            Authorization: `Bearer ${key}`,
            "Content-Type": "application/json",
            Accept: "application/json",
            "Content-Length": String(body.length),
          },
        });
      } catch {
        // Node refuses a header value with control characters: the key itself is unusable.
        reject(new ExecutorError("CG_MODEL_UNAVAILABLE", "check_config"));
        return;
      }
      this.#inFlight.add(request);

      const finish = (outcome: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        job.signal.removeEventListener("abort", onAbort);
        this.#inFlight.delete(request);
        request.destroy();
        outcome();
      };
      const fail = (code: string, action?: string): void =>
        finish(() => reject(new ExecutorError(code, action)));

      const onAbort = (): void => fail("CG_MODEL_CANCELLED");
      job.signal.addEventListener("abort", onAbort, { once: true });
      const timer = setTimeout(
        () => fail("CG_MODEL_TIMEOUT"),
        Math.max(0, job.deadline - performance.now()),
      );

      request.on("error", () => fail("CG_MODEL_UNAVAILABLE", "retry"));
      request.on("close", () => fail("CG_MODEL_UNAVAILABLE", "retry"));
      request.on("response", (response) => {
        const status = response.statusCode ?? 0;
        const readBody = (status >= 200 && status < 300) || CONTEXT_STATUSES.has(status);
        if (!readBody) {
          finish(() => resolve({ status, body: undefined }));
          return;
        }
        const declared = Number(response.headers["content-length"]);
        if (Number.isFinite(declared) && declared > bodyLimit) {
          finish(() => resolve({ status, body: "too-large" }));
          return;
        }
        const chunks: Buffer[] = [];
        let received = 0;
        response.on("data", (chunk: Buffer) => {
          received += chunk.length;
          if (received > bodyLimit) {
            finish(() => resolve({ status, body: "too-large" }));
            return;
          }
          chunks.push(chunk);
        });
        response.on("end", () => finish(() => resolve({ status, body: Buffer.concat(chunks) })));
        response.on("error", () => fail("CG_MODEL_UNAVAILABLE", "retry"));
        response.on("aborted", () => fail("CG_MODEL_UNAVAILABLE", "retry"));
      });
      request.end(body);
    });
  }
}

/** What came back: the status and the body (read only when it can matter), or its overflow. */
interface HttpAnswer {
  readonly status: number;
  readonly body: Buffer | "too-large" | undefined;
}

/** `{baseUrl}/chat/completions`, one trailing slash of the base URL ignored; undefined if no URL. */
function completionsUrl(baseUrl: string): URL | undefined {
  const base = baseUrl.endsWith("/") ? baseUrl.slice(0, -1) : baseUrl;
  try {
    return new URL(`${base}/chat/completions`);
  } catch {
    return undefined;
  }
}

/** The table of executors.md section 9, from the HTTP status down to the message content. */
function interpretCompletion(answer: HttpAnswer, maxOutputBytes: number): unknown {
  const { status, body } = answer;
  if (status < 200 || status >= 300) throw statusError(status, body);
  if (body === "too-large") throw new ExecutorError("CG_MODEL_OUTPUT_TOO_LARGE");
  const completion = readJsonText(body ?? Buffer.alloc(0));
  const choice = firstChoice(completion);
  const message = isObject(choice.message) ? choice.message : undefined;
  const refusal = message?.refusal;
  // Only a non-empty string is a refusal (executors.md section 9).
  if (
    (typeof refusal === "string" && refusal !== "") ||
    choice.finish_reason === "content_filter"
  ) {
    throw new ExecutorError("CG_MODEL_REFUSED");
  }
  if (choice.finish_reason === "length") throw new ExecutorError("CG_MODEL_OUTPUT_TOO_LARGE");
  const content = message?.content;
  if (typeof content !== "string") throw new ExecutorError("CG_MODEL_OUTPUT_INVALID");
  if (Buffer.byteLength(content, "utf8") > maxOutputBytes) {
    throw new ExecutorError("CG_MODEL_OUTPUT_TOO_LARGE");
  }
  return dropEmptyReasons(readJsonText(content));
}

function statusError(status: number, body: HttpAnswer["body"]): ExecutorError {
  if (status === 401 || status === 403)
    return new ExecutorError("CG_MODEL_UNAVAILABLE", "check_config");
  if (CONTEXT_STATUSES.has(status) && body instanceof Buffer && speaksOfContext(body)) {
    return new ExecutorError("CG_MODEL_CONTEXT_EXCEEDED");
  }
  // Other 4xx, and redirects (never followed): the endpoint or the model name is wrong.
  if (status >= 300 && status < 500 && !RETRYABLE_CLIENT_STATUSES.has(status)) {
    return new ExecutorError("CG_MODEL_UNAVAILABLE", "check_config");
  }
  // 408, 409, 429, 5xx and any other status that is not 2xx (1xx included).
  return new ExecutorError("CG_MODEL_UNAVAILABLE", "retry");
}

/** An OpenAI-style error body `{"error": {"code", "message"}}` about the context window. */
function speaksOfContext(body: Buffer): boolean {
  const read = parseJsonBytes(body, REQUEST_TEXT);
  const parsed = read.ok ? read.value : undefined;
  const error = isObject(parsed) && isObject(parsed.error) ? parsed.error : undefined;
  if (error === undefined) return false;
  if (error.code === "context_length_exceeded") return true;
  return typeof error.message === "string" && CONTEXT_WORDS.test(error.message);
}

function firstChoice(completion: unknown): Record<string, unknown> {
  const choices = isObject(completion) ? completion.choices : undefined;
  const choice = Array.isArray(choices) ? choices[0] : undefined;
  if (!isObject(choice)) throw new ExecutorError("CG_MODEL_OUTPUT_INVALID");
  return choice;
}

/**
 * A body or a content, read by the rules of a request text ([CG-MODEL-25]): UTF-8 without a byte
 * order mark, RFC 8259 JSON, no duplicate member, no container at depth 33. JSON.parse would keep
 * the last duplicate and go as deep as its stack allows.
 */
function readJsonText(text: Buffer | string): unknown {
  const read =
    typeof text === "string"
      ? parseJsonText(text, REQUEST_TEXT)
      : parseJsonBytes(text, REQUEST_TEXT);
  if (!read.ok) throw new ExecutorError("CG_MODEL_OUTPUT_INVALID");
  return read.value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function optionsOf(model: ModelSection): OpenAIExecutorOptions {
  return {
    baseUrl: String(model.baseUrl),
    model: String(model.model),
    apiKeyEnv: String(model.apiKeyEnv),
  };
}

/** The registry entry of `openai`: the schema checks every option, so there is nothing more. */
export const openaiExecutorFactory: ExecutorFactory = {
  create(model: ModelSection): Executor {
    return new OpenAIExecutor(optionsOf(model));
  },
  async diagnose(model: ModelSection): Promise<ExecutorDiagnosis> {
    const { apiKeyEnv, baseUrl } = optionsOf(model);
    const key = process.env[apiKeyEnv];
    // Only a warning: the key is read at match time, so it may be set for the server later.
    if (key === undefined || key === "") {
      return {
        status: "warn",
        message: `The environment variable ${apiKeyEnv} (apiKeyEnv) is not set`,
      };
    }
    const endpoint = completionsUrl(baseUrl);
    if (endpoint === undefined) {
      return { status: "fail", message: "The openai executor's baseUrl is not a usable URL" };
    }
    return { status: "ok", message: "The openai executor is configured" };
  },
};
