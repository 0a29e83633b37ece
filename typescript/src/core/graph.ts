// Over 400 lines: the one class of the SDK (open, the call pipeline, reload, close) keeps its private state together.
// The SDK class CapabilityGraph ([CG-SDK-1]): open a configuration, answer the five operations
// through one JSON entry point (`call`) with every check in the order of section 5, reload and
// close. Surfaces (Tool Adapter, MCP server, CLI) only project what this class returns or throws.
// Each operation is a handler of core/operations/, reached through the handler record.
import {
  OPERATIONS,
  type Operation,
  type ResultOf,
  SDK_TOOLS,
  type ToolName,
} from "../_generated/operations.js";
import type { HostConfig as Configuration } from "../_generated/types/config.js";
import type { DescribeResult } from "../_generated/types/describe-result.js";
import type { ListRequest } from "../_generated/types/list-request.js";
import type { ListResult } from "../_generated/types/list-result.js";
import type { MatchRequest } from "../_generated/types/match-request.js";
import type { MatchResult } from "../_generated/types/match-result.js";
import type { ReadDocumentRequest } from "../_generated/types/read-document-request.js";
import type { ReadDocumentResult } from "../_generated/types/read-document-result.js";
import type { ReloadRequest } from "../_generated/types/reload-request.js";
import type { ReloadResult } from "../_generated/types/reload-result.js";
import type { ResolveRequest } from "../_generated/types/resolve-request.js";
import type { ResolveResult } from "../_generated/types/resolve-result.js";
import { validateReloadRequest } from "../_generated/validators.js";
import { checkConfig, type HostConfig, readConfigFile } from "./config.js";
import { type GraphError, graphError, pointerError } from "./errors.js";
import type { Executor } from "./executors/protocol.js";
import { executorFactory } from "./executors/registry.js";
import {
  compactByteLength,
  firstPureFault,
  firstTooDeep,
  integralBeyondRange,
  isPlainObject,
} from "./json/pure.js";
import { type JsonPath, parseJsonText, pathKey, REQUEST_TEXT } from "./json/text.js";
import { type LoadedProvider, loadSource } from "./load.js";
import { HANDLERS } from "./operations/index.js";
import { checkRequestShape } from "./operations/requests.js";
import { pureFaultMessage, schemaFaultMessage, textFaultMessage } from "./schemas.js";
import { assembleSnapshot, type Snapshot } from "./snapshot.js";

export { parseRequestText, type RequestTextOutcome } from "./operations/requests.js";

export interface OpenOptions {
  /** An executor object used for match instead of the configuration's model section. */
  executor?: Executor;
  /** The folder relative paths of a configuration value resolve against (default: process.cwd()). */
  cwd?: string;
}

export interface CallOptions {
  /** The caller's cancel signal (match only): aborting it ends a running match with CG_MODEL_CANCELLED. */
  signal?: AbortSignal;
}

export type JsonObject = Record<string, unknown>;

/** A call's arguments after the checks before the tool name, and how to judge their integers. */
interface CheckedArguments {
  readonly request: unknown;
  readonly outOfRangeInteger: (path: () => JsonPath, value: number) => boolean;
}

const EXECUTOR_NAME = /^[a-z][a-z0-9._-]{0,63}$/;

/** The providers of an open graph, loaded in source order. */
async function loadAll(config: HostConfig): Promise<LoadedProvider[]> {
  const providers: LoadedProvider[] = [];
  for (const source of config.sources) {
    const loaded = await loadSource(source, config.budgets);
    if (!loaded.ok) throw loaded.error;
    providers.push(loaded.provider);
  }
  return providers;
}

export class CapabilityGraph {
  readonly #config: HostConfig;
  readonly #executor: Executor | undefined;
  readonly #executorName: string | undefined;
  readonly #closing = new AbortController();
  readonly #running = new Set<Promise<unknown>>();
  #snapshot: Snapshot;
  #reloads: Promise<unknown> = Promise.resolve();
  #closed: Promise<void> | undefined;

  private constructor(
    config: HostConfig,
    snapshot: Snapshot,
    executor: Executor | undefined,
    executorName: string | undefined,
  ) {
    this.#config = config;
    this.#snapshot = snapshot;
    this.#executor = executor;
    this.#executorName = executorName;
  }

