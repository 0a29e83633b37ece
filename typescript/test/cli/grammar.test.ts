// The argument grammar of every command ([CG-CLI-15] .. [CG-CLI-19]), through the CLI process
// where the process matters (argv bytes), else through the parser and request builder.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import {
  didYouMean,
  isOptionLike,
  isText,
  parseCommand,
  UsageError,
} from "../../src/surfaces/cli/arguments.js";
import { surrogateEscaped } from "../../src/surfaces/cli/argv.js";
import { GRAPH_COMMANDS, graphCommandSpec, requestText } from "../../src/surfaces/cli/requests.js";
import { CLI, graphFolder } from "../surface-fixtures.js";

function request(command: string, argv: string[]): string {
  const operation = GRAPH_COMMANDS.get(command);
  assert.ok(operation);
  return requestText(operation, parseCommand(graphCommandSpec(operation), argv));
}

function usage(command: string, argv: string[], message: string): void {
  assert.throws(() => request(command, argv), { name: "UsageError", message });
}

/**
 * The CLI with argv given as bytes: Node passes only text to a child, so a shell builds each
 * Buffer argument with printf (octal escapes) and execs the CLI with them.
 */
function cli(args: Array<string | Buffer>) {
  const quoted = (bytes: Buffer) =>
    `"$(printf '${[...bytes].map((byte) => `\\${byte.toString(8).padStart(3, "0")}`).join("")}')"`;
  const script = [
    "exec",
    '"$0"',
    '"$1"',
    ...args.map((arg, index) => (typeof arg === "string" ? `"\${${index + 2}}"` : quoted(arg))),
  ].join(" ");
  return spawnSync("/bin/sh", ["-c", script, process.execPath, CLI, ...args.map(String)], {
    encoding: "utf8",
    input: "",
    env: { ...process.env, CAPABILITY_GRAPH_CONFIG: "" },
  });
}

test("an integer is an optional - and ASCII digits, leading zeros dropped ([CG-CLI-18])", () => {
  assert.equal(request("list", ["--limit", "007"]), '{"limit":7}');
  assert.equal(request("list", ["--limit", "-007"]), '{"limit":-7}');
  assert.equal(request("list", ["--limit", "-0"]), '{"limit":0}');
  assert.equal(request("list", ["--limit", "000"]), '{"limit":0}');
  for (const text of ["+1", " 1", "1 ", "1_0", "\u0665", "1e3", "0x10", ""]) {
    usage("list", ["--limit", text], "argument --limit: must be an integer");
  }
});

test("a token is option-like unless it is - or - followed by an ASCII digit ([CG-CLI-15])", () => {
  assert.deepEqual(["-", "-1", "-1x", "--", "-h", "--limit", "-x y", "x"].map(isOptionLike), [
    false,
    false,
    false,
    true,
    true,
    true,
    true,
    false,
  ]);
});

test("an option takes the next token unless it is option-like; = takes anything ([CG-CLI-15])", () => {
  assert.equal(request("list", ["--limit", "-1"]), '{"limit":-1}');
  usage("list", ["--cursor", "--limit", "1"], "argument --cursor: expected one argument");
  usage("list", ["--cursor", "--"], "argument --cursor: expected one argument");
  usage("list", ["--cursor"], "argument --cursor: expected one argument");
  assert.equal(request("list", ["--cursor=--limit"]), '{"cursor":"--limit"}');
  assert.equal(request("list", ["--cursor", ""]), '{"cursor":""}');
  assert.equal(request("list", ["--cursor="]), '{"cursor":""}');
  usage("read", ["a", "b", "--raw=1"], "argument --raw: takes no value");
});

test("long options are written in full: a prefix is unknown, with a suggestion ([CG-CLI-15])", () => {
  usage("list", ["--lim", "1"], "an option is not recognized (did you mean --limit?)");
  usage("list", ["-x y"], "an option is not recognized");
});

