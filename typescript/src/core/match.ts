// The match pipeline after the request checks (executors.md sections 2 to 4; [CG-MODEL-3] ..
// [CG-MODEL-10]): run the executor against the deadline, the caller's cancel signal and the
// graph's close; stop it and wait for it before reporting; project what it raised; validate
// what it returned.
import { REGISTRY } from "../_generated/taxonomy.js";
import type { MatchResult } from "../_generated/types/match-result.js";
import { validateExecutorOutput } from "../_generated/validators.js";
import { onAbort } from "./cancel.js";
import { type ErrorCode, GraphError, graphError, type NextAction } from "./errors.js";
import type { CatalogEntry, ContextValue, Executor } from "./executors/protocol.js";
import { compactByteLength, hasLoneSurrogate, isPlainObject } from "./json/pure.js";

/** How long a stopped executor is waited for before the error is reported anyway. */
const STOP_GRACE_MS = 10_000;

export interface MatchRun {
  readonly executor: Executor;
  readonly executorName: string;
  readonly request: string;
  readonly context: Readonly<Record<string, ContextValue>>;
  readonly catalog: readonly CatalogEntry[];
  readonly limit: number;
  /** Absolute deadline on the performance.now() clock. */
  readonly deadline: number;
  readonly maxOutputBytes: number;
  readonly revision: string;
  /** The caller's cancel signal. */
  readonly signal: AbortSignal | undefined;
  /** Aborted when the graph closes. */
  readonly closed: AbortSignal;
}

type Outcome =
  | { readonly kind: "answer"; readonly value: unknown }
  | { readonly kind: "raised"; readonly error: unknown }
  | { readonly kind: "closed" }
  | { readonly kind: "cancelled" }
  | { readonly kind: "deadline" };

export async function runMatch(run: MatchRun): Promise<MatchResult> {
  // Before calling the executor: closed, already cancelled, deadline passed ([CG-MODEL-3]).
  if (run.closed.aborted) throw graphError("CG_GRAPH_CLOSED", "lifecycle");
  if (run.signal?.aborted) throw graphError("CG_MODEL_CANCELLED", "match");
  if (performance.now() >= run.deadline) throw graphError("CG_MODEL_TIMEOUT", "match");

  const stop = new AbortController();
  let settled: Outcome | undefined;
  let execution: Promise<unknown>;
  try {
    execution = Promise.resolve(
      run.executor.execute({
        request: run.request,
        context: run.context,
        catalog: run.catalog,
        limit: run.limit,
        deadline: run.deadline,
        maxOutputBytes: run.maxOutputBytes,
        signal: stop.signal,
      }),
    );
  } catch (error) {
    execution = Promise.reject(error);
  }
  const answered = execution.then(
    (value): Outcome => {
      settled = { kind: "answer", value };
      return settled;
    },
    (error: unknown): Outcome => {
      settled = { kind: "raised", error };
      return settled;
    },
  );
  const outcome = await firstOf(answered, run, () => settled);
  if (outcome.kind === "answer") return validateOutput(outcome.value, run);
  if (outcome.kind === "raised") throw projectExecutorError(outcome.error);
  // Closed, cancelled or timed out: stop the executor and wait until it has stopped.
  stop.abort();
  await Promise.race([answered, delay(STOP_GRACE_MS)]);
  if (outcome.kind === "closed") throw graphError("CG_GRAPH_CLOSED", "lifecycle");
  if (outcome.kind === "cancelled") throw graphError("CG_MODEL_CANCELLED", "match");
  throw graphError("CG_MODEL_TIMEOUT", "match");
}