  /**
   * Open a graph from a configuration value (an object) or the path of a configuration file,
   * with the checks of [CG-OPEN-1] in order; the first failure is thrown as a GraphError and
   * nothing stays open.
   */
  static async open(
    config: string | Configuration,
    options: OpenOptions = {},
  ): Promise<CapabilityGraph> {
    const cwd = options.cwd ?? process.cwd();
    let value: unknown = config;
    let baseDir = cwd;
    let outOfRangeInteger = integralBeyondRange;
    if (typeof config === "string") {
      const read = await readConfigFile(config, cwd);
      if (!read.ok) throw read.error;
      value = read.value;
      baseDir = read.baseDir;
      outOfRangeInteger = read.outOfRangeInteger;
    }
    const hostConfig = checkConfig(value, baseDir, outOfRangeInteger);
    const providers = await loadAll(hostConfig);
    const assembly = assembleSnapshot(providers, hostConfig);
    if (!assembly.ok) throw assembly.error;
    let executor = options.executor;
    let executorName: string | undefined;
    if (executor !== undefined) {
      executorName =
        typeof executor.name === "string" && EXECUTOR_NAME.test(executor.name)
          ? executor.name
          : "custom";
    } else if (hostConfig.model !== undefined) {
      executor = executorFactory(hostConfig.model.executor)?.create(hostConfig.model);
      executorName = hostConfig.model.executor;
    }
    return new CapabilityGraph(hostConfig, assembly.snapshot, executor, executorName);
  }

  async describe(): Promise<DescribeResult> {
    return this.#invoke(SDK_TOOLS.describe, {});
  }

  async list(request: ListRequest = {}): Promise<ListResult> {
    return this.#invoke(SDK_TOOLS.list, request);
  }

  async resolve(request: ResolveRequest): Promise<ResolveResult> {
    return this.#invoke(SDK_TOOLS.resolve, request);
  }

  /**
   * Ask the model executor which capabilities fit a request in natural language: the match
   * request object, or the request text alone (`graph.match("validate the body")`, as Python's
   * `graph.match("validate the body")`). Unlike `call`, a string here is never JSON text.
   */
  async match(request: MatchRequest | string, options?: CallOptions): Promise<MatchResult> {
    const asked = typeof request === "string" ? { request } : request;
    return this.#invoke(SDK_TOOLS.match, asked, options);
  }

  async readDocument(request: ReadDocumentRequest): Promise<ReadDocumentResult> {
    return this.#invoke(SDK_TOOLS.readDocument, request);
  }

  /**
   * The JSON entry point: a tool name of the operation table and its arguments (a value or a
   * JSON text). Returns the result's JSON object or throws GraphError. The checks run in the
   * order of section 5: closed graph, tool name, input size, shape, then the tool's own rows.
   */
  async call(tool: string, args: unknown, options: CallOptions = {}): Promise<JsonObject> {
    const start = performance.now();
    const operation = OPERATIONS.find((candidate) => candidate.tool === tool);
    const checked = this.#checkArguments(operation?.phase ?? "query", args);
    if (operation === undefined) throw graphError("CG_INPUT_INVALID", "query", "unknownTool");
    const result = await this.#run(operation, checked, options, start);
    // Every result is a JSON object (its schema says so); the check gives it the caller's type.
    if (!isPlainObject(result)) throw new Error(`${operation.tool} returned no object`);
    return result;
  }