test("-- ends the options; options and positionals interleave ([CG-CLI-15])", () => {
  assert.equal(request("match", ["--", "-x y"]), '{"request":"-x y"}');
  assert.equal(request("match", ["--", "--help"]), '{"request":"--help"}');
  assert.equal(
    request("read", ["--raw", "acme::a", "--config", "f", "guide"]),
    '{"capabilityId":"acme::a","documentId":"guide"}',
  );
  assert.equal(request("resolve", ["a::b", "--", "-1x"]), '{"ids":["a::b","-1x"]}');
});

test("help wins over every usage error of the command, unless after -- ([CG-CLI-17])", () => {
  const spec = graphCommandSpec(GRAPH_COMMANDS.get("list") ?? assert.fail());
  assert.equal(parseCommand(spec, ["--bogus", "--limit", "x", "-h"]).help, true);
  assert.equal(parseCommand(spec, ["--limit", "1", "--limit", "2", "--help"]).help, true);
  assert.throws(() => parseCommand(spec, ["--", "--help"]), UsageError);
});

test("an argument is text unless it holds an unpaired surrogate ([CG-CLI-19])", () => {
  assert.equal(isText("caf\u00e9 \ufffd \u{1f600}"), true);
  assert.equal(isText("caf\udce9"), false);
  assert.equal(isText("\ud83d"), false);
  assert.equal(
    surrogateEscaped(Buffer.from([0x63, 0xe9, 0x20, 0xef, 0xbf, 0xbd])),
    "c\udce9 \ufffd",
  );
  assert.equal(surrogateEscaped(Buffer.from([0xed, 0xa0, 0x80])), "\udced\udca0\udc80");
  assert.equal(surrogateEscaped(Buffer.from("ok \u{1f600}")), "ok \u{1f600}");
});

test("argv bytes that are not UTF-8 are a usage error wherever they stand ([CG-CLI-19])", () => {
  const config = graphFolder();
  for (const args of [
    ["list", "--cursor", Buffer.from([0x63, 0x61, 0x66, 0xe9]), "--config", config],
    ["resolve", "--config", config, "--", Buffer.from([0xff])],
    ["list", "--help", Buffer.from([0xff])],
    [Buffer.from([0xff])],
  ]) {
    const done = cli(args);
    assert.equal(done.status, 2);
    assert.equal(done.stdout, "");
    assert.match(done.stderr, /capability-graph: error: an argument is not UTF-8 text\n$/);
  }
  // A real U+FFFD (the bytes EF BF BD) is an ordinary argument.
  const done = cli(["match", "\ufffd", "--config", config]);
  assert.notEqual(done.status, 2);
});

test("--config before the command is the command's own; twice is a usage error ([CG-CLI-15], [CG-CLI-16])", () => {
  const config = graphFolder();
  const before = cli(["--config", config, "list", "--limit", "1"]);
  assert.equal(before.status, 0, before.stderr);
  assert.equal(JSON.parse(before.stdout).items.length, 1);
  const twice = cli(["--config", config, "list", "--config", config]);
  assert.equal(twice.status, 2);
  assert.match(twice.stderr, /argument --config: may be given once\n$/);
});

test("before the command, the first of --help and --version acts ([CG-CLI-17])", () => {
  const version = cli(["--bogus", "--version", "--help"]);
  assert.equal(version.status, 0);
  assert.match(version.stdout, /^capability-graph \S+\n$/);
  const help = cli(["--help", "--version", "frob"]);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^usage: capability-graph/);
  const unknown = cli(["frob", "--help"]);
  assert.equal(unknown.status, 2);
  assert.equal(unknown.stdout, "");
});

test("suggestions are the reference's: the closest own name, ratio at least 0.6 ([CG-CLI-20])", () => {
  const commands = [...GRAPH_COMMANDS.keys(), "call", "mcp", "doctor", "init", "explain"];
  assert.equal(didYouMean("lst", commands), " (did you mean list?)");
  assert.equal(didYouMean("RESOLVE", commands), " (did you mean resolve?)");
  assert.equal(didYouMean("xyzzy", commands), "");
  assert.equal(didYouMean("--provder", ["--provider", "--tag"]), " (did you mean --provider?)");
  assert.equal(
    didYouMean("input_invalid", ["CG_INPUT_INVALID", "CG_INPUT_TOO_LARGE"]),
    " (did you mean CG_INPUT_INVALID?)",
  );
});
