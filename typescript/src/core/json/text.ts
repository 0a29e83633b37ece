// Over 400 lines: one hand-written JSON text parser (duplicate names, big integers, depth, UTF-8) that must stay in one scan, and the JSON.parse fast path that stands for it when provably the same.
// A strict JSON text parser (RFC 8259) for the texts the contract parses itself: configuration
// files, definition files and request texts. JSON.parse cannot be used for them: it keeps the
// last of two duplicate member names ([CG-CONV-4], [CG-CONV-5]), silently rounds integer
// literals beyond 2^53 ([CG-CONV-6]) and gives no position. No text is read deeper than the depth
// rule looks ([CG-CONV-15]): a container at the skip depth is skipped to the bracket that closes it
// (brackets counted outside strings, nothing else of its content read) and stands as TOO_DEEP, so
// the outcome never depends on how deep a parser can go. A text that is not JSON is not JSON
// whatever else it holds ([CG-MSG-15]): the other faults of a text are recorded and reported only
// once the whole text parsed.

/** A path inside a JSON value: member names (strings) and array indexes (numbers). */
export type JsonPath = ReadonlyArray<string | number>;

export type TextFault =
  | { readonly kind: "utf8"; readonly offset: number }
  | { readonly kind: "bom" }
  | {
      readonly kind: "syntax";
      readonly offset: number;
      readonly line: number;
      readonly column: number;
      readonly reason: string;
    }
  | { readonly kind: "duplicate"; readonly path: JsonPath }
  | { readonly kind: "long-integer"; readonly path: JsonPath }
  | { readonly kind: "depth"; readonly path: JsonPath };

/** A container at the skip depth, not read ([CG-CONV-15]): the depth rule reports it. */
export class TooDeep {}
export const TOO_DEEP: TooDeep = Object.freeze(new TooDeep());

/** The depth rule's limit: the deepest container allowed is at depth 32 ([CG-CONV-11]). */
const DEEPEST = 32;
/** A configuration's inline definitions lie at depth 3 (`/providers/N/definition`). */
export const CONFIG_SKIP_DEPTH = 3 + DEEPEST + 1;

export type ParseOutcome =
  | {
      readonly ok: true;
      readonly value: unknown;
      /**
       * The paths (keys of `pathKey`) of integer literals outside -2^53..2^53: the value holds
       * them rounded, so the range rule ([CG-CONV-6]) must look here, not at the number.
       */
      readonly bigIntegers: ReadonlySet<string>;
    }
  | { readonly ok: false; readonly fault: TextFault };

/** The key of a path in `bigIntegers`. */
export function pathKey(path: JsonPath): string {
  return JSON.stringify(path);
}

/** In a request text, an integer literal with more digits than this is refused while parsing ([CG-MSG-13]). */
export const MAX_INTEGER_DIGITS = 400;

/** How a request text is parsed, and every text read by its rules (a model's answer, [CG-MODEL-25]). */
export const REQUEST_TEXT: ParseOptions = {
  maxIntegerDigits: MAX_INTEGER_DIGITS,
  depthIsFault: true,
};

export interface ParseOptions {
  /**
   * Refuse integer literals with more digits than this (request texts: MAX_INTEGER_DIGITS).
   * Files (configurations, definitions) have no such limit: their size is bounded instead.
   */
  readonly maxIntegerDigits?: number;
  /**
   * The depth (the root at 0) of the containers that are skipped and stand as TOO_DEEP: 33 for a
   * request or a definition, less for a text held at some depth of a request (a `--context`
   * value), CONFIG_SKIP_DEPTH for a configuration ([CG-CONV-15]).
   */
  readonly skipDepth?: number;
  /** Report the first skipped container as a `depth` fault of the text (request texts). */
  readonly depthIsFault?: boolean;
}

const MAX_SAFE_MAGNITUDE = 2n ** 53n;
const MAX_SAFE_MAGNITUDE_NUMBER = 2 ** 53;
/** Characters a JSON string holds as they are: anything but a quote, a backslash or a C0 control. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: C0 controls end a run of plain characters
const PLAIN_RUN = /[^"\\\u0000-\u001f]*/y;
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Decode UTF-8 bytes strictly, then parse. The faults of a text are judged in the order of
 * [CG-MSG-9]: bytes that are not UTF-8, then a byte order mark ([CG-CONV-7]), then the JSON.
 */