  /** A typed SDK method: the tool's request in, its result out, through the same checks as `call`. */
  async #invoke<T extends ToolName>(
    tool: T,
    args: unknown,
    options: CallOptions = {},
  ): Promise<ResultOf<T>> {
    const start = performance.now();
    const operation = OPERATIONS.find(
      (candidate): candidate is Operation & { readonly tool: T } => candidate.tool === tool,
    );
    if (operation === undefined) throw graphError("CG_INPUT_INVALID", "query", "unknownTool");
    return this.#run(operation, this.#checkArguments(operation.phase, args), options, start);
  }

  /**
   * The checks before the tool name ([CG-PREC-12]): the closed graph, the parse of a request
   * text (read once, [CG-CONV-17]) and the depth rule ([CG-CONV-15]), in the tool's phase
   * (`query` for an unknown tool).
   */
  #checkArguments(phase: Operation["phase"], args: unknown): CheckedArguments {
    if (this.#closed !== undefined) throw graphError("CG_GRAPH_CLOSED", "lifecycle");
    let request = args;
    let outOfRangeInteger = integralBeyondRange;
    if (typeof args === "string") {
      const parsed = parseJsonText(args, REQUEST_TEXT);
      if (!parsed.ok)
        throw pointerError("CG_INPUT_INVALID", phase, textFaultMessage(parsed.fault, "request"));
      request = parsed.value;
      const literals = parsed.bigIntegers;
      outOfRangeInteger = (path, value) =>
        integralBeyondRange(path, value) || (literals.size > 0 && literals.has(pathKey(path())));
    }
    // The depth rule comes before the tool name and the input size on every surface
    // ([CG-CONV-15], [CG-PREC-12]): a text's parse finds a container at depth 33 before either is
    // looked at, and a value is judged the same.
    const tooDeep = firstTooDeep(request);
    if (tooDeep !== undefined) {
      throw pointerError(
        "CG_INPUT_INVALID",
        phase,
        textFaultMessage({ kind: "depth", path: tooDeep }, "request"),
      );
    }
    return { request, outOfRangeInteger };
  }

  /** The input size, the shape, the tool's handler (through the record), the result size. */
  async #run<T extends ToolName>(
    operation: Operation & { readonly tool: T },
    checked: CheckedArguments,
    options: CallOptions,
    start: number,
  ): Promise<ResultOf<T>> {
    const { request, outOfRangeInteger } = checked;
    const phase = operation.phase;
    const budgets = this.#config.budgets;
    if (compactByteLength(request, budgets.maxInputBytes) > budgets.maxInputBytes) {
      throw graphError("CG_INPUT_TOO_LARGE", phase);
    }
    checkRequestShape(operation, request, outOfRangeInteger);
    const handler = HANDLERS[operation.tool];
    const result = await handler(
      {
        snapshot: this.#snapshot,
        config: this.#config,
        executor: this.#executor,
        executorName: this.#executorName,
        start,
        signal: options.signal,
        closed: this.#closing.signal,
        outOfRangeInteger,
        track: (running) => this.#track(running),
      },
      request,
    );
    if (compactByteLength(result, budgets.maxResultBytes) > budgets.maxResultBytes) {
      throw graphError("CG_RESULT_TOO_LARGE", phase);
    }
    return result;
  }

  /** Keep `running` until it settles, so that close() waits for it ([CG-LIFE-8]). */
  async #track<R>(running: Promise<R>): Promise<R> {
    const tracked = running.catch(() => undefined);
    this.#running.add(tracked);
    try {
      return await running;
    } finally {
      this.#running.delete(tracked);
    }
  }

  /**
   * Re-read the selected sources (all by default), validate the candidate snapshot and publish it
   * atomically only when everything holds ([CG-LIFE-2] .. [CG-LIFE-7], [CG-LIFE-10]). A failed
   * candidate is a result (`ok: false`), never a throw; the argument is trusted host input.
   */
  async reload(request?: ReloadRequest): Promise<ReloadResult> {
    if (this.#closed !== undefined) throw graphError("CG_GRAPH_CLOSED", "lifecycle");
    const selected = this.#selectSources(request);
    const run = this.#reloads.then(() => this.#reloadSources(selected));
    this.#reloads = run.catch(() => undefined);
    return run;
  }

  #selectSources(request: unknown): Set<number> {
    const fault = (message: string) => pointerError("CG_CONFIG_INVALID", "config", message);
    const snapshot = this.#snapshot;
    if (request === undefined) return new Set(this.#config.sources.map((source) => source.index));
    if (!isPlainObject(request)) throw fault("/ must be an object");
    // Two messages cover every fault of `providers` (messages.md, [CG-MSG-10]): a value that is
    // not a non-empty array, and the first item that is not the id of a loaded provider.
    const providers = request.providers;
    if (providers !== undefined) {
      if (!Array.isArray(providers) || providers.length === 0)
        throw fault("/providers must be a non-empty array");
      for (const [position, providerId] of providers.entries()) {
        if (typeof providerId !== "string" || !snapshot.byId.has(providerId))
          throw fault(`/providers/${position} names a provider that is not loaded`);
      }
    }
    const pure = firstPureFault(request);
    if (pure !== undefined) throw fault(pureFaultMessage(request, pure));
    if (!validateReloadRequest(request))
      throw fault(
        schemaFaultMessage(request, validateReloadRequest.errors ?? [], validateReloadRequest),
      );
    const named = (request as ReloadRequest).providers;
    if (named === undefined) return new Set(this.#config.sources.map((source) => source.index));
    const indexes = new Set<number>();
    for (const [position, providerId] of named.entries()) {
      const provider = snapshot.byId.get(providerId);
      if (provider === undefined)
        throw fault(`/providers/${position} names a provider that is not loaded`);
      indexes.add(provider.sourceIndex);
    }
    return indexes;
  }

  async #reloadSources(selected: ReadonlySet<number>): Promise<ReloadResult> {
    if (this.#closed !== undefined) throw graphError("CG_GRAPH_CLOSED", "lifecycle");
    const serving = this.#snapshot;
    const current = new Map(serving.providers.map((provider) => [provider.sourceIndex, provider]));
    const candidate: LoadedProvider[] = [];
    const outcomes: Array<
      | { index: number; ok: true; provider: LoadedProvider }
      | { index: number; ok: false; error: GraphError }
    > = [];
    for (const source of this.#config.sources) {
      if (!selected.has(source.index)) {
        candidate.push(current.get(source.index) as LoadedProvider);
        continue;
      }
      const loaded = await loadSource(source, this.#config.budgets);
      if (loaded.ok) {
        candidate.push(loaded.provider);
        outcomes.push({ index: source.index, ok: true, provider: loaded.provider });
      } else {
        outcomes.push({ index: source.index, ok: false, error: loaded.error });
      }
    }
    const old = (index: number) => current.get(index) as LoadedProvider;
    const failure = (entries: ReloadResult["providers"]): ReloadResult =>
      ({
        ok: false,
        error: graphError("CG_RELOAD_FAILED", "load").toJSON(),
        revision: serving.revision,
        providers: entries,
      }) as ReloadResult;
    const failed = (index: number, error: GraphError) => ({
      providerId: old(index).providerId,
      ok: false as const,
      revision: old(index).revision,
      error: error.toJSON(),
    });
    const reloaded = (provider: LoadedProvider) => ({
      providerId: provider.providerId,
      ok: true as const,
      revision: provider.revision,
      changed:
        provider.revision !== old(provider.sourceIndex).revision ||
        provider.providerId !== old(provider.sourceIndex).providerId,
    });
    if (outcomes.some((outcome) => !outcome.ok)) {
      return failure(
        outcomes.map((outcome) =>
          outcome.ok ? reloaded(outcome.provider) : failed(outcome.index, outcome.error),
        ),
      );
    }
    const assembly = assembleSnapshot(candidate, this.#config);
    if (!assembly.ok)
      return failure(outcomes.map((outcome) => failed(outcome.index, assembly.error)));
    if (this.#closed !== undefined) throw graphError("CG_GRAPH_CLOSED", "lifecycle");
    this.#snapshot = assembly.snapshot;
    return {
      ok: true,
      revision: assembly.snapshot.revision,
      providers: outcomes.map((outcome) =>
        reloaded((outcome as { provider: LoadedProvider }).provider),
      ),
    };
  }

  /** True once `close()` was called (Python's `closed`). */
  get closed(): boolean {
    return this.#closed !== undefined;
  }

  /**
   * Close the graph ([CG-LIFE-8], [CG-LIFE-9]): idempotent, never throws. Running matches end with
   * CG_GRAPH_CLOSED once their executor stopped; then the executor is released.
   */
  close(): Promise<void> {
    if (this.#closed === undefined) {
      this.#closing.abort();
      this.#closed = (async () => {
        await Promise.allSettled([...this.#running]);
        await this.#executor?.close?.().catch(() => undefined);
      })().catch(() => undefined);
    }
    return this.#closed;
  }

  /**
   * The same as `close()`, for `await using graph = await CapabilityGraph.open(config)` (the
   * counterpart of Python's `async with`): the graph is closed when the block is left.
   */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
