import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import * as jcs from "canonicalize";
import fc from "fast-check";
import { canonicalJson, revisionOf } from "../../src/core/json/canonical.js";
import { compactByteLength, integralBeyondRange } from "../../src/core/json/pure.js";

const reference = jcs.default as unknown as (input: unknown) => string | undefined;

test("the canonical serialization equals the canonicalize package's on values with every kind of member", () => {
  const values: unknown[] = [
    { providerId: "a", name: "A", version: "1", capabilities: [] },
    {
      b: 1,
      a: [true, false, null, 0, -0, 1.5, 1e21, 1e-7, 123456789012],
      é: '\u0000\u001f"\\/\u2028😀',
    },
    { "\u20ac": 1, "\r": 2, "1": 3, "10": 4, "9": 5, "": 6, aa: { z: [], y: {} } },
    ["tab\tnewline\n", 0.1 + 0.2, -1e-300, 5e-324, 1.7976931348623157e308],
  ];
  for (const value of values) assert.equal(canonicalJson(value), reference(value));
});

test("canonicalJson equals the canonicalize package's on random JSON values, and revisionOf hashes its bytes", () => {
  const hashed = (text: string) =>
    `r:${createHash("sha256").update(text, "utf8").digest("hex").slice(0, 16)}`;
  const member = fc.oneof(fc.string(), fc.constantFrom("__proto__", "10", "9", "", "constructor"));
  const values = fc.oneof(
    fc.jsonValue(),
    fc.dictionary(member, fc.jsonValue()),
    fc.dictionary(member, fc.array(fc.dictionary(member, fc.jsonValue()))),
  );
  fc.assert(
    fc.property(values, (value) => {
      const text = canonicalJson(value);
      assert.equal(text, reference(value));
      assert.equal(revisionOf(value), hashed(text));
    }),
    { numRuns: 1000 },
  );
});

test("revisionOf hashes a definition's long arrays in batches, the same bytes", () => {
  const hashed = (text: string) =>
    `r:${createHash("sha256").update(text, "utf8").digest("hex").slice(0, 16)}`;
  for (const length of [0, 1, 1023, 1024, 1025, 3000]) {
    const value = {
      z: Array.from({ length }, (_, index) => ({ id: `c${index}`, b: [index, { y: 1, x: 2 }] })),
      a: [],
      m: { q: [1, 2], p: "é" },
    };
    assert.equal(revisionOf(value), hashed(canonicalJson(value)));
    assert.equal(canonicalJson(value), reference(value));
  }
});

test("members are sorted by UTF-16 code units, not by code points", () => {
  // U+FF61 sorts after U+1F600 by code point but before it by UTF-16 code unit (0xD83D).
  assert.equal(
    canonicalJson({ "\uff61": 1, "😀": 2 }),
    '{"😀":2,"｡":1}'.replace('😀":2,"｡":1', '😀":2,"｡":1'),
  );
  assert.equal(canonicalJson({ "\uff61": 1, "😀": 2 }), reference({ "\uff61": 1, "😀": 2 }));
});

test("the compact size counts numbers in their RFC 8785 form ([CG-BUD-9])", () => {
  const cases: Array<[number, string]> = [
    [1.0, "1"],
    [-0, "0"],
    [1e-7, "1e-7"],
    [0.000001, "0.000001"],
    [1e21, "1e+21"],
  ];
  for (const [number, form] of cases) {
    assert.equal(compactByteLength({ n: [number] }), `{"n":[${form}]}`.length);
  }
});

test("an integral number is out of range where RFC 8785 writes it as an integer literal ([CG-CONV-6])", () => {
  const at = () => [];
  for (const number of [1e20, -1e20, 2 ** 53 + 2])
    assert.equal(integralBeyondRange(at, number), true);
  for (const number of [1e21, 1e300, 2 ** 53, 1.5])
    assert.equal(integralBeyondRange(at, number), false);
});
