// The CLI as a subprocess: stdout/stderr rules and exit statuses of spec section 11.4.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { CLI, GUIDE_TEXT, graphFolder, LAUNCHER } from "../surface-fixtures.js";

function cli(
  args: string[],
  options: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv } = {},
) {
  return spawnSync(process.execPath, [CLI, ...args], {
    encoding: "utf8",
    input: options.input ?? "",
    cwd: options.cwd,
    env: options.env ?? { ...process.env, CAPABILITY_GRAPH_CONFIG: "" },
  });
}

/**
 * Wait until every thread of process `pid` has been sleeping (state S in /proc) for half a
 * second — the CLI is then waiting on the executor — at most 20 s on a loaded machine.
 */
async function untilIdle(pid: number): Promise<void> {
  let idleSince: number | undefined;
  for (const started = Date.now(); Date.now() - started < 20000; ) {
    let states: string[] = [];
    try {
      states = readdirSync(`/proc/${pid}/task`).map(
        (task) => readFileSync(`/proc/${pid}/task/${task}/stat`, "ascii").split(") ")[1]?.[0] ?? "",
      );
    } catch {
      return; // the process is gone; the assertions say what it did
    }
    if (states.every((state) => state === "S")) {
      idleSince ??= Date.now();
      if (Date.now() - idleSince >= 500) return;
    } else idleSince = undefined;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const NOT_FOUND =
  '{"ok":false,"error":{"code":"CG_CAPABILITY_NOT_FOUND","phase":"query","message":"Requested capability does not exist","nextAction":"refresh"}}\n';
const UNREADABLE =
  '{"ok":false,"error":{"code":"CG_CONFIG_INVALID","phase":"config","message":"Cannot read a valid bounded JSON configuration file","nextAction":"check_config"}}\n';

test("a graph command prints its result as one JSON line on stdout and exits 0", () => {
  const done = cli(["list", "--limit", "1", "--config", graphFolder()]);
  assert.equal(done.status, 0);
  assert.equal(done.stderr, "");
  assert.equal(done.stdout.split("\n").length, 2);
  assert.equal(JSON.parse(done.stdout).items.length, 1);
});

test("a GraphError leaves stdout empty, writes one envelope line on stderr and exits 1", () => {
  const done = cli(["resolve", "acme::missing", "--config", graphFolder()]);
  assert.equal(done.status, 1);
  assert.equal(done.stdout, "");
  assert.equal(done.stderr, NOT_FOUND);
});

test("call projects like the graph commands", () => {
  const done = cli([
    "call",
    "resolve_capabilities",
    "--arguments",
    '{"ids": ["acme::missing"]}',
    "--config",
    graphFolder(),
  ]);
  assert.equal(done.status, 1);
  assert.equal(done.stderr, NOT_FOUND);
});

test("the configuration comes from CAPABILITY_GRAPH_CONFIG when --config is absent", () => {
  const done = cli(["resolve", "acme::missing"], {
    env: { ...process.env, CAPABILITY_GRAPH_CONFIG: graphFolder() },
  });
  assert.equal(done.stderr, NOT_FOUND);
});

test("the configuration defaults to ./capability-graph.json", () => {
  const done = cli(["resolve", "acme::missing"], { cwd: dirname(graphFolder()) });
  assert.equal(done.stderr, NOT_FOUND);
});

test("a configuration that cannot be read is the unreadable envelope, exit 1", () => {
  const done = cli(["list", "--config", "/nonexistent/capability-graph.json"]);
  assert.equal(done.status, 1);
  assert.equal(done.stdout, "");
  assert.equal(done.stderr, UNREADABLE);
});

test("an unknown option is a usage error (exit 2) that does not repeat the option", () => {
  const done = cli(["list", "--secret-xyzzy", "--config", graphFolder()]);
  assert.equal(done.status, 2);
  assert.equal(done.stdout, "");
  assert.match(done.stderr, /^usage: capability-graph list/);
  assert.doesNotMatch(done.stderr, /xyzzy/);
});

test("an unknown command is a usage error that names only the CLI's own commands", () => {
  const done = cli(["frobnicate-xyzzy"]);
  assert.equal(done.status, 2);
  assert.equal(done.stdout, "");
  assert.doesNotMatch(done.stderr, /xyzzy/);
  assert.match(done.stderr, /the choices are describe, list, resolve, match, read, call/);
});

test("a missing positional argument is a usage error", () => {
  const done = cli(["resolve", "--config", graphFolder()]);
  assert.equal(done.status, 2);
  assert.match(done.stderr, /required: ID/);
});

test("--arguments that is not JSON is a usage error, not an envelope", () => {
  const done = cli([
    "call",
    "list_capabilities",
    "--arguments",
    "{nope",
    "--config",
    graphFolder(),
  ]);
  assert.equal(done.status, 2);
  assert.equal(done.stdout, "");
  assert.match(done.stderr, /argument --arguments: not valid JSON/);
});

test("--arguments with a duplicate member name is CG_INPUT_INVALID at the object's pointer", () => {
  const done = cli([
    "call",
    "list_capabilities",
    "--arguments",
    '{"limit": 1, "limit": 2}',
    "--config",
    graphFolder(),
  ]);
  assert.equal(done.status, 1);
  assert.equal(
    done.stderr,
    '{"ok":false,"error":{"code":"CG_INPUT_INVALID","phase":"query","message":"/ an object has a duplicate key","nextAction":"fix_input"}}\n',
  );
});

test("an inline --arguments text fault is reported before the configuration is read", () => {
  const done = cli([
    "call",
    "no_such_tool",
    "--arguments",
    '{"a": {"b": 1, "b": 2}}',
    "--config",
    "/nonexistent/capability-graph.json",
  ]);
  assert.equal(done.status, 1);
  assert.equal(
    done.stderr,
    '{"ok":false,"error":{"code":"CG_INPUT_INVALID","phase":"query","message":"/ an object has a duplicate key","nextAction":"fix_input"}}\n',
  );
});

test("an integer option keeps every digit: the graph judges it, not the CLI", () => {
  const done = cli(["list", "--limit", "9".repeat(30), "--config", graphFolder()]);
  assert.equal(done.status, 1);
  assert.equal(
    done.stderr,
    '{"ok":false,"error":{"code":"CG_INPUT_INVALID","phase":"query","message":"/limit integers must stay within +/-2^53","nextAction":"fix_input"}}\n',
  );
});

test("--arguments-file accepts - for stdin", () => {
  const done = cli(
    ["call", "resolve_capabilities", "--arguments-file", "-", "--config", graphFolder()],
    { input: '{"ids": ["acme::missing"]}' },
  );
  assert.equal(done.stderr, NOT_FOUND);
});

test("--arguments-file within budget is judged as a text before the tool name", () => {
  const config = graphFolder();
  const request = join(dirname(config), "request.json");
  writeFileSync(request, '{"limit": 1, "limit": 2}');
  const done = cli(["call", "no_such_tool", "--arguments-file", request, "--config", config]);
  assert.equal(done.status, 1);
  assert.equal(
    done.stderr,
    '{"ok":false,"error":{"code":"CG_INPUT_INVALID","phase":"query","message":"/ an object has a duplicate key","nextAction":"fix_input"}}\n',
  );
});

test("--arguments-file beginning with a byte order mark is a usage error, exit 2", () => {
  const config = graphFolder();
  const request = join(dirname(config), "request.json");
  writeFileSync(request, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("{}")]));
  const done = cli(["call", "describe_graph", "--arguments-file", request, "--config", config]);
  assert.equal(done.status, 2);
  assert.equal(done.stdout, "");
  assert.match(done.stderr, /argument --arguments-file: a byte order mark is not JSON\n$/);
});

