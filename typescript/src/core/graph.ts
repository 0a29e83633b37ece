// The SDK class CapabilityGraph ([CG-SDK-1]): open a configuration, answer the five operations
// through one JSON entry point (`call`) with every check in the order of section 5, reload and
// close. Surfaces (Tool Adapter, MCP server, CLI) only project what this class returns or throws.
import { performance } from "node:perf_hooks";
import { SCHEMA_DEFAULTS } from "../_generated/defaults.js";
import { OPERATIONS, type Operation } from "../_generated/operations.js";
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
import {
  type ContractValidator,
  validateContextKey,
  validateContextValue,
  validateDescribeRequest,
  validateListRequest,
  validateMatchRequest,
  validateReadDocumentRequest,
  validateReloadRequest,
  validateResolveRequest,
} from "../_generated/validators.js";
import { checkConfig, configuredTimeoutMs, type HostConfig, readConfigFile } from "./config.js";
import { readDocumentFile } from "./documents.js";
import { type GraphError, graphError, pointerError } from "./errors.js";
import type { ContextValue, Executor } from "./executors/protocol.js";
import { executorFactory } from "./executors/registry.js";
import {
  compactByteLength,
  firstPureFault,
  firstTooDeep,
  hasLoneSurrogate,
  integralBeyondRange,
  isPlainObject,
} from "./json/pure.js";
import {
  type JsonPath,
  parseJsonBytes,
  parseJsonText,
  pathKey,
  REQUEST_TEXT,
} from "./json/text.js";
import { type LoadedProvider, loadSource } from "./load.js";
import { runMatch } from "./match.js";
import {
  checkNamedProviders,
  describeGraph,
  listCapabilities,
  resolveCapabilities,
} from "./operations/common.js";
import { pureFaultMessage, schemaFaultMessage, textFaultMessage } from "./schemas.js";
import { assembleSnapshot, capabilityById, inScope, type Snapshot } from "./snapshot.js";

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

/** What one call carries to its tool: the caller's options, its start, how to judge its integers. */
interface CallContext extends CallOptions {
  readonly start: number;
  readonly outOfRangeInteger: (path: () => JsonPath, value: number) => boolean;
}

