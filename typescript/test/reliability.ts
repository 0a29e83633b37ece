// Shared engines of the reliability tests (responsiveness, document races, storms): the exact
// error object the contract's registry prescribes, a ticker on the event loop, and a catalog of
// long capability texts.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { GraphError } from "../src/index.js";
import { repositoryRoot } from "./support.js";

interface TaxonomyCode {
  readonly code: string;
  readonly phases: readonly string[];
  readonly defaultAction?: string;
  readonly executorActions: readonly string[];
  readonly messages: Readonly<Record<string, string>>;
  readonly pointerMessages: boolean;
}

const TAXONOMY = JSON.parse(
  readFileSync(join(repositoryRoot, "spec", "capability-graph", "taxonomy.json"), "utf8"),
) as { codes: TaxonomyCode[] };

/** The exact error object the contract's taxonomy prescribes for `code` in `phase`. */
export function expected(code: string, phase: string, variant = "default"): Record<string, string> {
  const entry = TAXONOMY.codes.find((candidate) => candidate.code === code);
  if (entry === undefined) throw new Error(`the taxonomy has no ${code}`);
  const message = entry.messages[variant];
  if (message === undefined) throw new Error(`the taxonomy has no ${variant} message for ${code}`);
  return {
    code,
    phase,
    message,
    ...(entry.defaultAction === undefined ? {} : { nextAction: entry.defaultAction }),
  };
}

/**
 * Why `error` is not an error object of the contract (undefined when it is one): a registered
 * code in one of the code's phases, with a nextAction the code may carry and one of its
 * registered messages (any text for a code of pointer messages), and nothing else.
 */
export function undefinedErrorProblem(error: unknown): string | undefined {
  const { code, phase, message, nextAction, ...rest } = error as Record<string, unknown>;
  const entry = TAXONOMY.codes.find((candidate) => candidate.code === code);
  if (entry === undefined) return `an unregistered code: ${JSON.stringify(error)}`;
  if (Object.keys(rest).length > 0) return `members beyond the error object's`;
  if (!entry.phases.includes(phase as string)) return `${String(code)} in phase ${String(phase)}`;
  const actions = [entry.defaultAction, ...entry.executorActions];
  if (!actions.includes(nextAction as string | undefined))
    return `${String(code)} with nextAction ${String(nextAction)}`;
  if (typeof message !== "string") return `${String(code)} without a message`;
  if (!entry.pointerMessages && !Object.values(entry.messages).includes(message))
    return `${String(code)} with an unregistered message`;
  return undefined;
}

/** A promise's outcome as JSON: its value, or the error object of the GraphError it threw. */
export async function outcomeOf(work: Promise<unknown>): Promise<unknown> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof GraphError) return error.toJSON();
    return { notAGraphError: String(error) };
  }
}

/** What a ticker on the event loop saw while a promise was pending. */
export interface Ticks {
  readonly outcome: unknown;
  /** How many times the ticker ran between the start and the end of the work. */
  readonly ticks: number;
  /** The longest gap between two ticks beyond the period, in milliseconds. */
  readonly maxStallMs: number;
  readonly elapsedMs: number;
}

/**
 * Start `work` while a setTimeout chain ticks every `periodMs`; the longest gap between two ticks
 * beyond the period is the stall the work caused (plus the machine's own scheduling noise). A
 * loop kept busy by the work serves no tick at all.
 */
export async function withTicker(work: () => Promise<unknown>, periodMs = 5): Promise<Ticks> {
  let ticks = 0;
  let maxStallMs = 0;
  let running = true;
  let last = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    const now = performance.now();
    ticks += 1;
    maxStallMs = Math.max(maxStallMs, now - last - periodMs);
    last = now;
    if (running) timer = setTimeout(tick, periodMs);
  };
  timer = setTimeout(tick, periodMs);
  const started = performance.now();
  const outcome = await outcomeOf(work());
  const elapsedMs = performance.now() - started;
  running = false;
  clearTimeout(timer);
  return { outcome, ticks, maxStallMs, elapsedMs };
}

/** Words for long, legal capability texts (ASCII letters: the tokenizer's common case). */
const WORDS = (
  "request body schema route validate contract payment invoice refund customer account token " +
  "session cache queue retry webhook upload download stream render template query index search " +
  "filter export import report metric trace log alert deploy build release"
).split(" ");

/**
 * A provider of `count` capabilities whose description and whenToUse are each about `textChars`
 * characters of ordinary words (at most the schema's 8,192).
 */
export function longCatalogDefinition(count: number, textChars: number, providerId = "big") {
  const capabilities = [];
  for (let number = 0; number < count; number += 1) {
    const words = [];
    for (let index = 0; index < Math.floor(textChars / 6); index += 1)
      words.push(WORDS[(number * 7 + index * 13) % WORDS.length]);
    const text = words.join(" ").slice(0, Math.min(textChars, 8192));
    capabilities.push({
      id: `c${number}`,
      name: `${WORDS[number % WORDS.length]} capability ${number}`,
      description: text,
      whenToUse: [...text].reverse().join("").trim() || text,
      tags: [WORDS[number % 11], `n${number}`],
    });
  }
  return { providerId, name: "Big", version: "1", capabilities };
}