export function parseJsonBytes(bytes: Uint8Array, options: ParseOptions = {}): ParseOutcome {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, fault: { kind: "utf8", offset: firstInvalidUtf8Offset(bytes) } };
  }
  return parseJsonText(text, options);
}

/** Parse a JSON text given as a string. */
export function parseJsonText(text: string, options: ParseOptions = {}): ParseOutcome {
  if (text.charCodeAt(0) === 0xfeff) return { ok: false, fault: { kind: "bom" } };
  const skipDepth = options.skipDepth ?? DEEPEST + 1;
  const native = parsedNatively(text, skipDepth);
  if (native !== undefined) return { ok: true, value: native.value, bigIntegers: new Set() };
  return scanJsonText(text, options);
}

/** The hand-written parser alone, without the JSON.parse fast path (the tests compare the two). */
export function scanJsonText(text: string, options: ParseOptions = {}): ParseOutcome {
  if (text.charCodeAt(0) === 0xfeff) return { ok: false, fault: { kind: "bom" } };
  return new Parser(
    text,
    options.maxIntegerDigits ?? Number.POSITIVE_INFINITY,
    options.skipDepth ?? DEEPEST + 1,
    options.depthIsFault === true,
  ).parse();
}

/**
 * The fast path: JSON.parse, when its value is provably the one this module's parser builds —
 * the text is JSON (JSON.parse throws otherwise), and none of what JSON.parse cannot show is there:
 * no container at the skip depth, no number of magnitude 10^15 or more (an integer literal beyond
 * 2^53 has at least 16 digits; a literal beyond MAX_INTEGER_DIGITS or the double range is larger
 * still), and no duplicate member name. Undefined otherwise: the parser then reads the text and
 * reports its fault, the same outcome as before this path existed, only slower.
 *
 * Duplicates are found by counting: in a JSON text every ':' outside a string introduces one
 * member, so the text's ':' count is the members M plus the ':' written inside strings L. The
 * value has K <= M member names (K < M exactly when a name repeats, JSON.parse keeping the last)
 * and its strings (names and values) hold C <= L colons, as long as no string writes one as an
 * escape (\u003a, then the path is not taken). So the counts agree exactly when no name repeats.
 */
function parsedNatively(text: string, skipDepth: number): { readonly value: unknown } | undefined {
  if (text.includes("\\u003a") || text.includes("\\u003A")) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const counts = { members: 0, colons: 0 };
  if (!provablySame(value, 0, skipDepth, counts)) return undefined;
  return colonsIn(text) === counts.members + counts.colons ? { value } : undefined;
}

const NATIVE_MAGNITUDE = 1e15;

function colonsIn(text: string): number {
  let count = 0;
  for (let index = text.indexOf(":"); index !== -1; index = text.indexOf(":", index + 1)) {
    count += 1;
  }
  return count;
}

/** Whether a parsed value is free of what JSON.parse hides, counting its members and colons. */
function provablySame(
  value: unknown,
  depth: number,
  skipDepth: number,
  counts: { members: number; colons: number },
): boolean {
  if (typeof value === "string") {
    counts.colons += colonsIn(value);
    return true;
  }
  if (typeof value === "number") return Math.abs(value) < NATIVE_MAGNITUDE;
  if (value === null || typeof value !== "object") return true;
  if (depth >= skipDepth) return false;
  if (Array.isArray(value)) {
    for (const item of value) {
      if (!provablySame(item, depth + 1, skipDepth, counts)) return false;
    }
    return true;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    counts.members += 1;
    counts.colons += colonsIn(key);
    if (!provablySame(record[key], depth + 1, skipDepth, counts)) return false;
  }
  return true;
}

interface Frame {
  readonly container: unknown[] | Record<string, unknown>;
  /** An object (members) rather than an array (items). */
  readonly isObject: boolean;
  /** The key or index under which the next value of this frame is stored. */
  slot: string | number;
  /** The frame holding this container, and the slot it is stored under there. */
  readonly parent: Frame | undefined;
  readonly parentSlot: string | number;
}

/** Where a value is stored: in a frame under a slot; the root has no frame. */
interface Place {
  readonly frame: Frame | undefined;
  readonly slot: string | number;
}

function framePath(frame: Frame): JsonPath {
  const tokens: Array<string | number> = [];
  for (
    let current: Frame | undefined = frame;
    current?.parent !== undefined;
    current = current.parent
  ) {
    tokens.push(current.parentSlot);
  }
  return tokens.reverse();
}

