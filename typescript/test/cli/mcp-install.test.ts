// `mcp-install` on real configurations and client files (spec section 12.4): the check order,
// the entry each client gets, the conflict rules, --force and its backups, byte-identical files
// on every failure, atomic writes through symbolic links.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { parse as parseJsonc } from "jsonc-parser";
import { parse as parseToml } from "smol-toml";
import { CLI_MODULE } from "../../src/surfaces/cli/mcp-install.js";
import { freshFolder, read, reportOf } from "./maintenance-helpers.js";
import {
  assertUsageError,
  checkStatuses,
  FIXTURES,
  install,
  onClientFile,
  ownEntry,
  project,
  writeClientFile,
} from "./mcp-install-helpers.js";

describe("mcp-install: adding the entry", () => {
  test("a new Cursor file gets the entry running this CLI with the configuration: ok, exit 0", async () => {
    const { cwd, config } = project();
    const { exit, io } = await install(cwd, ...onClientFile("cursor", "c.json"));
    assert.equal(exit, 0);
    const report = reportOf(io);
    assert.equal(report.status, "ok");
    assert.deepEqual(checkStatuses(report), [
      ["graph-config", "ok"],
      ["client-config", "ok"],
      ["server", "ok"],
    ]);
    assert.deepEqual(report.warnings, ["Restart Cursor to load the server"]);
    assert.deepEqual(JSON.parse(read(path.join(cwd, "c.json"))), {
      mcpServers: { "capability-graph": ownEntry(config) },
    });
  });

  test("the default Cursor file is .cursor/mcp.json in the working folder", async () => {
    const { cwd } = project();
    const { exit } = await install(cwd, "--client", "cursor", "--json");
    assert.equal(exit, 0);
    assert.ok(existsSync(path.join(cwd, ".cursor", "mcp.json")));
  });

  test("the configuration comes from CAPABILITY_GRAPH_CONFIG when --config is absent", async () => {
    const { cwd, config } = project();
    const other = freshFolder();
    const env = { CAPABILITY_GRAPH_CONFIG: config };
    const { exit } = await install({ cwd: other, env }, "--client", "cursor", "--json");
    assert.equal(exit, 0);
    const written = JSON.parse(read(path.join(other, ".cursor", "mcp.json")));
    assert.deepEqual(written.mcpServers["capability-graph"], ownEntry(config));
    assert.equal(existsSync(path.join(cwd, ".cursor")), false);
  });

  test("everything else in the file is kept, in its layout", async () => {
    const { cwd, config } = project();
    const text =
      '{\n  "mcpServers": {\n    "other": {"command": "x"}\n  },\n  "theme": "dark"\n}\n';
    const file = writeClientFile(cwd, "c.json", text);
    const { exit } = await install(cwd, ...onClientFile("cursor", "c.json"));
    assert.equal(exit, 0);
    const after = read(file);
    assert.ok(
      after.startsWith(
        '{\n  "mcpServers": {\n    "other": {"command": "x"},\n    "capability-graph": {\n',
      ),
    );
    assert.ok(after.endsWith('\n  },\n  "theme": "dark"\n}\n'));
    assert.deepEqual(JSON.parse(after), {
      mcpServers: { other: { command: "x" }, "capability-graph": ownEntry(config) },
      theme: "dark",
    });
  });

  test("VS Code: comments survive and the entry is a stdio server under servers", async () => {
    const { cwd, config } = project();
    const text = '// workspace servers\n{\n  "servers": {\n    /* none yet */\n  },\n}\n';
    const file = writeClientFile(cwd, "mcp.json", text);
    const { exit, io } = await install(cwd, ...onClientFile("vscode", "mcp.json"));
    assert.equal(exit, 0, io.out);
    const after = read(file);
    assert.ok(after.startsWith("// workspace servers\n"));
    assert.deepEqual(parseJsonc(after), {
      servers: { "capability-graph": { type: "stdio", ...ownEntry(config) } },
    });
  });

  test("an identical entry is ok and the file is left unchanged", async () => {
    const { cwd } = project();
    await install(cwd, ...onClientFile("cursor", "c.json"));
    const before = read(path.join(cwd, "c.json"));
    chmodSync(path.join(cwd, "c.json"), 0o600);
    const { exit, io } = await install(cwd, ...onClientFile("cursor", "c.json"));
    assert.equal(exit, 0);
    assert.equal(
      reportOf(io).checks.at(-1)?.message,
      "Cursor already has the server capability-graph in c.json",
    );
    assert.equal(read(path.join(cwd, "c.json")), before);
  });

  test("--dry-run over an identical entry is ok, not planned: nothing would be written", async () => {
    // [CG-MAINT-19]
    const { cwd } = project();
    await install(cwd, ...onClientFile("cursor", "c.json"));
    const before = read(path.join(cwd, "c.json"));
    const { exit, io } = await install(cwd, ...onClientFile("cursor", "c.json", "--dry-run"));
    assert.equal(exit, 0);
    assert.equal(reportOf(io).status, "ok");
    assert.equal(read(path.join(cwd, "c.json")), before);
  });

  test("the checks are graph-config, env, client-config and server, in this order", async () => {
    // [CG-MAINT-20]
    const { cwd } = project();
    const { io } = await install(cwd, ...onClientFile("cursor", "c.json", "--env", "K"));
    assert.deepEqual(
      reportOf(io).checks.map((check) => [check.id, check.status]),
      [
        ["graph-config", "ok"],
        ["env", "ok"],
        ["client-config", "ok"],
        ["server", "ok"],
      ],
    );
  });

  // Each accepted --name is the one key of the servers written.
  const acceptedNames: Array<{ name: string; serverName: string }> = [
    { name: "--name registers the server under another name", serverName: "docs-graph" },
    ...[
      { serverName: "_graph", what: "'_' first" },
      { serverName: "-graph", what: "'-' first" },
      { serverName: "g", what: "one character" },
      { serverName: "a".repeat(64), what: "64 characters" },
    ].map(({ serverName, what }) => ({
      name: `--name accepts 1 to 64 of letters, digits, '_' and '-' with any of them first: ${what}`,
      serverName,
    })),
  ];
  for (const { name, serverName } of acceptedNames) {
    test(name, async () => {
      const { cwd } = project();
      const { exit } = await install(
        cwd,
        // The = form: a value that begins with '-' is not option-like there ([CG-CLI-15]).
        ...onClientFile("cursor", "c.json", `--name=${serverName}`),
      );
      assert.equal(exit, 0);
      assert.deepEqual(Object.keys(JSON.parse(read(path.join(cwd, "c.json"))).mcpServers), [
        serverName,
      ]);
    });
  }

  test("--dry-run reports planned and writes nothing", async () => {
    const { cwd } = project();
    const { exit, io } = await install(cwd, ...onClientFile("cursor", "c.json", "--dry-run"));
    assert.equal(exit, 0);
    assert.equal(reportOf(io).status, "planned");
    assert.equal(existsSync(path.join(cwd, "c.json")), false);
  });

  test("a symbolic link stays a link and its target is edited", async () => {
    const { cwd } = project();
    const target = writeClientFile(cwd, "real.json", "{}\n");
    symlinkSync(target, path.join(cwd, "link.json"));
    const { exit } = await install(cwd, ...onClientFile("cursor", "link.json"));
    assert.equal(exit, 0);
    assert.ok(lstatSync(path.join(cwd, "link.json")).isSymbolicLink());
    assert.ok("capability-graph" in JSON.parse(read(target)).mcpServers);
  });

  test("the file's permissions are kept and no temporary file is left", async () => {
    const { cwd } = project();
    const file = writeClientFile(cwd, "c.json", "{}\n");
    chmodSync(file, 0o600);
    await install(cwd, ...onClientFile("cursor", "c.json"));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(cwd).sort(), ["c.json", "capability-graph.json"]);
  });

  test("Codex: a [mcp_servers.NAME] table is appended and the rest of config.toml is kept", async () => {
    const { cwd, config } = project();
    const text = '# codex\nmodel = "o4-mini"\n\n[profiles.fast]\nmodel = "o4-mini"\n';
    const file = writeClientFile(cwd, "config.toml", text);
    const args = onClientFile("codex", "config.toml", "--env", "OPENAI_API_KEY");
    const { exit } = await install(cwd, ...args);
    assert.equal(exit, 0);
    const after = read(file);
    assert.ok(after.startsWith(text));
    assert.deepEqual(JSON.parse(JSON.stringify(parseToml(after).mcp_servers)), {
      "capability-graph": { ...ownEntry(config), env_vars: ["OPENAI_API_KEY"] },
    });
    const again = await install(cwd, ...args);
    assert.equal(again.exit, 0);
    assert.equal(read(file), after);
  });

  test("Codex: a 64-bit integer past 2^53 is valid TOML and the file is edited, the integer kept", async () => {
    // Found by the generated Codex files (client-files-generated.test.ts, seed 2): such a file
    // was refused as "not valid TOML" ([CG-MAINT-8]); the reference edits it.
    const { cwd } = project();
    const text = "n = 9223372036854775807\nm = -9007199254740993\n";
    const file = writeClientFile(cwd, "config.toml", text);
    const { exit, io } = await install(cwd, ...onClientFile("codex", "config.toml"));
    assert.equal(exit, 0, io.out);
    const after = read(file);
    assert.ok(after.startsWith(text));
    const document = parseToml(after, { integersAsBigInt: "asNeeded" });
    assert.equal(document.n, 9223372036854775807n);
    assert.equal(document.m, -9007199254740993n);
  });
});

