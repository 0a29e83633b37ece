// The `lexical` executor (executors.md section 8; [CG-MODEL-14]): offline BM25 ranking over the
// authorized catalog, so that every implementation returns the same candidates, order and
// confidences for the same catalog and request. Indexing (a cold catalog of 999 texts at the
// schema's maximum length takes about a second) and ranking run on the event loop in slices of a
// few milliseconds, so the match's deadline, a close and every other request are served on time.

import {
  LOWERCASE,
  LOWERCASE_SPECIAL,
  NORMALIZABLE,
  WORD as WORD_RANGES,
} from "../../_generated/lexical-unicode.js";
import type { CatalogEntry, Executor, ExecutorFactory, ExecutorJob } from "./protocol.js";

const FIELD_WEIGHTS = { name: 3.0, tags: 2.0, whenToUse: 1.5, description: 1.0 } as const;
const K1 = 1.2;
const B = 0.75;
const THRESHOLD = 0.05;

const STOPWORDS = new Set(
  (
    "a about an and any are as at be but by can could do does for from get how i if in into is it " +
    "its me my need of on or our please should so some that the their them then there these this " +
    "to use using want was we what when where which who why will with would you your " +
    "的 了 和 是 在 我 你 要 把 吗 呢 请 一 个"
  ).split(" "),
);

// The character data comes from the contract's lexical-unicode.json ([CG-MODEL-16]), never from
// the runtime's Unicode tables (\p{..}, toLowerCase), whose version differs between runtimes.
const hex = (codePoint: number) => `\\u{${codePoint.toString(16)}}`;
const characterClass = (ranges: readonly (readonly [number, number])[]) =>
  ranges.map(([first, last]) => `${hex(first)}-${hex(last)}`).join("");
interface UnicodeTables {
  /** A code point NFKC is not given as it is: it becomes a space first. */
  readonly notNormalizable: RegExp;
  /** Words: maximal runs of letters and numbers (general categories L* and N*). */
  readonly word: RegExp;
  /** Per code point, without context (no final-sigma rule). */
  readonly lower: ReadonlyMap<number, string>;
}

let tables: UnicodeTables | undefined;

/**
 * The tables, built on the first text that is not ASCII (building them takes milliseconds that
 * a command matching ASCII text, or not matching at all, does not spend at start-up).
 */
function unicodeTables(): UnicodeTables {
  if (tables === undefined) {
    const lower = new Map<number, string>();
    for (const [first, last, step, delta] of LOWERCASE) {
      for (let codePoint = first; codePoint <= last; codePoint += step)
        lower.set(codePoint, String.fromCodePoint(codePoint + delta));
    }
    for (const [codePoint, mapped] of LOWERCASE_SPECIAL)
      lower.set(codePoint, String.fromCodePoint(...mapped));
    tables = {
      notNormalizable: new RegExp(`[^${characterClass(NORMALIZABLE)}]`, "gu"),
      word: new RegExp(`[${characterClass(WORD_RANGES)}]+`, "gu"),
      lower,
    };
  }
  return tables;
}
const ASCII_WORDS = /[a-z0-9]+/g;

function isAscii(text: string): boolean {
  for (let index = 0; index < text.length; index += 1)
    if (text.charCodeAt(index) > 0x7f) return false;
  return true;
}

function lowercaseByTable(text: string): string {
  const { lower } = unicodeTables();
  let lowered = "";
  for (const character of text)
    lowered += lower.get(character.codePointAt(0) as number) ?? character;
  return lowered;
}

/** Every normalizable code point that the lowercase tables leave alone, but capital sigma. */
function unmappedText(): string {
  const { lower } = unicodeTables();
  const parts: string[] = [];
  for (const [first, last] of NORMALIZABLE) {
    for (let start = first; start <= last; start += 4096) {
      const codePoints: number[] = [];
      for (let codePoint = start; codePoint <= Math.min(last, start + 4095); codePoint += 1)
        if (!lower.has(codePoint) && codePoint !== 0x3a3) codePoints.push(codePoint);
      parts.push(String.fromCodePoint(...codePoints));
    }
  }
  return parts.join("");
}

// `toLowerCase` is far faster than a loop over code points; it gives the same text, once capital
// sigma (its one context rule) is replaced, when this runtime lowercases every code point that
// can reach it as the tables say -- checked once, on the first text that needs it.
let runtimeLowerAgrees: boolean | undefined;

function lowercase(text: string): string {
  if (runtimeLowerAgrees === undefined) {
    const unmapped = unmappedText();
    runtimeLowerAgrees =
      unmapped.toLowerCase() === unmapped &&
      [...unicodeTables().lower].every(
        ([codePoint, lowered]) => String.fromCodePoint(codePoint).toLowerCase() === lowered,
      );
  }
  return runtimeLowerAgrees
    ? text.replaceAll("\u03a3", "\u03c3").toLowerCase()
    : lowercaseByTable(text);
}

