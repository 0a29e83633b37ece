import assert from "node:assert/strict";
import { test } from "node:test";
import { parseJsonBytes, parseJsonText, pathKey, TOO_DEEP } from "../../src/core/json/text.js";

test("a duplicate member name is a fault at the path of its object, never last-wins", () => {
  const outcome = parseJsonText('{"tags": [{"a": 1, "a": 2}]}');
  assert.deepEqual(outcome, { ok: false, fault: { kind: "duplicate", path: ["tags", 0] } });
});

test("an integer literal of more than 400 digits is a fault at its path", () => {
  const outcome = parseJsonText(`{"limit": ${"9".repeat(401)}}`, { maxIntegerDigits: 400 });
  assert.deepEqual(outcome, { ok: false, fault: { kind: "long-integer", path: ["limit"] } });
});

test("a file's integer literal of any length parses; its range is judged later", () => {
  const outcome = parseJsonText(`{"maxInputBytes": ${"9".repeat(401)}}`);
  assert.ok(outcome.ok);
  assert.deepEqual([...outcome.bigIntegers], [pathKey(["maxInputBytes"])]);
});

test("an integer literal of exactly 400 digits parses", () => {
  assert.equal(parseJsonText(`[${"9".repeat(400)}]`, { maxIntegerDigits: 400 }).ok, true);
});

test("2^53 + 1 is remembered as out of range although the number rounds to 2^53", () => {
  const outcome = parseJsonText('{"limit": 9007199254740993, "other": 9007199254740992}');
  assert.ok(outcome.ok);
  assert.deepEqual([...outcome.bigIntegers], [pathKey(["limit"])]);
});

test("a number written with an exponent is not an integer literal", () => {
  const outcome = parseJsonText('{"limit": 1e300}');
  assert.ok(outcome.ok);
  assert.equal(outcome.bigIntegers.size, 0);
});

test("a byte order mark is refused", () => {
  assert.deepEqual(parseJsonBytes(Buffer.from("\ufeff{}", "utf8")), {
    ok: false,
    fault: { kind: "bom" },
  });
});

test("invalid UTF-8 is refused with the offset of the first bad byte", () => {
  const bytes = Buffer.concat([Buffer.from('{"a":"é'), Buffer.from([0xff]), Buffer.from('"}')]);
  assert.deepEqual(parseJsonBytes(bytes), { ok: false, fault: { kind: "utf8", offset: 8 } });
});

test("a syntax error carries its line and column", () => {
  const outcome = parseJsonText('{\n  "a": tru\n}');
  assert.equal(outcome.ok, false);
  assert.ok(!outcome.ok && outcome.fault.kind === "syntax");
  assert.equal(outcome.fault.line, 2);
  assert.equal(outcome.fault.column, 8);
});

test("nesting far beyond 32 levels with balanced brackets is parsed, not a stack overflow", () => {
  const depth = 100_000;
  const outcome = parseJsonText(`${"[".repeat(depth)}${"]".repeat(depth)}`);
  assert.equal(outcome.ok, true);
});

test("escapes decode, a lone surrogate escape is kept for the pure-JSON rules", () => {
  const outcome = parseJsonText('["\\u00e9\\n\\/", "\\ud800"]');
  assert.ok(outcome.ok);
  assert.deepEqual(outcome.value, ["é\n/", "\ud800"]);
});

test("a member named __proto__ is an ordinary member", () => {
  const outcome = parseJsonText('{"__proto__": {"polluted": true}}');
  assert.ok(outcome.ok);
  assert.deepEqual(Object.keys(outcome.value as object), ["__proto__"]);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

// [CG-CONV-15]: a container at the skip depth is passed over and stands as TOO_DEEP.
const nested = (depth: number, inner = "") => `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`;

for (const depth of [33, 1000, 100_000]) {
  test(`a request text's container at depth 33 is its depth fault, the text ${depth} deep`, () => {
    const outcome = parseJsonText(`{"a": "[", "tags": ${nested(depth, '"]"')}}`, {
      depthIsFault: true,
    });
    assert.deepEqual(outcome, {
      ok: false,
      fault: { kind: "depth", path: ["tags", ...Array<number>(32).fill(0)] },
    });
  });

  test(`a text whose brackets do not close is not JSON, ${depth} deep`, () => {
    const outcome = parseJsonText(`{"tags": ${nested(depth).slice(0, -1)}}`, {
      depthIsFault: true,
    });
    assert.equal(outcome.ok === false && outcome.fault.kind, "syntax");
  });
}

test("what a container at depth 33 holds is not read", () => {
  const outcome = parseJsonText(`[${nested(32, '[1 2 NaN {"a": 1, "a": 2}]')}]`, {
    depthIsFault: true,
  });
  assert.equal(outcome.ok === false && outcome.fault.kind, "depth");
});

test("a file's container at the skip depth stands as TOO_DEEP, for the value rules to judge", () => {
  const outcome = parseJsonText(nested(40));
  assert.ok(outcome.ok);
  let value: unknown = outcome.value;
  for (let depth = 0; depth < 33; depth += 1) value = (value as unknown[])[0];
  assert.equal(value, TOO_DEEP);
});

test("a scalar held at depth 32 is not too deep ([CG-CONV-11])", () => {
  assert.equal(parseJsonText(nested(33, "1"), { depthIsFault: true }).ok, true);
});

test("a text that is not JSON is not JSON, even after a duplicate name ([CG-MSG-15])", () => {
  for (const text of ['{"a": 1, "a": 2', '[{"a": 1, "a": 2}] x', `[${"9".repeat(401)},`]) {
    const outcome = parseJsonText(text, { maxIntegerDigits: 400 });
    assert.equal(outcome.ok === false && outcome.fault.kind, "syntax", text);
  }
});

test("NaN and Infinity are not JSON ([CG-CONV-16])", () => {
  for (const text of ["NaN", '{"limit": NaN}', "[Infinity]", "[-Infinity]"]) {
    const outcome = parseJsonText(text);
    assert.equal(outcome.ok === false && outcome.fault.kind, "syntax", text);
  }
});