function placePath(place: Place): JsonPath {
  return place.frame === undefined ? [] : [...framePath(place.frame), place.slot];
}

class Fault {
  constructor(readonly fault: TextFault) {}
}

class Parser {
  private position = 0;
  private readonly bigIntegers = new Set<string>();
  /** The first fault of a well-formed text, reported once the whole text parsed. */
  private recorded: TextFault | undefined;

  constructor(
    private readonly text: string,
    private readonly maxIntegerDigits: number,
    private readonly skipDepth: number,
    private readonly depthIsFault: boolean,
  ) {}

  parse(): ParseOutcome {
    try {
      const value = this.document();
      if (this.recorded !== undefined) return { ok: false, fault: this.recorded };
      return { ok: true, value, bigIntegers: this.bigIntegers };
    } catch (error) {
      if (error instanceof Fault) return { ok: false, fault: error.fault };
      throw error;
    }
  }

  private document(): unknown {
    this.skipWhitespace();
    const stack: Frame[] = [];
    let result: unknown;
    // Each iteration reads one value, or closes containers, until the root value is complete.
    for (;;) {
      // Paths are built only for a fault: copying them per value would cost depth² memory.
      const holder = stack.at(-1);
      const place: Place = { frame: holder, slot: holder?.slot ?? 0 };
      const char = this.text[this.position];
      let value: unknown;
      let opened: Frame | undefined;
      if ((char === "{" || char === "[") && stack.length === this.skipDepth) {
        this.skipContainer();
        if (this.depthIsFault) this.record({ kind: "depth", path: placePath(place) });
        value = TOO_DEEP;
      } else if (char === "{") {
        this.position += 1;
        const container: Record<string, unknown> = {};
        opened = { container, isObject: true, slot: "", parent: holder, parentSlot: place.slot };
        value = container;
      } else if (char === "[") {
        this.position += 1;
        const container: unknown[] = [];
        opened = { container, isObject: false, slot: 0, parent: holder, parentSlot: place.slot };
        value = container;
      } else {
        value = this.scalar(place);
      }
      if (stack.length === 0) result = value;
      else this.store(stack.at(-1) as Frame, value);
      if (opened !== undefined) {
        stack.push(opened);
        this.skipWhitespace();
        const empty = opened.isObject ? "}" : "]";
        if (this.text[this.position] === empty) {
          this.position += 1;
          stack.pop();
        } else {
          if (opened.isObject) this.memberName(opened);
          continue;
        }
      }
      // After a complete value: a comma continues the innermost container, a bracket closes it.
      for (;;) {
        this.skipWhitespace();
        const top = stack.at(-1);
        if (top === undefined) {
          if (this.position !== this.text.length) this.syntax("unexpected text after the value");
          return result;
        }
        const next = this.text[this.position];
        const close = top.isObject ? "}" : "]";
        if (next === ",") {
          this.position += 1;
          this.skipWhitespace();
          if (!top.isObject) top.slot = (top.container as unknown[]).length;
          else this.memberName(top);
          break;
        }
        if (next === close) {
          this.position += 1;
          stack.pop();
          continue;
        }
        this.syntax(`expected ',' or '${close}'`);
      }
    }
  }

  private record(fault: TextFault): void {
    this.recorded ??= fault;
  }

  /**
   * Skip the container that opens at this.position to the bracket that closes it: brackets are
   * counted outside strings (a backslash in a string escapes the next character); nothing else
   * is read. A container that never closes makes a text that is not JSON.
   */
  private skipContainer(): void {
    let depth = 0;
    let index = this.position;
    const text = this.text;
    while (index < text.length) {
      const char = text[index];
      if (char === '"') {
        index += 1;
        while (index < text.length && text[index] !== '"') index += text[index] === "\\" ? 2 : 1;
      } else if (char === "[" || char === "{") depth += 1;
      else if (char === "]" || char === "}") {
        depth -= 1;
        if (depth === 0) {
          this.position = index + 1;
          return;
        }
      }
      index += 1;
    }
    this.position = text.length;
    this.syntax("a container that does not close");
  }