describe("mcp-install: --env", () => {
  // A forwarded variable is written as a reference in the client's own syntax; its value, present
  // in the environment of the run, never reaches the file.
  const references: Array<{ name: string; client: string; env: string; type?: string }> = [
    {
      name: "a forwarded variable is written by reference in the client's syntax, never its value",
      client: "cursor",
      env: `\${env:MY_TOKEN}`,
    },
    {
      name: "Claude Code refers to a variable by its own reference syntax",
      client: "claude-code",
      env: `\${MY_TOKEN}`,
      type: "stdio",
    },
  ];
  for (const { name, client, env, type } of references) {
    test(name, async () => {
      const { cwd } = project();
      const { exit } = await install(
        { cwd, env: { MY_TOKEN: "value-SECRET-123" } },
        ...onClientFile(client, "c.json", "--env", "MY_TOKEN"),
      );
      assert.equal(exit, 0);
      const text = read(path.join(cwd, "c.json"));
      const entry = JSON.parse(text).mcpServers["capability-graph"];
      assert.equal(entry.type, type);
      assert.deepEqual(entry.env, { MY_TOKEN: env });
      assert.ok(!text.includes("SECRET"));
    });
  }

  test("a client without variable references refuses --env: failed, exit 1, nothing written", async () => {
    const { cwd } = project();
    const { exit, io } = await install(
      cwd,
      ...onClientFile("claude-desktop", "c.json", "--env", "MY_TOKEN"),
    );
    assert.equal(exit, 1);
    const report = reportOf(io);
    assert.equal(report.status, "failed");
    assert.deepEqual(checkStatuses(report), [
      ["graph-config", "ok"],
      ["env", "fail"],
    ]);
    assert.equal(existsSync(path.join(cwd, "c.json")), false);
  });

  test("an openai executor whose key variable is not forwarded gets a warning", async () => {
    const cwd = freshFolder();
    const config = {
      providers: [],
      model: {
        executor: "openai",
        baseUrl: "http://127.0.0.1:9/v1",
        model: "m",
        apiKeyEnv: "OPENAI_API_KEY",
      },
    };
    writeFileSync(path.join(cwd, "capability-graph.json"), JSON.stringify(config));
    const { exit, io } = await install(cwd, ...onClientFile("cursor", "c.json"));
    assert.equal(exit, 0);
    assert.ok(
      reportOf(io).warnings.includes(
        "The executor reads its key from OPENAI_API_KEY, which is not forwarded to the server: add --env OPENAI_API_KEY",
      ),
    );
    const forwarded = await install(
      cwd,
      ...onClientFile("cursor", "d.json", "--env", "OPENAI_API_KEY"),
    );
    assert.deepEqual(reportOf(forwarded.io).warnings, ["Restart Cursor to load the server"]);
  });
});