test("--arguments-file that is a directory is a usage error", () => {
  const config = graphFolder();
  const done = cli([
    "call",
    "list_capabilities",
    "--arguments-file",
    dirname(config),
    "--config",
    config,
  ]);
  assert.equal(done.status, 2);
  assert.match(done.stderr, /not a readable regular file/);
});

test("--arguments-file over maxInputBytes is CG_INPUT_TOO_LARGE in the tool's phase", () => {
  const folder = mkdtempSync(join(tmpdir(), "cg-cli-"));
  const config = join(folder, "capability-graph.json");
  writeFileSync(config, JSON.stringify({ providers: [], budgets: { maxInputBytes: 64 } }));
  const request = join(folder, "request.json");
  writeFileSync(request, JSON.stringify({ request: "x".repeat(100) }));
  const done = cli(["call", "match_capabilities", "--arguments-file", request, "--config", config]);
  assert.equal(done.status, 1);
  assert.equal(
    done.stderr,
    '{"ok":false,"error":{"code":"CG_INPUT_TOO_LARGE","phase":"match","message":"Request exceeds maxInputBytes","nextAction":"narrow_scope"}}\n',
  );
});

test("read --raw prints the document text exactly, nothing added", () => {
  const done = cli(["read", "acme::route.validation", "guide", "--raw", "--config", graphFolder()]);
  assert.equal(done.status, 0);
  assert.equal(done.stdout, GUIDE_TEXT);
});