/** Wait for the first event, then decide in the order closed, cancelled, answered, deadline. */
function firstOf(
  answered: Promise<Outcome>,
  run: MatchRun,
  current: () => Outcome | undefined,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const cleanups: Array<() => void> = [];
    const decide = () => {
      for (const cleanup of cleanups) cleanup();
      if (run.closed.aborted) resolve({ kind: "closed" });
      else if (run.signal?.aborted) resolve({ kind: "cancelled" });
      else resolve(current() ?? { kind: "deadline" });
    };
    const timer = setTimeout(decide, Math.max(0, run.deadline - performance.now()));
    cleanups.push(() => clearTimeout(timer));
    for (const signal of [run.closed, run.signal]) {
      if (signal === undefined) continue;
      // One listener per signal however many matches wait on it (the graph's close signal is
      // shared by every match).
      cleanups.push(onAbort(signal, decide));
    }
    void answered.then(decide);
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
  });
}

/**
 * An executor error with a CG_MODEL_* code keeps its code and a legal action; anything else is
 * CG_MODEL_UNAVAILABLE/retry; the message is always the registry's ([CG-MODEL-5] .. [CG-MODEL-7]).
 */
export function projectExecutorError(raised: unknown): GraphError {
  const code =
    raised !== null && typeof raised === "object" ? (raised as { code?: unknown }).code : undefined;
  if (typeof code === "string" && code.startsWith("CG_MODEL_") && Object.hasOwn(REGISTRY, code)) {
    const entry = REGISTRY[code as ErrorCode];
    const action = (raised as { nextAction?: unknown }).nextAction;
    const legal =
      typeof action === "string" &&
      (action === entry.defaultAction ||
        (entry.executorActions as readonly string[]).includes(action));
    return new GraphError(
      entry.code,
      "match",
      entry.messages.default,
      legal ? (action as NextAction) : entry.defaultAction,
    );
  }
  return graphError("CG_MODEL_UNAVAILABLE", "match");
}

/** Output validation in the order of [CG-MODEL-8]. */
function validateOutput(output: unknown, run: MatchRun): MatchResult {
  if (!isJsonData(output)) throw graphError("CG_MODEL_OUTPUT_INVALID", "match");
  if (compactByteLength(output, run.maxOutputBytes) > run.maxOutputBytes) {
    throw graphError("CG_MODEL_OUTPUT_TOO_LARGE", "match");
  }
  if (!validateExecutorOutput(output)) throw graphError("CG_MODEL_OUTPUT_INVALID", "match");
  const shaped = output as {
    status: MatchResult["status"];
    candidates: Array<{ id: string; confidence: number; reason?: string }>;
  };
  if (shaped.candidates.length > run.limit) throw graphError("CG_MODEL_OUTPUT_INVALID", "match");
  const catalog = new Set(run.catalog.map((entry) => entry.id));
  const named = new Set<string>();
  for (const candidate of shaped.candidates) {
    if (!catalog.has(candidate.id) || named.has(candidate.id)) {
      throw graphError("CG_MODEL_INVALID_SELECTION", "match");
    }
    named.add(candidate.id);
  }
  return {
    status: shaped.status,
    revision: run.revision,
    executor: run.executorName,
    candidates: shaped.candidates.map((candidate) => ({
      id: candidate.id,
      confidence: candidate.confidence,
      ...(candidate.reason === undefined ? {} : { reason: candidate.reason }),
    })),
  };
}

/** JSON data: plain objects, arrays, strings without lone surrogates, finite numbers, booleans, null. */
function isJsonData(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (value === null || typeof value === "boolean") continue;
    if (typeof value === "string") {
      if (hasLoneSurrogate(value)) return false;
      continue;
    }
    if (typeof value === "number") {
      if (!Number.isFinite(value)) return false;
      continue;
    }
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index += 1) {
        if (!(index in value)) return false;
        stack.push(value[index]);
      }
      continue;
    }
    if (!isPlainObject(value) || Object.getOwnPropertySymbols(value).length > 0) return false;
    for (const key of Object.keys(value)) {
      if (hasLoneSurrogate(key)) return false;
      stack.push(value[key]);
    }
  }
  return true;
}