describe("mcp-install: usage errors never repeat the rejected text", () => {
  const NAME_RULE = "option --name: must be 1..64 letters A-Z or a-z, digits, _ or -";
  const usageErrors: Array<{ name: string; option: string[]; says: string; omits: string[] }> = [
    {
      name: "a --name of 65 characters is a usage error that does not repeat it: exit 2",
      option: ["--name", "X".repeat(65)],
      says: NAME_RULE,
      omits: ["XYZZY", "X".repeat(65)],
    },
    {
      name: "a --name with another character is a usage error that does not repeat it: exit 2",
      option: ["--name", "my.XYZZY"],
      says: NAME_RULE,
      omits: ["XYZZY", "X".repeat(65)],
    },
    {
      name: "an --env name that is not a variable name is a usage error that does not repeat it: exit 2",
      option: ["--env", "1BAD-XYZZY"],
      says: "must be an environment variable name",
      omits: ["XYZZY"],
    },
  ];
  for (const { name, option, says, omits } of usageErrors) {
    test(name, async () => {
      const { cwd } = project();
      const run = await install(cwd, "--client", "cursor", "--config-path", "c.json", ...option);
      assertUsageError(run, { says, omits });
      assert.equal(existsSync(path.join(cwd, "c.json")), false);
    });
  }
});