test("resolve builds the nested relations member from --relations and --depth", () => {
  const done = cli([
    "resolve",
    "acme::route.validation",
    "--relations",
    "requires,nope",
    "--depth",
    "1",
    "--config",
    graphFolder(),
  ]);
  assert.equal(done.status, 1);
  assert.match(done.stderr, /"message":"\/relations\/kinds\/1 must be one of: /);
});

test("a context fact given twice with one key is a usage error", () => {
  const done = cli([
    "match",
    "x",
    "--context",
    "a=1",
    "--context",
    "a=2",
    "--config",
    graphFolder(),
  ]);
  assert.equal(done.status, 2);
  assert.match(done.stderr, /a KEY is given twice/);
});

test("SIGINT during match cancels it: CG_MODEL_CANCELLED on stderr, exit 130", async () => {
  // A scripted step that answers only after 60 s (`then` is the executor annex's member name).
  const config = graphFolder(
    JSON.parse(
      '{"executor": "scripted", "steps": [{"sleepMs": 60000, "then": {"return": {"status": "no_match", "candidates": []}}}]}',
    ),
  );
  const child = spawn(process.execPath, [CLI, "match", "anything", "--config", config]);
  const exited = once(child, "exit");
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  await untilIdle(child.pid as number);
  child.kill("SIGINT");
  const [code] = await exited;
  assert.equal(code, 130);
  assert.equal(stdout, "");
  assert.equal(
    stderr,
    '{"ok":false,"error":{"code":"CG_MODEL_CANCELLED","phase":"match","message":"Match was cancelled","nextAction":"retry"}}\n',
  );
});

test("stdout whose reader went away ends the command with exit 74 and nothing on stderr", async () => {
  const child = spawn(process.execPath, [CLI, "explain"], { stdio: ["ignore", "pipe", "pipe"] });
  const exited = once(child, "exit");
  child.stdout.destroy();
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const [code] = await exited;
  assert.equal(code, 74);
  assert.equal(stderr, "");
});

/** Run the package's command through a shell whose redirections close or replace its stdout. */
function launched(command: string, redirect: string, ...args: string[]) {
  return spawnSync("/bin/sh", ["-c", `exec "$0" "$@" ${redirect}`, command, ...args], {
    encoding: "utf8",
    env: { ...process.env, CAPABILITY_GRAPH_CONFIG: "" },
  });
}

test("the package's command with stdout closed exits 74 with one line on stderr (CG-CLI-7)", () => {
  const done = launched(LAUNCHER, ">&-", "explain");
  assert.equal(done.status, 74);
  assert.equal(done.stderr, "capability-graph: cannot write to stdout\n");
});

test("the package's command with stdout on /dev/null writes into it and exits 0", () => {
  const done = launched(LAUNCHER, ">/dev/null", "explain");
  assert.equal(done.status, 0);
  assert.equal(done.stderr, "");
});

test("the package's command with stdout closed keeps its error envelope and exit 1", () => {
  const done = launched(LAUNCHER, ">&-", "list", "--config", "/nonexistent/capability-graph.json");
  assert.equal(done.status, 1);
  assert.equal(done.stderr, UNREADABLE);
});

test("the package's command with stdout on a full device exits 74 with one line on stderr", () => {
  const done = launched(LAUNCHER, ">/dev/full", "describe", "--config", graphFolder());
  assert.equal(done.status, 74);
  assert.equal(done.stderr, "capability-graph: cannot write to stdout\n");
});

test("mcp with stdout closed exits 74 at once, before its configuration is read (CG-CLI-7)", () => {
  const done = launched(LAUNCHER, ">&- </dev/null", "mcp", "--config", "/nonexistent/c.json");
  assert.equal(done.status, 74);
  assert.equal(done.stderr, "capability-graph: cannot write to stdout\n");
});

test("mcp with stdin closed at start meets the end of its session at once: exit 0", () => {
  const done = launched(LAUNCHER, "<&-", "mcp", "--config", graphFolder());
  assert.deepEqual([done.status, done.stdout, done.stderr], [0, "", ""]);
});

test("mcp with stdin closed at start still reports a configuration error", () => {
  const done = launched(LAUNCHER, "<&-", "mcp", "--config", "/nonexistent/c.json");
  assert.deepEqual([done.status, done.stdout, done.stderr], [1, "", UNREADABLE]);
});

test("--arguments-file - with stdin closed at start reads an empty text: a usage error", () => {
  const argv = ["call", "list_capabilities", "--arguments-file", "-", "--config", graphFolder()];
  const done = launched(LAUNCHER, "<&-", ...argv);
  assert.equal(done.status, 2);
  assert.equal(done.stdout, "");
  assert.ok(
    done.stderr.endsWith(
      "capability-graph call: error: argument --arguments-file: not valid JSON\n",
    ),
  );
});

for (const [redirect, what] of [
  ["2>&-", "closed"],
  ["2>/dev/full", "full"],
] as const) {
  test(`stderr ${what} leaves the exit status of a success, a graph error and a usage error`, () => {
    const config = graphFolder();
    assert.equal(launched(LAUNCHER, redirect, "describe", "--config", config).status, 0);
    assert.equal(
      launched(LAUNCHER, redirect, "resolve", "acme::missing", "--config", config).status,
      1,
    );
    assert.equal(launched(LAUNCHER, redirect, "list", "--bogus").status, 2);
  });
}

test("the package's command runs through a chain of symbolic links, as npm installs it", () => {
  const folder = mkdtempSync(join(tmpdir(), "cg-launcher-"));
  symlinkSync(LAUNCHER, join(folder, "first"));
  symlinkSync("first", join(folder, "capability-graph"));
  const done = launched(join(folder, "capability-graph"), "", "--version");
  assert.equal(done.status, 0);
  assert.match(done.stdout, /^capability-graph \d+\.\d+\.\d+\n$/);
});

test("explain prints a code's registry entry; an unknown code is a usage error", () => {
  const known = cli(["explain", "cg_graph_closed", "--json"]);
  assert.equal(known.status, 0);
  const entry = JSON.parse(known.stdout);
  assert.equal(entry.code, "CG_GRAPH_CLOSED");
  assert.deepEqual(entry.messages, { default: "Graph is closed" });
  const unknown = cli(["explain", "CG_XYZZY"]);
  assert.equal(unknown.status, 2);
  assert.doesNotMatch(unknown.stderr, /XYZZY/);
});

test("explain's text ends with the full URL of the code's page", () => {
  const done = cli(["explain", "CG_GRAPH_CLOSED"], {
    env: { ...process.env, CAPABILITY_GRAPH_DOCS_URL: "" },
  });
  assert.ok(
    done.stdout.endsWith("\n  docs: https://capability-graph.dev/errors/CG_GRAPH_CLOSED/\n"),
  );
});

for (const [given, site] of [
  ["http://localhost:8000", "http://localhost:8000/"],
  ["https://mirror.example/cg/", "https://mirror.example/cg/"],
  ["ftp://mirror.example/", "https://capability-graph.dev/"],
  ["https://mirror example/", "https://capability-graph.dev/"],
] as const) {
  test(`CAPABILITY_GRAPH_DOCS_URL=${given} links explain to ${site}`, () => {
    const done = cli(["explain", "CG_GRAPH_CLOSED"], {
      env: { ...process.env, CAPABILITY_GRAPH_DOCS_URL: given },
    });
    assert.ok(done.stdout.endsWith(`\n  docs: ${site}errors/CG_GRAPH_CLOSED/\n`), done.stdout);
  });
}

test("doctor on a configuration that cannot be read: report on stdout, envelope on stderr, exit 1", () => {
  const done = cli(["doctor", "--config", "/nonexistent/capability-graph.json", "--json"]);
  assert.equal(done.status, 1);
  assert.equal(done.stderr, UNREADABLE);
  const report = JSON.parse(done.stdout);
  assert.equal(report.status, "failed");
  assert.equal(report.checks[0].id, "config");
  assert.equal(report.checks[0].status, "fail");
});

test("--help prints the command's usage on stdout and exits 0", () => {
  const done = cli(["list", "--help"]);
  assert.equal(done.status, 0);
  assert.match(done.stdout, /--provider P/);
  assert.equal(done.stderr, "");
});

// 60,000 levels: an argument of 120,000 bytes stays under the kernel's limit for one argument.
for (const depth of [33, 1000, 60_000]) {
  test(`a container at depth 33 of an inline --arguments wins over the configuration, ${depth} deep`, () => {
    // [CG-CONV-15], [CG-CLI-8]: judged when parsed, before the graph opens; no runtime limit.
    const text = `{"tags": ${"[".repeat(depth)}${"]".repeat(depth)}}`;
    const done = cli([
      "call",
      "no_such_tool",
      "--arguments",
      text,
      "--config",
      "/nonexistent/c.json",
    ]);
    assert.equal(done.status, 1);
    assert.equal(
      JSON.parse(done.stderr).error.message,
      `/tags${"/0".repeat(32)} nesting deeper than 32`,
    );
  });

  test(`an inline --arguments whose brackets do not close is a usage error, ${depth} deep`, () => {
    const text = `{"tags": ${"[".repeat(depth)}${"]".repeat(depth - 1)}}`;
    const done = cli([
      "call",
      "no_such_tool",
      "--arguments",
      text,
      "--config",
      "/nonexistent/c.json",
    ]);
    assert.equal(done.status, 2);
    assert.match(done.stderr, /argument --arguments: not valid JSON/);
  });
}

test("NaN and Infinity in a request text are a usage error ([CG-CONV-16])", () => {
  for (const text of ['{"limit": NaN}', '{"limit": Infinity}', '{"limit": -Infinity}']) {
    const done = cli(["call", "list_capabilities", "--arguments", text, "--config", graphFolder()]);
    assert.equal(done.status, 2, text);
    assert.match(done.stderr, /argument --arguments: not valid JSON/);
  }
  const context = cli(["match", "x", "--context", "a:=NaN", "--config", graphFolder()]);
  assert.equal(context.status, 2);
});

test("a duplicate name followed by a text that is not JSON is a usage error ([CG-MSG-15])", () => {
  const done = cli([
    "call",
    "list_capabilities",
    "--arguments",
    '{"limit": 1, "limit": 2',
    "--config",
    graphFolder(),
  ]);
  assert.equal(done.status, 2);
});