  private store(frame: Frame, value: unknown): void {
    if (!frame.isObject) (frame.container as unknown[]).push(value);
    else if (frame.slot === "__proto__") {
      // An ordinary member, never the prototype.
      Object.defineProperty(frame.container, frame.slot, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else (frame.container as Record<string, unknown>)[frame.slot] = value;
  }

  /** Read `"name" :` of an object member; a name seen before in the object is a fault. */
  private memberName(frame: Frame): void {
    this.skipWhitespace();
    if (this.text[this.position] !== '"') this.syntax("expected a member name");
    const name = this.string();
    // Every earlier member is already stored in the object, so a repeated name is found there.
    if (Object.hasOwn(frame.container, name)) {
      this.record({ kind: "duplicate", path: framePath(frame) });
    }
    frame.slot = name;
    this.skipWhitespace();
    if (this.text[this.position] !== ":") this.syntax("expected ':'");
    this.position += 1;
    this.skipWhitespace();
  }

  private scalar(place: Place): unknown {
    const char = this.text[this.position];
    if (char === '"') return this.string();
    if (char === "-" || (char !== undefined && char >= "0" && char <= "9"))
      return this.number(place);
    for (const [word, value] of [
      ["true", true],
      ["false", false],
      ["null", null],
    ] as const) {
      if (this.text.startsWith(word, this.position)) {
        this.position += word.length;
        return value;
      }
    }
    return this.syntax("expected a value");
  }

  private number(place: Place): number {
    const match = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
    match.lastIndex = this.position;
    const found = match.exec(this.text);
    if (found === null) return this.syntax("invalid number");
    const literal = found[0];
    this.position += literal.length;
    const isInteger = found[1] === undefined && found[2] === undefined;
    if (!isInteger) return Number(literal);
    const digits = literal.startsWith("-") ? literal.length - 1 : literal.length;
    if (digits > this.maxIntegerDigits) {
      this.record({ kind: "long-integer", path: placePath(place) });
      return MAX_SAFE_MAGNITUDE_NUMBER;
    }
    if (digits >= 16) {
      const exact = BigInt(literal);
      if ((exact < 0n ? -exact : exact) > MAX_SAFE_MAGNITUDE)
        this.bigIntegers.add(pathKey(placePath(place)));
    }
    // An integer literal stays an integer: one beyond the double range is kept as the largest
    // finite double of its sign, never as Infinity (which would read as a non-JSON number).
    const value = Number(literal);
    return Number.isFinite(value) ? value : Math.sign(value) * Number.MAX_VALUE;
  }

  private string(): string {
    // Opening quote at this.position. Runs of plain characters are matched natively.
    let index = this.position + 1;
    let out = "";
    for (;;) {
      PLAIN_RUN.lastIndex = index;
      PLAIN_RUN.test(this.text);
      out += this.text.slice(index, PLAIN_RUN.lastIndex);
      index = PLAIN_RUN.lastIndex;
      const code = this.text.charCodeAt(index);
      if (code === 0x22) {
        this.position = index + 1;
        return out;
      }
      if (code !== 0x5c) {
        this.position = index;
        return this.syntax(
          Number.isNaN(code) ? "unterminated string" : "control character in a string",
        );
      }
      const escaped = this.text[index + 1];
      if (escaped !== undefined && Object.hasOwn(SIMPLE_ESCAPES, escaped)) {
        out += SIMPLE_ESCAPES[escaped];
        index += 2;
      } else if (
        escaped === "u" &&
        /^[0-9a-fA-F]{4}$/.test(this.text.slice(index + 2, index + 6))
      ) {
        out += String.fromCharCode(Number.parseInt(this.text.slice(index + 2, index + 6), 16));
        index += 6;
      } else {
        this.position = index;
        return this.syntax("invalid escape");
      }
    }
  }

  private skipWhitespace(): void {
    for (;;) {
      const char = this.text[this.position];
      if (char === " " || char === "\t" || char === "\n" || char === "\r") this.position += 1;
      else return;
    }
  }

  private syntax(reason: string): never {
    const before = this.text.slice(0, this.position);
    const line = before.split("\n").length;
    const column = this.position - before.lastIndexOf("\n");
    throw new Fault({ kind: "syntax", offset: this.position, line, column, reason });
  }
}

/** The offset of the first byte that is not part of valid UTF-8 (for the host's report). */
function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  let low = 0;
  let high = bytes.length;
  // The longest valid prefix, found by bisection on whole code points.
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    try {
      // Streaming mode tolerates a sequence cut at the end, so validity grows with the prefix.
      new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, middle), { stream: true });
      low = middle;
    } catch {
      high = middle - 1;
    }
  }
  return low;
}