describe("mcp-install: conflicts and failures leave the file byte-identical", () => {
  // The conformance fixture's Cursor file: another program under the server name capability-graph.
  const copyForeignCursorFile = (file: string) => {
    mkdirSync(path.dirname(file));
    cpSync(path.join(FIXTURES, "maintenance", "client", "mcp.json"), file);
  };
  const olderEntry = JSON.stringify({
    mcpServers: { "capability-graph": ownEntry("/old/capability-graph.json") },
  });

  // A conflict: exit 3, the file byte-identical and no backup kept.
  const conflicts: Array<{
    name: string;
    file: string;
    prepare: (file: string) => void;
    extra: string[];
    lastCheck?: { id: string; status: string; message: string };
    lastMessageIncludes?: string;
  }> = [
    {
      name: "a foreign entry of the same name is a conflict: exit 3",
      file: "client/mcp.json",
      prepare: copyForeignCursorFile,
      extra: [],
      lastCheck: {
        id: "server",
        status: "fail",
        message:
          "Cursor has another program under the server capability-graph in client/mcp.json: not overwritten (choose another --name)",
      },
    },
    {
      name: "--force over a foreign entry is still a conflict and keeps no backup",
      file: "client/mcp.json",
      prepare: copyForeignCursorFile,
      extra: ["--force"],
    },
    {
      name: "an older entry of this implementation is a conflict without --force",
      file: "c.json",
      prepare: (file) => writeFileSync(file, olderEntry),
      extra: [],
      lastMessageIncludes: "--force replaces it and keeps a backup",
    },
  ];
  for (const { name, file, prepare, extra, lastCheck, lastMessageIncludes } of conflicts) {
    test(name, async () => {
      const { cwd } = project();
      const clientFile = path.join(cwd, file);
      prepare(clientFile);
      const before = readFileSync(clientFile);
      const { exit, io } = await install(cwd, ...onClientFile("cursor", file, ...extra));
      assert.equal(exit, 3);
      const report = reportOf(io);
      assert.equal(report.status, "conflict");
      if (lastCheck !== undefined) assert.deepEqual(report.checks.at(-1), lastCheck);
      if (lastMessageIncludes !== undefined)
        assert.ok(report.checks.at(-1)?.message.includes(lastMessageIncludes));
      assert.deepEqual(readFileSync(clientFile), before);
      assert.equal(existsSync(`${clientFile}.bak`), false);
    });
  }

  test("--force replaces an older entry of this implementation, keeping FILE.bak, then FILE.bak.2", async () => {
    const { cwd, config } = project();
    const file = writeClientFile(cwd, "c.json", olderEntry);
    chmodSync(file, 0o640);
    const { exit, io } = await install(cwd, ...onClientFile("cursor", "c.json", "--force"));
    assert.equal(exit, 0);
    assert.deepEqual(checkStatuses(reportOf(io)), [
      ["graph-config", "ok"],
      ["client-config", "ok"],
      ["backup", "ok"],
      ["server", "ok"],
    ]);
    assert.equal(read(`${file}.bak`), olderEntry);
    assert.equal(statSync(`${file}.bak`).mode & 0o777, 0o640);
    assert.deepEqual(JSON.parse(read(file)).mcpServers["capability-graph"], ownEntry(config));

    const newer = JSON.stringify({
      mcpServers: { "capability-graph": ownEntry("/older/still.json") },
    });
    writeFileSync(file, newer);
    await install(cwd, ...onClientFile("cursor", "c.json", "--force"));
    assert.equal(read(`${file}.bak`), olderEntry);
    assert.equal(read(`${file}.bak.2`), newer);
  });

  // A client file the command cannot edit: failed, exit 1, the last check (where given) the failed
  // client-config check with that message, and a file (where its text is given) untouched.
  const writing = (text: string) => (file: string) => writeFileSync(file, text);
  const unusable: Array<{
    name: string;
    client: string;
    file: string;
    prepare: (file: string) => void;
    clientConfigMessage?: string;
    textAfter?: string;
  }> = [
    {
      name: "a client file that is not JSON is failed: exit 1, untouched",
      client: "cursor",
      file: "broken.json",
      prepare: (file) => cpSync(path.join(FIXTURES, "client-files", "client-broken.json"), file),
      clientConfigMessage: "broken.json: not valid JSON: left untouched",
      textAfter: "this is not JSON {\n",
    },
    {
      name: "comments in a client that does not accept them make the file invalid",
      client: "cursor",
      file: "c.json",
      prepare: writing("// no\n{}\n"),
      clientConfigMessage: "c.json: not valid JSON: left untouched",
      textAfter: "// no\n{}\n",
    },
    {
      name: "a container that is not an object is failed and untouched",
      client: "cursor",
      file: "c.json",
      prepare: writing('{"mcpServers": []}'),
      clientConfigMessage: "c.json: its mcpServers is not an object: left untouched",
      textAfter: '{"mcpServers": []}',
    },
    {
      name: "a fifo in the place of the client file is failed at once, never read",
      client: "cursor",
      file: "c.json",
      prepare: (file) => execFileSync("mkfifo", [file]),
      clientConfigMessage: "c.json: is not a regular file: left untouched",
    },
    {
      name: "a folder in the place of the client file is failed",
      client: "cursor",
      file: "c.json",
      prepare: (file) => mkdirSync(file),
      clientConfigMessage: "c.json: is not a regular file: left untouched",
    },
    {
      name: "a Codex file that is not TOML is failed and untouched",
      client: "codex",
      file: "config.toml",
      prepare: writing("[unclosed\n"),
      clientConfigMessage: "config.toml: not valid TOML: left untouched",
      textAfter: "[unclosed\n",
    },
    {
      name: "a Codex entry defined inline cannot be spliced: failed, untouched",
      client: "codex",
      file: "config.toml",
      prepare: writing(`mcp_servers = { other = { command = "x" } }\n`),
      textAfter: `mcp_servers = { other = { command = "x" } }\n`,
    },
  ];
  for (const { name, client, file, prepare, clientConfigMessage, textAfter } of unusable) {
    test(name, async () => {
      const { cwd } = project();
      prepare(path.join(cwd, file));
      const { exit, io } = await install(cwd, ...onClientFile(client, file));
      assert.equal(exit, 1, io.out);
      const report = reportOf(io);
      assert.equal(report.status, "failed");
      if (clientConfigMessage !== undefined)
        assert.deepEqual(report.checks.at(-1), {
          id: "client-config",
          status: "fail",
          message: clientConfigMessage,
        });
      if (textAfter !== undefined) assert.equal(read(path.join(cwd, file)), textAfter);
    });
  }

  test("a configuration that does not open is failed first and the client file is untouched", async () => {
    const cwd = freshFolder();
    writeFileSync(
      path.join(cwd, "capability-graph.json"),
      JSON.stringify({ providers: [{ path: "providers/missing.json" }] }),
    );
    const file = writeClientFile(cwd, "c.json", "not even JSON");
    const { exit, io } = await install(cwd, ...onClientFile("cursor", "c.json"));
    assert.equal(exit, 1);
    const report = reportOf(io);
    assert.equal(report.status, "failed");
    assert.equal(report.checks.length, 1);
    assert.equal(report.checks[0]?.id, "graph-config");
    assert.equal(report.checks[0]?.status, "fail");
    assert.ok(
      report.checks[0]?.message.startsWith(
        "capability-graph.json cannot be served: CG_CONFIG_INVALID: ",
      ),
    );
    assert.equal(read(file), "not even JSON");
  });

  test("a configuration file that cannot be read is a failed report with nothing on stderr", async () => {
    const cwd = freshFolder();
    const { exit, io } = await install(cwd, ...onClientFile("cursor", "c.json"));
    assert.equal(exit, 1);
    assert.equal(reportOf(io).checks[0]?.id, "graph-config");
    assert.equal(existsSync(path.join(cwd, "c.json")), false);
  });
});

