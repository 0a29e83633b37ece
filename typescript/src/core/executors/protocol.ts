// The executor protocol of the executor annex (spec/capability-graph/executors.md, sections 1-5)
// in TypeScript. An executor receives one job per match and returns a raw output or throws; the
// match pipeline (src/match.ts) owns deadlines, cancellation, close, projection of failures and
// validation of the output, so an executor never has to be trusted.

/** One entry of the authorized catalog: a capability summary plus `whenToUse` when declared. */
export interface CatalogEntry {
  readonly id: string;
  readonly providerId: string;
  readonly name: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly whenToUse?: string;
}

/** A validated context value ([CG-CTX-1]): a string, a finite number or a boolean. */
export type ContextValue = string | number | boolean;

/** The job an executor receives (executors.md section 1). */
export interface ExecutorJob {
  /** The request text, 1..4096 characters, already validated. */
  readonly request: string;
  /** The validated context, passed unchanged ([CG-CTX-4]). */
  readonly context: Readonly<Record<string, ContextValue>>;
  /** The authorized catalog, in listing order. */
  readonly catalog: readonly CatalogEntry[];
  /** The maximum number of candidates, 1..20. */
  readonly limit: number;
  /**
   * The absolute deadline of the match on the monotonic clock of `performance.now()`
   * (milliseconds), so an executor can bound its own transport.
   */
  readonly deadline: number;
  /** `budgets.maxModelOutputBytes`: an executor reading a transport may stop early past it. */
  readonly maxOutputBytes: number;
  /**
   * Aborted when the match is stopped: deadline, the caller's cancel signal, or the graph's
   * close. On abort the executor MUST stop its work (kill its subprocess trees, close its
   * connections) and only then settle the promise it returned; the pipeline waits for that
   * settlement (at most 10 s) before it reports, and discards whatever the promise carries.
   */
  readonly signal: AbortSignal;
}

/**
 * What an executor may raise besides a plain exception: an error carrying a string `code` and
 * optionally a `nextAction` (executors.md section 3). Any thrown value with a string `code`
 * member is treated as one; this class is the convenient way to raise one. Only the code and
 * the action are ever looked at; the message never reaches a caller.
 */
export class ExecutorError extends Error {
  readonly code: string;
  readonly nextAction: string | undefined;

  constructor(code: string, nextAction?: string, message = "executor error") {
    super(message);
    this.name = "ExecutorError";
    this.code = code;
    this.nextAction = nextAction;
  }
}

/** A model executor: the SDK accepts any object of this shape through `open(config, {executor})`. */
export interface Executor {
  /**
   * The executor's name as `describe_graph` and match results report it ([CG-MODEL-13]); for an
   * object given by an SDK user a name not matching the ExecutorName pattern
   * `^[a-z][a-z0-9._-]{0,63}$` (lowercase) is reported as `custom`.
   */
  readonly name?: string;
  /** Run one job; resolve with the raw output (any value; it is validated by the pipeline). */
  execute(job: ExecutorJob): Promise<unknown>;
  /** Called once when the graph closes; release processes, connections and caches. */
  close?(): Promise<void>;
}

/** The `model` section of the configuration after it passed `config.schema.json`. */
export type ModelSection = Readonly<Record<string, unknown>> & { readonly executor: string };

/** One line of what `doctor` reports about the executor's prerequisites (spec section 12). */
export interface ExecutorDiagnosis {
  readonly status: "ok" | "warn" | "fail";
  /** One line of printable text shown to the host; may name local paths, never a secret. */
  readonly message: string;
}

/** How the registry builds an executor from the configuration's model section. */
export interface ExecutorFactory {
  /**
   * Step 3 of open ([CG-OPEN-1]): the rules of the executor annex that the schema cannot
   * express. Returns the pointer message of the first fault (reported as CG_CONFIG_INVALID,
   * phase config), or undefined when the section is acceptable.
   */
  checkOptions?(model: ModelSection): string | undefined;
  /** Build the executor for an opened graph. Must not start processes or connections yet. */
  create(model: ModelSection): Executor;
  /** For `doctor`: check the executor's prerequisites without running a match. */
  diagnose?(model: ModelSection, signal: AbortSignal): Promise<ExecutorDiagnosis>;
}
