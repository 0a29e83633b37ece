// `mcp-uninstall` on real client files (spec section 12.4, [CG-MAINT-13]): only this
// implementation's own entry is removed, everything else in the file is kept byte for byte, a
// foreign entry is a conflict and leaves the file byte-identical.
import assert from "node:assert/strict";
import { existsSync, lstatSync, readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { freshFolder, read, reportOf } from "./maintenance-helpers.js";
import {
  assertUsageError,
  onClientFile,
  ownEntry,
  uninstall,
  writeClientFile,
} from "./mcp-install-helpers.js";

const OWN_ARGS = JSON.stringify(ownEntry("/somewhere/capability-graph.json").args);

const CURSOR_WITH_OWN_AND_OTHER = `{
  "mcpServers": {
    "other": {"command": "other-program", "args": []},
    "capability-graph": {"command": "/usr/bin/node", "args": ${OWN_ARGS}}
  },
  "theme": "dark"
}
`;

describe("mcp-uninstall", () => {
  test("removes this implementation's entry and keeps everything else", async () => {
    const cwd = freshFolder();
    const file = writeClientFile(cwd, "mcp.json", CURSOR_WITH_OWN_AND_OTHER);
    const { exit, io } = await uninstall(cwd, ...onClientFile("cursor", "mcp.json"));
    assert.equal(exit, 0);
    const report = reportOf(io);
    assert.equal(report.status, "ok");
    assert.deepEqual(report.checks.at(-1), {
      id: "server",
      status: "ok",
      message: "Removed the server capability-graph from mcp.json",
    });
    assert.deepEqual(JSON.parse(read(file)), {
      mcpServers: { other: { command: "other-program", args: [] } },
      theme: "dark",
    });
  });

  test("no client file is ok: nothing to remove, nothing written", async () => {
    const cwd = freshFolder();
    const { exit, io } = await uninstall(cwd, ...onClientFile("cursor", "none.json"));
    assert.equal(exit, 0);
    assert.equal(reportOf(io).status, "ok");
    assert.ok(reportOf(io).checks.at(-1)?.message.endsWith("nothing to remove"));
    assert.equal(existsSync(path.join(cwd, "none.json")), false);
    // [CG-MAINT-20]: client-config, then server, also when there is no file.
    assert.deepEqual(
      reportOf(io).checks.map((check) => [check.id, check.status]),
      [
        ["client-config", "ok"],
        ["server", "ok"],
      ],
    );
  });

  test("--dry-run with nothing to remove is ok, not planned", async () => {
    // [CG-MAINT-19]: a real run would write nothing either.
    const cwd = freshFolder();
    const { exit, io } = await uninstall(cwd, ...onClientFile("cursor", "none.json", "--dry-run"));
    assert.equal(exit, 0);
    assert.equal(reportOf(io).status, "ok");
  });

  // A Cursor file mcp.json the command must leave byte-identical, whatever the outcome.
  const leftAsItWas: Array<{
    name: string;
    content: string | Buffer;
    extra: string[];
    exit: number;
    status: string;
    checks?: Array<{ id: string; status: string; message: string }>;
    firstMessage?: string;
  }> = [
    {
      name: "a file without the entry is ok and stays byte-identical",
      content: '{"mcpServers": {"other": {"command": "x"}}}',
      extra: [],
      exit: 0,
      status: "ok",
    },
    {
      name: "a foreign entry under the name is a conflict: exit 3, file byte-identical",
      content:
        '{\n  "mcpServers": {\n    "capability-graph": {"command": "another-program", "args": ["mcp"]}\n  }\n}\n',
      extra: [],
      exit: 3,
      status: "conflict",
    },
    {
      name: "a client file that is not JSON is failed: exit 1, untouched",
      content: "this is not JSON {\n",
      extra: [],
      exit: 1,
      status: "failed",
      checks: [
        {
          id: "client-config",
          status: "fail",
          message: "mcp.json: not valid JSON: left untouched",
        },
      ],
    },
    {
      name: "--dry-run reports planned and leaves the file byte-identical",
      content: CURSOR_WITH_OWN_AND_OTHER,
      extra: ["--dry-run"],
      exit: 0,
      status: "planned",
    },
    {
      name: "a client file that is not UTF-8 is failed and untouched",
      content: Buffer.from([0x7b, 0xff, 0x7d]),
      extra: [],
      exit: 1,
      status: "failed",
      firstMessage: "mcp.json: not UTF-8 text: left untouched",
    },
  ];
  for (const { name, content, extra, exit, status, checks, firstMessage } of leftAsItWas) {
    test(name, async () => {
      const cwd = freshFolder();
      const file = writeClientFile(cwd, "mcp.json", content);
      const run = await uninstall(cwd, ...onClientFile("cursor", "mcp.json", ...extra));
      assert.equal(run.exit, exit);
      const report = reportOf(run.io);
      assert.equal(report.status, status);
      if (checks !== undefined) assert.deepEqual(report.checks, checks);
      if (firstMessage !== undefined) assert.equal(report.checks[0]?.message, firstMessage);
      assert.deepEqual(readFileSync(file), Buffer.from(content));
    });
  }

  test("VS Code's comments and trailing commas survive the removal", async () => {
    const cwd = freshFolder();
    const text = `// my servers
{
  "servers": {
    /* keep me */
    "other": {"type": "stdio", "command": "x",},
    "capability-graph": {"type": "stdio", "command": "/usr/bin/node", "args": ${OWN_ARGS}},
  },
}
`;
    const file = writeClientFile(cwd, "mcp.json", text);
    const { exit } = await uninstall(cwd, ...onClientFile("vscode", "mcp.json"));
    assert.equal(exit, 0);
    const after = read(file);
    assert.ok(after.startsWith("// my servers\n"));
    assert.ok(after.includes("/* keep me */"));
    assert.ok(after.includes('"other": {"type": "stdio", "command": "x",},'));
    assert.ok(!after.includes("capability-graph"));
  });

  test("Codex: the own [mcp_servers.NAME] table and its sub-tables go, other tables and comments stay", async () => {
    const cwd = freshFolder();
    const text = `# my codex settings
model = "o4-mini"

[mcp_servers.other]
command = "other-program"

[mcp_servers."capability-graph"]
command = "/usr/bin/node"
args = ${OWN_ARGS}

[mcp_servers.capability-graph.env]
A = "1"

[profiles.fast]
model = "o4-mini" # fast
`;
    const file = writeClientFile(cwd, "config.toml", text);
    const { exit, io } = await uninstall(cwd, ...onClientFile("codex", "config.toml"));
    assert.equal(exit, 0, io.out);
    assert.equal(
      read(file),
      `# my codex settings
model = "o4-mini"

[mcp_servers.other]
command = "other-program"

[profiles.fast]
model = "o4-mini" # fast
`,
    );
  });

  test("the default Codex file is $CODEX_HOME/config.toml", async () => {
    const cwd = freshFolder();
    const file = writeClientFile(
      cwd,
      "codex-home/config.toml",
      `[mcp_servers.capability-graph]\ncommand = "node"\nargs = ${OWN_ARGS}\n`,
    );
    const env = { CODEX_HOME: path.join(cwd, "codex-home") };
    const { exit } = await uninstall({ cwd, env }, "--client", "codex", "--json");
    assert.equal(exit, 0);
    assert.equal(read(file), "");
  });

  test("an empty CODEX_HOME is unset: the default file is under HOME", async () => {
    const cwd = freshFolder();
    const file = writeClientFile(
      cwd,
      "home/.codex/config.toml",
      `[mcp_servers.capability-graph]\ncommand = "node"\nargs = ${OWN_ARGS}\n`,
    );
    const env = { CODEX_HOME: "", HOME: path.join(cwd, "home") };
    const { exit } = await uninstall({ cwd, env }, "--client", "codex", "--json");
    assert.equal(exit, 0);
    assert.equal(read(file), "");
  });

  test("a symbolic link is kept and its target edited", async () => {
    const cwd = freshFolder();
    const target = writeClientFile(cwd, "mcp.json", CURSOR_WITH_OWN_AND_OTHER);
    symlinkSync(target, path.join(cwd, "link.json"));
    const { exit } = await uninstall(cwd, ...onClientFile("cursor", "link.json"));
    assert.equal(exit, 0);
    assert.ok(lstatSync(path.join(cwd, "link.json")).isSymbolicLink());
    assert.ok(!read(target).includes("capability-graph"));
  });

  const usageErrors: Array<{ name: string; args: string[]; says: string; omits: string[] }> = [
    {
      name: "an unknown client is a usage error naming the choices, never the given text",
      args: ["--client", "emacs-XYZZY"],
      says: "the choices are claude-code, claude-desktop, codex, cursor, gemini, vscode, windsurf, zed",
      omits: ["XYZZY"],
    },
    {
      name: "a missing --client is a usage error",
      args: ["--json"],
      says: "the option --client is required",
      omits: [],
    },
  ];
  for (const { name, args, says, omits } of usageErrors) {
    test(name, async () => {
      assertUsageError(await uninstall(freshFolder(), ...args), { says, omits });
    });
  }
});