describe("mcp-install: each client's documented file", () => {
  const userConfig = process.platform === "darwin" ? "Library/Application Support" : ".config";
  const locations: Array<[string, string]> = [
    ["claude-code", ".mcp.json"],
    ["claude-desktop", `${userConfig}/Claude/claude_desktop_config.json`],
    ["codex", ".codex/config.toml"],
    ["cursor", ".cursor/mcp.json"],
    ["gemini", ".gemini/settings.json"],
    ["vscode", ".vscode/mcp.json"],
    ["windsurf", ".codeium/windsurf/mcp_config.json"],
    ["zed", ".config/zed/settings.json"],
  ];
  for (const [client, location] of locations) {
    test(`${client}: ${location} (HOME and the working folder being the same folder here)`, async () => {
      const { cwd } = project();
      const { exit, io } = await install(cwd, "--client", client, "--dry-run", "--json");
      assert.equal(exit, 0);
      assert.deepEqual(reportOf(io).checks[1], {
        id: "client-config",
        status: "ok",
        message: `${location} does not exist yet: it will be created`,
      });
    });
  }
});

describe("mcp-install: concurrent edits of one client file (CG-MAINT-22)", () => {
  /** Rounds of two concurrent CLI processes (docs/reliability.md reports runs of 40). */
  const ROUNDS = 10;

  function cliProcess(cwd: string, args: string[]): Promise<{ status: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        [CLI_MODULE, ...args],
        { cwd, env: { ...process.env, HOME: cwd } },
        (error, stdout, stderr) => {
          if (error !== null && typeof error.code !== "number") reject(error);
          else resolve({ status: (JSON.parse(stdout) as { status: string }).status, stderr });
        },
      );
    });
  }

  test("two installs at once under other names each land in the file or report conflict", async () => {
    const { cwd } = project();
    const others: Record<string, unknown> = {};
    for (let index = 0; index < 200; index += 1) {
      others[`other${index}`] = { command: "x", args: Array(8).fill("y") };
    }
    const lost: string[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const file = writeClientFile(
        cwd,
        `round${round}/mcp.json`,
        JSON.stringify({ mcpServers: others }),
      );
      const names = ["alpha", "beta"];
      const outcomes = await Promise.all(
        names.map((name) =>
          cliProcess(cwd, ["mcp-install", ...onClientFile("cursor", file, "--name", name)]),
        ),
      );
      const servers = (JSON.parse(read(file)) as { mcpServers: Record<string, unknown> })
        .mcpServers;
      outcomes.forEach(({ status, stderr }, index) => {
        assert.equal(stderr, "");
        assert.ok(status === "ok" || status === "conflict", status);
        const name = names[index] ?? "";
        if (status === "ok" && !(name in servers)) lost.push(`${round}:${name}`);
      });
      assert.deepEqual(readdirSync(path.dirname(file)), ["mcp.json"]); // no lock left
    }
    assert.deepEqual(lost, []);
  });

  test("a lock held by another edit is waited for, then a conflict that touches nothing", async () => {
    const { cwd } = project();
    const file = writeClientFile(cwd, "mcp.json", '{"mcpServers": {}}\n');
    const lock = `${file}.lock`;
    writeFileSync(lock, "");
    const { exit, io } = await install(cwd, ...onClientFile("cursor", file));
    assert.equal(exit, 3);
    const report = reportOf(io);
    assert.equal(report.status, "conflict");
    assert.deepEqual(checkStatuses(report), [
      ["graph-config", "ok"],
      ["client-config", "fail"],
    ]);
    assert.equal(
      report.checks[1]?.message,
      "mcp.json is being edited by another process: mcp.json.lock exists (remove it if no edit is running); left untouched",
    );
    assert.equal(read(file), '{"mcpServers": {}}\n');
    assert.ok(existsSync(lock), "another's lock is never taken away");
    rmSync(lock);
    assert.equal((await install(cwd, ...onClientFile("cursor", file))).exit, 0);
    assert.equal(existsSync(lock), false);
  });
});