const REQUEST_VALIDATORS: Readonly<Record<string, ContractValidator>> = {
  "describe-request.schema.json": validateDescribeRequest,
  "list-request.schema.json": validateListRequest,
  "resolve-request.schema.json": validateResolveRequest,
  "match-request.schema.json": validateMatchRequest,
  "read-document-request.schema.json": validateReadDocumentRequest,
};

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
    return (await this.call("describe_graph", {})) as unknown as DescribeResult;
  }

  async list(request: ListRequest = {}): Promise<ListResult> {
    return (await this.call("list_capabilities", request)) as unknown as ListResult;
  }

  async resolve(request: ResolveRequest): Promise<ResolveResult> {
    return (await this.call("resolve_capabilities", request)) as unknown as ResolveResult;
  }

  async match(request: MatchRequest, options?: CallOptions): Promise<MatchResult> {
    return (await this.call("match_capabilities", request, options)) as unknown as MatchResult;
  }

  async readDocument(request: ReadDocumentRequest): Promise<ReadDocumentResult> {
    return (await this.call("read_document", request)) as unknown as ReadDocumentResult;
  }

  /**
   * The JSON entry point: a tool name of the operation table and its arguments (a value or a
   * JSON text). Returns the result's JSON object or throws GraphError. The checks run in the
   * order of section 5: closed graph, tool name, input size, shape, then the tool's own rows.
   */
  async call(tool: string, args: unknown, options: CallOptions = {}): Promise<JsonObject> {
    const start = performance.now();
    if (this.#closed !== undefined) throw graphError("CG_GRAPH_CLOSED", "lifecycle");
    const operation = OPERATIONS.find((candidate) => candidate.tool === tool);
    // A request text is parsed before the tool name is looked up ([CG-PREC-12]), in the tool's
    // phase (`query` for an unknown tool), and read once ([CG-CONV-17]).
    const phase = operation?.phase ?? "query";
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
    if (operation === undefined) throw graphError("CG_INPUT_INVALID", "query", "unknownTool");
    const budgets = this.#config.budgets;
    if (compactByteLength(request, budgets.maxInputBytes) > budgets.maxInputBytes) {
      throw graphError("CG_INPUT_TOO_LARGE", phase);
    }
    checkRequestShape(operation, request, outOfRangeInteger);
    const snapshot = this.#snapshot;
    const result = await this.#dispatch(operation, request as JsonObject, snapshot, {
      ...options,
      start,
      outOfRangeInteger,
    });
    if (compactByteLength(result, budgets.maxResultBytes) > budgets.maxResultBytes) {
      throw graphError("CG_RESULT_TOO_LARGE", phase);
    }
    return result;
  }

  async #dispatch(
    operation: Operation,
    request: JsonObject,
    snapshot: Snapshot,
    options: CallContext,
  ): Promise<JsonObject> {
    switch (operation.tool) {
      case "describe_graph":
        return describeGraph(snapshot, this.#config, this.#executorName) as unknown as JsonObject;
      case "list_capabilities":
        return listCapabilities(
          snapshot,
          this.#config,
          request as ListRequest,
        ) as unknown as JsonObject;
      case "resolve_capabilities":
        return resolveCapabilities(
          snapshot,
          request as unknown as ResolveRequest,
        ) as unknown as JsonObject;
      case "match_capabilities":
        return (await this.#match(
          snapshot,
          request as unknown as MatchRequest,
          options,
        )) as unknown as JsonObject;
      case "read_document":
        return (await this.#readDocument(
          snapshot,
          request as unknown as ReadDocumentRequest,
        )) as unknown as JsonObject;
      default:
        throw graphError("CG_INPUT_INVALID", "query", "unknownTool");
    }
  }

  async #match(
    snapshot: Snapshot,
    request: MatchRequest,
    options: CallContext,
  ): Promise<MatchResult> {
    const context =
      request.context === undefined ? {} : checkContext(request.context, options.outOfRangeInteger);
    if (request.providers !== undefined) checkNamedProviders(snapshot, request.providers, "match");
    const executor = this.#executor;
    if (executor === undefined || this.#executorName === undefined)
      throw graphError("CG_MODEL_NOT_CONFIGURED", "match");
    const named = request.providers === undefined ? undefined : new Set(request.providers);
    const catalog = snapshot
      .catalog()
      .filter((entry) => named === undefined || named.has(entry.providerId));
    if (catalog.length > this.#config.budgets.maxCatalogEntries) {
      throw graphError("CG_CATALOG_TOO_LARGE", "match");
    }
    const timeoutMs = request.timeoutMs ?? configuredTimeoutMs(this.#config);
    const running = runMatch({
      executor,
      executorName: this.#executorName,
      request: request.request,
      context,
      catalog,
      limit:
        request.limit ?? (SCHEMA_DEFAULTS["match-request.schema.json#/properties/limit"] as number),
      deadline: options.start + timeoutMs,
      maxOutputBytes: this.#config.budgets.maxModelOutputBytes,
      revision: snapshot.revision,
      signal: options.signal,
      closed: this.#closing.signal,
    });
    const tracked = running.catch(() => undefined);
    this.#running.add(tracked);
    try {
      return await running;
    } finally {
      this.#running.delete(tracked);
    }
  }

  async #readDocument(
    snapshot: Snapshot,
    request: ReadDocumentRequest,
  ): Promise<ReadDocumentResult> {
    const providerId = request.capabilityId.slice(0, request.capabilityId.indexOf("::"));
    if (!inScope(snapshot, providerId)) throw graphError("CG_ACCESS_DENIED", "document");
    const provider = snapshot.byId.get(providerId);
    if (provider === undefined) throw graphError("CG_PROVIDER_NOT_FOUND", "document");
    const capability = capabilityById(snapshot, request.capabilityId);
    if (capability === undefined) throw graphError("CG_CAPABILITY_NOT_FOUND", "document");
    const document = capability.documents.find((candidate) => candidate.id === request.documentId);
    if (document === undefined) throw graphError("CG_DOCUMENT_NOT_FOUND", "document");
    if (document.kind === "url") throw graphError("CG_DOCUMENT_REFERENCE_ONLY", "document");
    const bodies = this.#config.bodies;
    const approved = bodies === "all" || (Array.isArray(bodies) && bodies.includes(providerId));
    if (!approved) throw graphError("CG_ACCESS_DENIED", "document", "body");
    if (provider.documentRoot === undefined)
      throw graphError("CG_DOCUMENT_ROOT_REQUIRED", "document");
    const body = await readDocumentFile(
      provider.documentRoot,
      document.path as string,
      this.#config.budgets.maxDocumentBytes,
    );
    return {
      capabilityId: request.capabilityId,
      documentId: request.documentId,
      mediaType: document.mediaType,
      bytes: body.bytes,
      sha256: body.sha256,
      text: body.text,
    };
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

/** Rows "shape" of section 5.1: an object, the pure-JSON rules (not inside `context`), the request schema. */
function checkRequestShape(
  operation: Operation,
  request: unknown,
  outOfRangeInteger: (path: () => JsonPath, value: number) => boolean,
): void {
  const phase = operation.phase;
  if (!isPlainObject(request)) throw pointerError("CG_INPUT_INVALID", phase, "/ must be an object");
  const isMatch = operation.tool === "match_capabilities";
  const pure = firstPureFault(request, {
    skip: (path) => (isMatch && path.length === 1 && path[0] === "context" ? "inside" : undefined),
    outOfRangeInteger,
  });
  if (pure !== undefined)
    throw pointerError("CG_INPUT_INVALID", phase, pureFaultMessage(request, pure));
  const validate = REQUEST_VALIDATORS[operation.request];
  if (validate === undefined) throw new Error(`no validator for ${operation.request}`);
  if (!validate(request))
    throw pointerError(
      "CG_INPUT_INVALID",
      phase,
      schemaFaultMessage(request, validate.errors ?? [], validate),
    );
}

/** The context rules ([CG-CTX-1], [CG-CTX-2], [CG-MSG-11]): first failure wins, key before value. */
function checkContext(
  context: unknown,
  outOfRangeInteger: (path: () => JsonPath, value: number) => boolean,
): Record<string, ContextValue> {
  const fault = (message: string): GraphError =>
    pointerError("CG_CONTEXT_INVALID", "match", message);
  if (!isPlainObject(context)) throw fault("/context must be an object");
  const keys = Object.keys(context);
  if (keys.length > 64) throw fault("/context must have at most 64 keys");
  for (const key of keys) {
    if (!validateContextKey(key))
      throw fault("/context keys must match ^[A-Za-z][A-Za-z0-9_.-]{0,63}$");
    const value = context[key];
    if (typeof value === "string") {
      if (!validateContextValue(value))
        throw fault("/context values must be strings of at most 1024 characters");
      if (hasLoneSurrogate(value))
        throw fault("/context values must be strings of valid Unicode text");
    } else if (typeof value === "number" && Number.isFinite(value)) {
      if (outOfRangeInteger(() => ["context", key], value)) {
        throw fault("/context values must be integers between -2^53 and 2^53");
      }
    } else if (typeof value !== "boolean") {
      throw fault("/context values must be strings, finite numbers or booleans");
    }
  }
  return structuredClone(context) as Record<string, ContextValue>;
}

/**
 * How a request text is parsed ([CG-MSG-13]): integer literals of at most 400 digits, and a
 * container at depth 33 skipped and reported as the text's depth fault ([CG-CONV-15]).
 */

export type RequestTextOutcome =
  | { readonly kind: "parsed"; readonly text: string; readonly value: unknown }
  | { readonly kind: "not-json"; readonly reason: "syntax" | "utf8" | "bom" };

/**
 * Judge a request text the way `call` does when it is given one ([CG-CONV-4], [CG-MSG-13]),
 * for a surface that must judge it before a graph is open (CLI `--arguments`). Throws the
 * GraphError of a duplicate member name or an over-long integer literal (in the tool's phase;
 * `query` for an unknown tool); a text that is not JSON or not UTF-8 is returned as `not-json`
 * (a usage error of the CLI). Pass the returned `text` to `call`, which keeps the literals.
 */
export function parseRequestText(tool: string, text: string | Uint8Array): RequestTextOutcome {
  const phase = OPERATIONS.find((operation) => operation.tool === tool)?.phase ?? "query";
  const parsed =
    typeof text === "string"
      ? parseJsonText(text, REQUEST_TEXT)
      : parseJsonBytes(text, REQUEST_TEXT);
  if (parsed.ok) {
    return {
      kind: "parsed",
      text: typeof text === "string" ? text : new TextDecoder().decode(text),
      value: parsed.value,
    };
  }
  const fault = parsed.fault;
  if (fault.kind === "syntax" || fault.kind === "utf8" || fault.kind === "bom") {
    return { kind: "not-json", reason: fault.kind };
  }
  throw pointerError("CG_INPUT_INVALID", phase, textFaultMessage(fault, "request"));
}
