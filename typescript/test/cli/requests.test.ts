// Graph commands to tool requests, from the generated operation table (no graph needed).
import assert from "node:assert/strict";
import { test } from "node:test";
import { OPERATIONS } from "../../src/_generated/operations.js";
import { parseCommand, UsageError } from "../../src/surfaces/cli/arguments.js";
import { GRAPH_COMMANDS, graphCommandSpec, requestText } from "../../src/surfaces/cli/requests.js";

function request(command: string, argv: string[]): string {
  const operation = GRAPH_COMMANDS.get(command);
  assert.ok(operation);
  return requestText(operation, parseCommand(graphCommandSpec(operation), argv));
}

test("there is one graph command per operation of the table", () => {
  assert.deepEqual(
    [...GRAPH_COMMANDS.values()].map((operation) => operation.tool),
    OPERATIONS.map((operation) => operation.tool),
  );
});

test("a command without arguments is the empty request", () => {
  assert.equal(request("describe", []), "{}");
});

test("repeatable options form a list in the order given ([CG-CLI-16])", () => {
  assert.equal(
    request("list", ["--provider", "a", "--tag", "t", "--provider=b", "--limit", "1"]),
    '{"providers":["a","b"],"tags":["t"],"limit":1}',
  );
});

test("a single option given twice is a usage error, never the last one wins ([CG-CLI-16])", () => {
  assert.throws(() => request("list", ["--limit", "1", "--limit=2"]), {
    name: "UsageError",
    message: "argument --limit: may be given once",
  });
});

test("a nested member is built from its '/'-separated path", () => {
  assert.equal(
    request("resolve", ["a::b", "c::d", "--relations", "requires,related", "--depth", "2"]),
    '{"ids":["a::b","c::d"],"relations":{"kinds":["requires","related"],"depth":2}}',
  );
});

test("an integer keeps every digit the caller typed", () => {
  assert.equal(request("list", ["--limit", "9".repeat(30)]), `{"limit":${"9".repeat(30)}}`);
});

test("an integer option that is not a whole number is a usage error", () => {
  assert.throws(() => request("list", ["--limit", "1.5"]), UsageError);
});

test("context facts: KEY=TEXT is a string, KEY:=JSON is the JSON value", () => {
  assert.equal(
    request("match", ["find it", "--context", "lang=py", "--context", "retries:=3"]),
    '{"request":"find it","context":{"lang":"py","retries":3}}',
  );
});

test("a context fact without = or with a value after := that is not JSON is a usage error", () => {
  assert.throws(() => request("match", ["x", "--context", "lang"]), UsageError);
  assert.throws(() => request("match", ["x", "--context", "n:={"]), UsageError);
});

test("positionals are assigned in order; a missing one and an extra one are usage errors", () => {
  assert.equal(
    request("read", ["acme::a", "guide"]),
    '{"capabilityId":"acme::a","documentId":"guide"}',
  );
  assert.throws(
    () => request("read", ["acme::a"]),
    (error: unknown) => error instanceof UsageError && error.message.endsWith("DOCUMENT_ID"),
  );
  assert.throws(() => request("read", ["acme::a", "guide", "more"]), UsageError);
});

test("a usage error never repeats the unknown option", () => {
  assert.throws(
    () => request("list", ["--secret-value-xyzzy"]),
    (error: unknown) => error instanceof UsageError && !error.message.includes("xyzzy"),
  );
});
