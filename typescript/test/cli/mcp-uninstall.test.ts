// `mcp-uninstall` on real client files (spec section 12.4, [CG-MAINT-13]): only this
// implementation's own entry is removed, everything else in the file is kept byte for byte, a
// foreign entry is a conflict and leaves the file byte-identical.
import assert from "node:assert/strict";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { CLI_MODULE, runMcpUninstall } from "../../src/cli/mcp-install.js";
import { captureIo, freshFolder, read, reportOf } from "./maintenance-helpers.js";

const OWN_ARGS = JSON.stringify([
  CLI_MODULE,
  "mcp",
  "--config",
  "/somewhere/capability-graph.json",
]);

async function uninstall(cwd: string, ...args: string[]) {
  const io = captureIo(cwd);
  const exit = await runMcpUninstall(args, io);
  return { exit, io };
}

function cursorFile(cwd: string, text: string): string {
  const file = path.join(cwd, "mcp.json");
  writeFileSync(file, text);
  return file;
}

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
    const file = cursorFile(cwd, CURSOR_WITH_OWN_AND_OTHER);
    const { exit, io } = await uninstall(
      cwd,
      "--client",
      "cursor",
      "--config-path",
      "mcp.json",
      "--json",
    );
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
    const { exit, io } = await uninstall(
      cwd,
      "--client",
      "cursor",
      "--config-path",
      "none.json",
      "--json",
    );
    assert.equal(exit, 0);
    assert.equal(reportOf(io).status, "ok");
    assert.ok(reportOf(io).checks.at(-1)?.message.endsWith("nothing to remove"));
    assert.equal(existsSync(path.join(cwd, "none.json")), false);
  });

  test("a file without the entry is ok and stays byte-identical", async () => {
    const cwd = freshFolder();
    const text = '{"mcpServers": {"other": {"command": "x"}}}';
    const file = cursorFile(cwd, text);
    const { exit } = await uninstall(
      cwd,
      "--client",
      "cursor",
      "--config-path",
      "mcp.json",
      "--json",
    );
    assert.equal(exit, 0);
    assert.equal(read(file), text);
  });

  test("a foreign entry under the name is a conflict: exit 3, file byte-identical", async () => {
    const cwd = freshFolder();
    const text =
      '{\n  "mcpServers": {\n    "capability-graph": {"command": "another-program", "args": ["mcp"]}\n  }\n}\n';
    const file = cursorFile(cwd, text);
    const { exit, io } = await uninstall(
      cwd,
      "--client",
      "cursor",
      "--config-path",
      "mcp.json",
      "--json",
    );
    assert.equal(exit, 3);
    assert.equal(reportOf(io).status, "conflict");
    assert.equal(read(file), text);
  });

  test("a client file that is not JSON is failed: exit 1, untouched", async () => {
    const cwd = freshFolder();
    const file = cursorFile(cwd, "this is not JSON {\n");
    const { exit, io } = await uninstall(
      cwd,
      "--client",
      "cursor",
      "--config-path",
      "mcp.json",
      "--json",
    );
    assert.equal(exit, 1);
    const report = reportOf(io);
    assert.equal(report.status, "failed");
    assert.deepEqual(report.checks, [
      { id: "client-config", status: "fail", message: "mcp.json: not valid JSON: left untouched" },
    ]);
    assert.equal(read(file), "this is not JSON {\n");
  });

  test("--dry-run reports planned and leaves the file byte-identical", async () => {
    const cwd = freshFolder();
    const file = cursorFile(cwd, CURSOR_WITH_OWN_AND_OTHER);
    const { exit, io } = await uninstall(
      cwd,
      "--client",
      "cursor",
      "--config-path",
      "mcp.json",
      "--dry-run",
      "--json",
    );
    assert.equal(exit, 0);
    assert.equal(reportOf(io).status, "planned");
    assert.equal(read(file), CURSOR_WITH_OWN_AND_OTHER);
  });

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
    const file = path.join(cwd, "mcp.json");
    writeFileSync(file, text);
    const { exit } = await uninstall(
      cwd,
      "--client",
      "vscode",
      "--config-path",
      "mcp.json",
      "--json",
    );
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
    const file = path.join(cwd, "config.toml");
    writeFileSync(file, text);
    const { exit, io } = await uninstall(
      cwd,
      "--client",
      "codex",
      "--config-path",
      "config.toml",
      "--json",
    );
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
    mkdirSync(path.join(cwd, "codex-home"));
    const file = path.join(cwd, "codex-home", "config.toml");
    writeFileSync(file, `[mcp_servers.capability-graph]\ncommand = "node"\nargs = ${OWN_ARGS}\n`);
    const io = captureIo(cwd, { CODEX_HOME: path.join(cwd, "codex-home") });
    const exit = await runMcpUninstall(["--client", "codex", "--json"], io);
    assert.equal(exit, 0);
    assert.equal(read(file), "");
  });

  test("a symbolic link is kept and its target edited", async () => {
    const cwd = freshFolder();
    const target = cursorFile(cwd, CURSOR_WITH_OWN_AND_OTHER);
    symlinkSync(target, path.join(cwd, "link.json"));
    const { exit } = await uninstall(
      cwd,
      "--client",
      "cursor",
      "--config-path",
      "link.json",
      "--json",
    );
    assert.equal(exit, 0);
    assert.ok(lstatSync(path.join(cwd, "link.json")).isSymbolicLink());
    assert.ok(!read(target).includes("capability-graph"));
  });

  test("a client file that is not UTF-8 is failed and untouched", async () => {
    const cwd = freshFolder();
    const file = path.join(cwd, "mcp.json");
    writeFileSync(file, Buffer.from([0x7b, 0xff, 0x7d]));
    const { exit, io } = await uninstall(
      cwd,
      "--client",
      "cursor",
      "--config-path",
      "mcp.json",
      "--json",
    );
    assert.equal(exit, 1);
    assert.equal(reportOf(io).checks[0]?.message, "mcp.json: not UTF-8 text: left untouched");
    assert.deepEqual([...readFileSync(file)], [0x7b, 0xff, 0x7d]);
  });

  test("an unknown client is a usage error naming the choices, never the given text", async () => {
    const cwd = freshFolder();
    const { exit, io } = await uninstall(cwd, "--client", "emacs-XYZZY");
    assert.equal(exit, 2);
    assert.equal(io.out, "");
    assert.ok(
      io.err.includes(
        "the choices are claude-code, claude-desktop, codex, cursor, gemini, vscode, windsurf, zed",
      ),
    );
    assert.ok(!io.err.includes("XYZZY"));
  });

  test("a missing --client is a usage error", async () => {
    const cwd = freshFolder();
    const { exit, io } = await uninstall(cwd, "--json");
    assert.equal(exit, 2);
    assert.ok(io.err.includes("the option --client is required"));
  });
});