/** Steps 1 and 2 of section 8.1: the normalized, lowercased words of `text`. */
function words(text: string): string[] {
  // ASCII is NFKC-stable and lowercases as ASCII.
  if (isAscii(text)) return text.toLowerCase().match(ASCII_WORDS) ?? [];
  const { notNormalizable, word } = unicodeTables();
  const normalized = text.replace(notNormalizable, " ").normalize("NFKC");
  return lowercase(normalized).match(word) ?? [];
}

function isCjk(codePoint: number): boolean {
  return (
    (codePoint >= 0x3040 && codePoint <= 0x30ff) ||
    (codePoint >= 0x31f0 && codePoint <= 0x31ff) ||
    (codePoint >= 0x3400 && codePoint <= 0x4dbf) ||
    (codePoint >= 0x4e00 && codePoint <= 0x9fff) ||
    (codePoint >= 0xf900 && codePoint <= 0xfaff) ||
    (codePoint >= 0x20000 && codePoint <= 0x3ffff)
  );
}

/** Section 8.1: NFKC, lowercase, words of letters and numbers, CJK unigrams and bigrams, stopwords, plurals. */
export function tokenize(text: string): string[] {
  const terms: string[] = [];
  for (const word of words(text)) {
    let piece: string[] = [];
    let pieceIsCjk = false;
    const flush = () => {
      if (piece.length === 0) return;
      if (pieceIsCjk) {
        terms.push(...piece);
        for (let index = 0; index + 1 < piece.length; index += 1)
          terms.push(`${piece[index]}${piece[index + 1]}`);
      } else {
        terms.push(piece.join(""));
      }
      piece = [];
    };
    for (const character of word) {
      const cjk = isCjk(character.codePointAt(0) as number);
      if (piece.length > 0 && cjk !== pieceIsCjk) flush();
      pieceIsCjk = cjk;
      piece.push(character);
    }
    flush();
  }
  return terms.filter((term) => !STOPWORDS.has(term)).map(singular);
}

/** The plural rule of section 8.1 step 5, for ASCII words of more than 3 letters. */
function singular(word: string): string {
  if (word.length <= 3 || !/^[a-z]+$/.test(word)) return word;
  if (word.endsWith("ies") && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith("sses")) return word.slice(0, -2);
  if (word.endsWith("s") && !word.endsWith("ss") && !word.endsWith("us") && !word.endsWith("is")) {
    return word.slice(0, -1);
  }
  return word;
}

interface EntryIndex {
  /** tf(t, d): the weighted occurrences of each term. */
  readonly frequencies: ReadonlyMap<string, number>;
  /** dl(d): the weighted number of terms. */
  readonly length: number;
}

/** Catalog entries are immutable per snapshot, so their index is computed once per entry object. */
const indexes = new WeakMap<CatalogEntry, EntryIndex>();

function indexOf(entry: CatalogEntry): EntryIndex {
  const cached = indexes.get(entry);
  if (cached !== undefined) return cached;
  const frequencies = new Map<string, number>();
  let length = 0;
  const add = (terms: readonly string[], weight: number) => {
    for (const term of terms) frequencies.set(term, (frequencies.get(term) ?? 0) + weight);
    length += weight * terms.length;
  };
  add(tokenize(entry.name), FIELD_WEIGHTS.name);
  add(entry.tags.flatMap(tokenize), FIELD_WEIGHTS.tags);
  if (entry.whenToUse !== undefined) add(tokenize(entry.whenToUse), FIELD_WEIGHTS.whenToUse);
  add(tokenize(entry.description), FIELD_WEIGHTS.description);
  const index = { frequencies, length };
  if (Object.isFrozen(entry)) indexes.set(entry, index);
  return index;
}

/** Round to the nearest multiple of 0.0001 from the exact value of the double, a value exactly
 * halfway rounding up ([CG-MODEL-14]): what `toFixed` does. */
function round4(value: number): number {
  return Number(value.toFixed(4));
}

/**
 * The ranking as steps of work: it yields whenever `due()` says its time slice is used up (between
 * two catalog entries, or 256 entries of the scoring pass), and returns the executor's output.
 */
