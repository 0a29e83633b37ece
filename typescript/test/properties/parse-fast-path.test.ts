// Properties of the JSON.parse fast path (core/json/text.ts): on every text, parseJsonText gives
// exactly the outcome of the hand-written parser alone (scanJsonText) — the same value, the same
// big-integer paths, the same fault — whatever the text holds: repeated member names, integer
// literals beyond 2^53 or of more than 400 digits, escaped colons, containers at the skip depth,
// text that is not JSON.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  type ParseOptions,
  parseJsonText,
  REQUEST_TEXT,
  scanJsonText,
} from "../../src/core/json/text.js";
import { scaled } from "../scale.js";

/** Outcomes compared with their big-integer paths as a sorted list (a Set compares by content). */
function comparable(outcome: ReturnType<typeof parseJsonText>): unknown {
  if (!outcome.ok) return outcome;
  return { ok: true, value: outcome.value, bigIntegers: [...outcome.bigIntegers].sort() };
}

function same(text: string, options?: ParseOptions): void {
  assert.deepStrictEqual(
    comparable(parseJsonText(text, options)),
    comparable(scanJsonText(text, options)),
    text.slice(0, 200),
  );
}

const OPTIONS: readonly (ParseOptions | undefined)[] = [
  undefined,
  REQUEST_TEXT,
  { skipDepth: 3 },
  { skipDepth: 1 },
];

/** Pieces a text may be spliced with, each a way for JSON.parse to differ from the parser. */
const PIECES = [
  '"a":1,"a":2',
  '"k:":1,"k:":2',
  '"x":"\\u003a","y":1',
  '"x":"\\u003A"',
  // A repeated name and an escaped colon: the counts alone would agree.
  '"a":1,"a":2,"x":"\\u003a"',
  "9007199254740993",
  "-9007199254740993",
  "1000000000000000",
  "999999999999999",
  "1e400",
  `1${"0".repeat(401)}`,
  "-0",
  '"__proto__":{"a":1}',
  '"10":1,"2":2',
  "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
  '"\\ud800"',
  '"a:b:c"',
  ",",
  "}",
];

const texts = fc.oneof(
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc
    .tuple(
      fc.jsonValue().map((value) => JSON.stringify(value)),
      fc.nat(),
      fc.constantFrom(...PIECES),
    )
    .map(([text, at, piece]) => {
      // After an opening brace, a piece of members; elsewhere, anything (often not JSON).
      const braces = [...text.matchAll(/\{/g)].map((match) => match.index as number);
      if (braces.length > 0 && piece.includes(":") && piece.startsWith('"')) {
        const brace = braces[at % braces.length] as number;
        const empty = text[brace + 1] === "}";
        return `${text.slice(0, brace + 1)}${piece}${empty ? "" : ","}${text.slice(brace + 1)}`;
      }
      const position = at % (text.length + 1);
      return `${text.slice(0, position)}${piece}${text.slice(position)}`;
    }),
  fc.constantFrom(...PIECES).map((piece) => `{${piece}}`),
  fc.constantFrom(...PIECES).map((piece) => `[${piece}]`),
);

test("parseJsonText and the parser alone agree on every text", () => {
  fc.assert(
    fc.property(texts, (text) => {
      for (const options of OPTIONS) same(text, options);
    }),
    { numRuns: scaled(2000) },
  );
});

test("every piece that JSON.parse would hide is the parser's outcome", () => {
  for (const piece of PIECES) {
    for (const text of [`{${piece}}`, `[${piece}]`, piece, `{"o":{${piece}}}`]) {
      for (const options of OPTIONS) same(text, options);
    }
  }
  // A repeated name is a fault, not JSON.parse's last-wins value.
  const outcome = parseJsonText('{"a":1,"a":2}');
  assert.equal(outcome.ok, false);
});
