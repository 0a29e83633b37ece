import assert from "node:assert/strict";
import { test } from "node:test";
import { rank, tokenize } from "../../src/core/executors/lexical.js";
import type { CatalogEntry } from "../../src/core/executors/protocol.js";

// The catalog of the worked example of the executor annex (section 8.3).
const CATALOG: CatalogEntry[] = [
  {
    id: "acme::route.validation",
    providerId: "acme",
    name: "Request validation",
    description: "Validate input before a route handler runs.",
    whenToUse: "a route needs a declared request contract",
    tags: ["http", "validation"],
  },
  {
    id: "acme::schema.request",
    providerId: "acme",
    name: "Request schema",
    description: "Declare the JSON schema of a request body.",
    tags: ["http", "schema"],
  },
  {
    id: "billing::invoice.create",
    providerId: "billing",
    name: "Create invoice",
    description: "Create and send an invoice to a customer.",
    tags: ["billing", "invoice"],
  },
];

test("the worked example: create an invoice", () => {
  assert.deepEqual(rank("create an invoice", CATALOG, 5), {
    status: "matched",
    candidates: [{ id: "billing::invoice.create", confidence: 0.8258 }],
  });
});

test("the worked example: validate the request body", () => {
  assert.deepEqual(rank("validate the request body", CATALOG, 5), {
    status: "matched",
    candidates: [
      { id: "acme::schema.request", confidence: 0.3472 },
      { id: "acme::route.validation", confidence: 0.3055 },
    ],
  });
});

test("the worked example: schema for request with limit 1", () => {
  assert.deepEqual(rank("schema for request", CATALOG, 1), {
    status: "matched",
    candidates: [{ id: "acme::schema.request", confidence: 0.8291 }],
  });
});

test("the worked example: an unrelated request is no_match", () => {
  assert.deepEqual(rank("what is the weather in Paris", CATALOG, 5), {
    status: "no_match",
    candidates: [],
  });
});

test("the worked example: only stopwords is unknown", () => {
  assert.deepEqual(rank("the and of", CATALOG, 5), { status: "unknown", candidates: [] });
});

test("an empty catalog is no_match", () => {
  assert.deepEqual(rank("create an invoice", [], 5), { status: "no_match", candidates: [] });
});

test("a CJK run becomes its characters then its adjacent pairs", () => {
  assert.deepEqual(tokenize("接口文"), ["接", "口", "文", "接口", "口文"]);
});

test("non-CJK pieces of a word stay words of their own", () => {
  assert.deepEqual(tokenize("api接口v2"), ["api", "接", "口", "接口", "v2"]);
});

test("the plural rule applies to ASCII words of more than 3 letters only", () => {
  assert.deepEqual(tokenize("policies processes invoices ties status analysis bus gas"), [
    "policy",
    "process",
    "invoice",
    "tie",
    "status",
    "analysis",
    "bus",
    "gas",
  ]);
});

test("text is NFKC-normalized and lowercased before words are split on punctuation", () => {
  assert.deepEqual(tokenize("ＡＰＩ_Route-Validation"), ["api", "route", "validation"]);
});

test("a request without terms over an empty catalog is unknown [CG-MODEL-17]", () => {
  assert.deepEqual(rank("the and of", [], 5), { status: "unknown", candidates: [] });
  assert.deepEqual(rank("!!!", [], 5), { status: "unknown", candidates: [] });
});

// [CG-MODEL-16]: the character data is the contract's lexical-unicode.json (Unicode 15.0.0),
// not the runtime's tables (this Node has its own Unicode version).
const UNICODE_CASES: Array<[string, string, string[]]> = [
  ["lowercasing is per code point: no final sigma", "ΟΔΟΣ οδος", ["οδοσ", "οδος"]],
  ["U+0130 lowercases to i and a combining dot (a separator)", "ẞ İx", ["ß", "x"]],
  ["first assigned in 15.0 and not NFKC-inert: a space", "alpha\u{1e030}beta", ["alpha", "beta"]],
  ["a late combining mark cannot let e + U+0301 compose", "e\u{1e4ec}\u0301", ["e"]],
  ["assigned after 15.0 (16.0 Cyrillic tje): not a letter", "alpha\u1c89beta", ["alpha", "beta"]],
  [
    "CJK Extension H (15.0) ideographs are CJK letters",
    "\u{31350}\u{31351}",
    ["\u{31350}", "\u{31351}", "\u{31350}\u{31351}"],
  ],
  ["Kawi letters (15.0) make one word", "\u{11f04}\u{11f05}", ["\u{11f04}\u{11f05}"]],
  ["NFKC comes before the word classes", "ﬁle ① ™ Ⓩ", ["file", "1", "tm", "z"]],
];

for (const [title, text, terms] of UNICODE_CASES) {
  test(`tokenize uses the contract's Unicode data: ${title}`, () => {
    assert.deepEqual(tokenize(text), terms);
  });
}