function* rankSteps(
  request: string,
  catalog: readonly CatalogEntry[],
  limit: number,
  due: () => boolean,
): Generator<void, LexicalOutput, void> {
  // A request without terms is unknown, even over an empty catalog ([CG-MODEL-17]).
  const query = [...new Set(tokenize(request))];
  if (query.length === 0) return { status: "unknown", candidates: [] };
  if (catalog.length === 0) return { status: "no_match", candidates: [] };
  const entries: Array<{ entry: CatalogEntry; index: EntryIndex }> = [];
  // Gathered while indexing, so that nothing after it walks every entry without yielding: the
  // total length, and how many entries hold each query term.
  let total = 0;
  const containing = new Map<string, number>(query.map((term) => [term, 0]));
  for (const entry of catalog) {
    // Indexing a cold catalog is the long part (999 texts of 8,192 characters take seconds);
    // each entry's index is kept, so the progress of a match that was stopped is not lost.
    if (due()) yield;
    const index = indexOf(entry);
    entries.push({ entry, index });
    total += index.length;
    for (const term of query)
      if ((index.frequencies.get(term) ?? 0) > 0)
        containing.set(term, (containing.get(term) as number) + 1);
  }
  const average = total / entries.length === 0 ? 1 : total / entries.length;
  const count = entries.length;
  const idf = new Map<string, number>();
  for (const term of query) {
    const holding = containing.get(term) as number;
    idf.set(term, Math.log(1 + (count - holding + 0.5) / (holding + 0.5)));
  }
  const idfSum = query.reduce((sum, term) => sum + (idf.get(term) as number), 0);
  // The best `limit` so far, the worst at the root: a match over a million entries keeps a
  // few candidates, never sorts every scored entry.
  const best = new BoundedRanking(limit);
  for (const [position, { entry, index }] of entries.entries()) {
    if (position % 256 === 0 && due()) yield;
    let score = 0;
    for (const term of query) {
      const frequency = index.frequencies.get(term) ?? 0;
      if (frequency <= 0) continue;
      score +=
        ((idf.get(term) as number) * frequency * (K1 + 1)) /
        (frequency + K1 * (1 - B + (B * index.length) / average));
    }
    const confidence = round4(score / ((K1 + 1) * idfSum));
    if (confidence >= THRESHOLD) best.offer({ id: entry.id, confidence });
  }
  const candidates = best.ranked();
  if (candidates.length === 0) return { status: "no_match", candidates: [] };
  return { status: "matched", candidates };
}

type Candidate = { id: string; confidence: number };

/** Whether `left` ranks before `right`: higher confidence first, then the smaller id. */
function ranksBefore(left: Candidate, right: Candidate): boolean {
  return left.confidence !== right.confidence
    ? left.confidence > right.confidence
    : left.id < right.id;
}

/**
 * The best `limit` candidates offered, in a binary heap whose root is the worst of them:
 * the same candidates, in the same order, as sorting all of them and keeping the first `limit`.
 */
class BoundedRanking {
  private readonly heap: Candidate[] = [];

  constructor(private readonly limit: number) {}

  offer(candidate: Candidate): void {
    const heap = this.heap;
    if (heap.length < this.limit) {
      heap.push(candidate);
      let child = heap.length - 1;
      while (child > 0) {
        const parent = (child - 1) >> 1;
        if (!ranksBefore(heap[parent] as Candidate, heap[child] as Candidate)) break;
        [heap[parent], heap[child]] = [heap[child] as Candidate, heap[parent] as Candidate];
        child = parent;
      }
      return;
    }
    if (heap.length === 0 || !ranksBefore(candidate, heap[0] as Candidate)) return;
    heap[0] = candidate;
    let parent = 0;
    for (;;) {
      const left = 2 * parent + 1;
      const right = left + 1;
      let worst = parent;
      if (left < heap.length && ranksBefore(heap[worst] as Candidate, heap[left] as Candidate))
        worst = left;
      if (right < heap.length && ranksBefore(heap[worst] as Candidate, heap[right] as Candidate))
        worst = right;
      if (worst === parent) return;
      [heap[parent], heap[worst]] = [heap[worst] as Candidate, heap[parent] as Candidate];
      parent = worst;
    }
  }

  ranked(): Candidate[] {
    return [...this.heap].sort((left, right) => (ranksBefore(left, right) ? -1 : 1));
  }
}

type LexicalOutput = {
  readonly status: "matched" | "no_match" | "unknown";
  readonly candidates: Array<{ id: string; confidence: number }>;
};

/** The executor's output for `request` over `catalog`, computed without pausing. */
export function rank(request: string, catalog: readonly CatalogEntry[], limit: number) {
  const steps = rankSteps(request, catalog, limit, () => false);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** The longest stretch of ranking work between two turns of the event loop, in milliseconds. */
const SLICE_MS = 2;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

class LexicalExecutor implements Executor {
  readonly name = "lexical";

  /**
   * Index and rank on the event loop in slices of about SLICE_MS, with a turn of the loop in
   * between: timers (the match's deadline), I/O and every other request wait at most one slice,
   * and a stopped match ends at the next slice ([CG-MODEL-3], [CG-MODEL-4]).
   */
  async execute(job: ExecutorJob): Promise<unknown> {
    let sliceEnd = performance.now() + SLICE_MS;
    const due = () => {
      const now = performance.now();
      if (now < sliceEnd) return false;
      sliceEnd = now + SLICE_MS;
      return true;
    };
    const steps = rankSteps(job.request, job.catalog, job.limit, due);
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
      await nextTurn();
      if (job.signal.aborted) throw new Error("stopped");
      sliceEnd = performance.now() + SLICE_MS;
    }
  }
}

export const lexicalExecutorFactory: ExecutorFactory = {
  create() {
    return new LexicalExecutor();
  },
  async diagnose() {
    return { status: "ok", message: "The lexical executor is configured" };
  },
};
