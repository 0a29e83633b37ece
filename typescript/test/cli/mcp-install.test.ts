// `mcp-install` on real configurations and client files (spec section 12.4): the check order,
// the entry each client gets, the conflict rules, --force and its backups, byte-identical files
// on every failure, atomic writes through symbolic links.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { parse as parseJsonc } from "jsonc-parser";
import { parse as parseToml } from "smol-toml";
import { CLI_MODULE, runMcpInstall } from "../../src/cli/mcp-install.js";
import { captureIo, freshFolder, REPOSITORY, read, reportOf } from "./maintenance-helpers.js";

const FIXTURES = path.join(REPOSITORY, "conformance", "fixtures");

/** A folder holding a valid configuration (the maintenance fixture's) and nothing else. */
function project(): { cwd: string; config: string } {
  const cwd = freshFolder();
  cpSync(
    path.join(FIXTURES, "maintenance", "capability-graph.json"),
    path.join(cwd, "capability-graph.json"),
  );
  return { cwd, config: path.join(cwd, "capability-graph.json") };
}

async function install(cwd: string, env: Record<string, string> | undefined, ...args: string[]) {
  const io = captureIo(cwd, env);
  const exit = await runMcpInstall(args, io);
  return { exit, io };
}

function ownEntry(config: string): Record<string, unknown> {
  return { command: process.execPath, args: [CLI_MODULE, "mcp", "--config", config] };
}

describe("mcp-install: adding the entry", () => {
  test("a new Cursor file gets the entry running this CLI with the configuration: ok, exit 0", async () => {
    const { cwd, config } = project();
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "c.json",
      "--json",
    );
    assert.equal(exit, 0);
    const report = reportOf(io);
    assert.equal(report.status, "ok");
    assert.deepEqual(
      report.checks.map(({ id, status }) => [id, status]),
      [
        ["graph-config", "ok"],
        ["client-config", "ok"],
        ["server", "ok"],
      ],
    );
    assert.deepEqual(report.warnings, ["Restart Cursor to load the server"]);
    assert.deepEqual(JSON.parse(read(path.join(cwd, "c.json"))), {
      mcpServers: { "capability-graph": ownEntry(config) },
    });
  });

  test("the default Cursor file is .cursor/mcp.json in the working folder", async () => {
    const { cwd } = project();
    const { exit } = await install(cwd, undefined, "--client", "cursor", "--json");
    assert.equal(exit, 0);
    assert.ok(existsSync(path.join(cwd, ".cursor", "mcp.json")));
  });

  test("the configuration comes from CAPABILITY_GRAPH_CONFIG when --config is absent", async () => {
    const { cwd, config } = project();
    const other = freshFolder();
    const { exit } = await install(
      other,
      { CAPABILITY_GRAPH_CONFIG: config },
      "--client",
      "cursor",
      "--json",
    );
    assert.equal(exit, 0);
    const written = JSON.parse(read(path.join(other, ".cursor", "mcp.json")));
    assert.deepEqual(written.mcpServers["capability-graph"], ownEntry(config));
    assert.equal(existsSync(path.join(cwd, ".cursor")), false);
  });

  test("everything else in the file is kept, in its layout", async () => {
    const { cwd, config } = project();
    const text =
      '{\n  "mcpServers": {\n    "other": {"command": "x"}\n  },\n  "theme": "dark"\n}\n';
    writeFileSync(path.join(cwd, "c.json"), text);
    const { exit } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "c.json",
      "--json",
    );
    assert.equal(exit, 0);
    const after = read(path.join(cwd, "c.json"));
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
    writeFileSync(path.join(cwd, "mcp.json"), text);
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "vscode",
      "--config-path",
      "mcp.json",
      "--json",
    );
    assert.equal(exit, 0, io.out);
    const after = read(path.join(cwd, "mcp.json"));
    assert.ok(after.startsWith("// workspace servers\n"));
    assert.deepEqual(parseJsonc(after), {
      servers: { "capability-graph": { type: "stdio", ...ownEntry(config) } },
    });
  });

  test("an identical entry is ok and the file is left unchanged", async () => {
    const { cwd } = project();
    await install(cwd, undefined, "--client", "cursor", "--config-path", "c.json", "--json");
    const before = read(path.join(cwd, "c.json"));
    chmodSync(path.join(cwd, "c.json"), 0o600);
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "c.json",
      "--json",
    );
    assert.equal(exit, 0);
    assert.equal(
      reportOf(io).checks.at(-1)?.message,
      "Cursor already has the server capability-graph in c.json",
    );
    assert.equal(read(path.join(cwd, "c.json")), before);
  });

  test("--name registers the server under another name", async () => {
    const { cwd } = project();
    const { exit } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "c.json",
      "--name",
      "docs-graph",
      "--json",
    );
    assert.equal(exit, 0);
    assert.deepEqual(Object.keys(JSON.parse(read(path.join(cwd, "c.json"))).mcpServers), [
      "docs-graph",
    ]);
  });

  test("--name accepts 1 to 64 of letters, digits, '_' and '-' with any of them first", async () => {
    for (const name of ["_graph", "-graph", "g", "a".repeat(64)]) {
      const { cwd } = project();
      const { exit } = await install(
        cwd,
        undefined,
        "--client",
        "cursor",
        "--config-path",
        "c.json",
        "--name",
        name,
        "--json",
      );
      assert.equal(exit, 0);
      assert.deepEqual(Object.keys(JSON.parse(read(path.join(cwd, "c.json"))).mcpServers), [name]);
    }
  });

  test("a --name of 65 characters or with another character is a usage error that does not repeat it: exit 2", async () => {
    for (const name of ["X".repeat(65), "my.XYZZY"]) {
      const { cwd } = project();
      const { exit, io } = await install(
        cwd,
        undefined,
        "--client",
        "cursor",
        "--config-path",
        "c.json",
        "--name",
        name,
      );
      assert.equal(exit, 2);
      assert.equal(io.out, "");
      assert.ok(io.err.includes("option --name: must be 1..64 letters A-Z or a-z, digits, _ or -"));
      assert.ok(!io.err.includes("XYZZY") && !io.err.includes("X".repeat(65)));
      assert.equal(existsSync(path.join(cwd, "c.json")), false);
    }
  });

  test("--dry-run reports planned and writes nothing", async () => {
    const { cwd } = project();
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "c.json",
      "--dry-run",
      "--json",
    );
    assert.equal(exit, 0);
    assert.equal(reportOf(io).status, "planned");
    assert.equal(existsSync(path.join(cwd, "c.json")), false);
  });

  test("a symbolic link stays a link and its target is edited", async () => {
    const { cwd } = project();
    writeFileSync(path.join(cwd, "real.json"), "{}\n");
    symlinkSync(path.join(cwd, "real.json"), path.join(cwd, "link.json"));
    const { exit } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "link.json",
      "--json",
    );
    assert.equal(exit, 0);
    assert.ok(lstatSync(path.join(cwd, "link.json")).isSymbolicLink());
    assert.ok("capability-graph" in JSON.parse(read(path.join(cwd, "real.json"))).mcpServers);
  });

  test("the file's permissions are kept and no temporary file is left", async () => {
    const { cwd } = project();
    writeFileSync(path.join(cwd, "c.json"), "{}\n");
    chmodSync(path.join(cwd, "c.json"), 0o600);
    await install(cwd, undefined, "--client", "cursor", "--config-path", "c.json", "--json");
    assert.equal(statSync(path.join(cwd, "c.json")).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(cwd).sort(), ["c.json", "capability-graph.json"]);
  });

  test("Codex: a [mcp_servers.NAME] table is appended and the rest of config.toml is kept", async () => {
    const { cwd, config } = project();
    const text = '# codex\nmodel = "o4-mini"\n\n[profiles.fast]\nmodel = "o4-mini"\n';
    writeFileSync(path.join(cwd, "config.toml"), text);
    const { exit } = await install(
      cwd,
      undefined,
      "--client",
      "codex",
      "--config-path",
      "config.toml",
      "--env",
      "OPENAI_API_KEY",
      "--json",
    );
    assert.equal(exit, 0);
    const after = read(path.join(cwd, "config.toml"));
    assert.ok(after.startsWith(text));
    assert.deepEqual(JSON.parse(JSON.stringify(parseToml(after).mcp_servers)), {
      "capability-graph": { ...ownEntry(config), env_vars: ["OPENAI_API_KEY"] },
    });
    const again = await install(
      cwd,
      undefined,
      "--client",
      "codex",
      "--config-path",
      "config.toml",
      "--env",
      "OPENAI_API_KEY",
      "--json",
    );
    assert.equal(again.exit, 0);
    assert.equal(read(path.join(cwd, "config.toml")), after);
  });
});

describe("mcp-install: --env", () => {
  test("a forwarded variable is written by reference in the client's syntax, never its value", async () => {
    const { cwd } = project();
    const { exit } = await install(
      cwd,
      { MY_TOKEN: "value-SECRET-123" },
      "--client",
      "cursor",
      "--config-path",
      "c.json",
      "--env",
      "MY_TOKEN",
      "--json",
    );
    assert.equal(exit, 0);
    const text = read(path.join(cwd, "c.json"));
    assert.deepEqual(JSON.parse(text).mcpServers["capability-graph"].env, {
      MY_TOKEN: `\${env:MY_TOKEN}`,
    });
    assert.ok(!text.includes("SECRET"));
  });

  test("Claude Code refers to a variable by its own reference syntax", async () => {
    const { cwd } = project();
    await install(
      cwd,
      undefined,
      "--client",
      "claude-code",
      "--config-path",
      "c.json",
      "--env",
      "MY_TOKEN",
      "--json",
    );
    const entry = JSON.parse(read(path.join(cwd, "c.json"))).mcpServers["capability-graph"];
    assert.equal(entry.type, "stdio");
    assert.deepEqual(entry.env, { MY_TOKEN: `\${MY_TOKEN}` });
  });

  test("a name that is not a variable name is a usage error that does not repeat it: exit 2", async () => {
    const { cwd } = project();
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "c.json",
      "--env",
      "1BAD-XYZZY",
    );
    assert.equal(exit, 2);
    assert.equal(io.out, "");
    assert.ok(io.err.includes("must be an environment variable name"));
    assert.ok(!io.err.includes("XYZZY"));
    assert.equal(existsSync(path.join(cwd, "c.json")), false);
  });

  test("a client without variable references refuses --env: failed, exit 1, nothing written", async () => {
    const { cwd } = project();
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "claude-desktop",
      "--config-path",
      "c.json",
      "--env",
      "MY_TOKEN",
      "--json",
    );
    assert.equal(exit, 1);
    const report = reportOf(io);
    assert.equal(report.status, "failed");
    assert.deepEqual(
      report.checks.map(({ id, status }) => [id, status]),
      [
        ["graph-config", "ok"],
        ["env", "fail"],
      ],
    );
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
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "c.json",
      "--json",
    );
    assert.equal(exit, 0);
    assert.ok(
      reportOf(io).warnings.includes(
        "The executor reads its key from OPENAI_API_KEY, which is not forwarded to the server: add --env OPENAI_API_KEY",
      ),
    );
    const forwarded = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "d.json",
      "--env",
      "OPENAI_API_KEY",
      "--json",
    );
    assert.deepEqual(reportOf(forwarded.io).warnings, ["Restart Cursor to load the server"]);
  });
});

describe("mcp-install: conflicts and failures leave the file byte-identical", () => {
  test("a foreign entry of the same name is a conflict: exit 3", async () => {
    const { cwd } = project();
    mkdirSync(path.join(cwd, "client"));
    cpSync(
      path.join(FIXTURES, "maintenance", "client", "mcp.json"),
      path.join(cwd, "client", "mcp.json"),
    );
    const before = readFileSync(path.join(cwd, "client", "mcp.json"));
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "client/mcp.json",
      "--json",
    );
    assert.equal(exit, 3);
    const report = reportOf(io);
    assert.equal(report.status, "conflict");
    assert.deepEqual(report.checks.at(-1), {
      id: "server",
      status: "fail",
      message:
        "Cursor has another program under the server capability-graph in client/mcp.json: not overwritten (choose another --name)",
    });
    assert.deepEqual(readFileSync(path.join(cwd, "client", "mcp.json")), before);
  });

  test("--force over a foreign entry is still a conflict and keeps no backup", async () => {
    const { cwd } = project();
    mkdirSync(path.join(cwd, "client"));
    cpSync(
      path.join(FIXTURES, "maintenance", "client", "mcp.json"),
      path.join(cwd, "client", "mcp.json"),
    );
    const before = readFileSync(path.join(cwd, "client", "mcp.json"));
    const { exit } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "client/mcp.json",
      "--force",
      "--json",
    );
    assert.equal(exit, 3);
    assert.deepEqual(readFileSync(path.join(cwd, "client", "mcp.json")), before);
    assert.equal(existsSync(path.join(cwd, "client", "mcp.json.bak")), false);
  });

  test("an older entry of this implementation is a conflict without --force", async () => {
    const { cwd } = project();
    const older = { mcpServers: { "capability-graph": ownEntry("/old/capability-graph.json") } };
    writeFileSync(path.join(cwd, "c.json"), JSON.stringify(older));
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "c.json",
      "--json",
    );
    assert.equal(exit, 3);
    assert.ok(
      reportOf(io).checks.at(-1)?.message.includes("--force replaces it and keeps a backup"),
    );
    assert.equal(read(path.join(cwd, "c.json")), JSON.stringify(older));
  });

  test("--force replaces an older entry of this implementation, keeping FILE.bak, then FILE.bak.2", async () => {
    const { cwd, config } = project();
    const file = path.join(cwd, "c.json");
    const older = JSON.stringify({
      mcpServers: { "capability-graph": ownEntry("/old/capability-graph.json") },
    });
    writeFileSync(file, older);
    chmodSync(file, 0o640);
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "c.json",
      "--force",
      "--json",
    );
    assert.equal(exit, 0);
    assert.deepEqual(
      reportOf(io).checks.map(({ id, status }) => [id, status]),
      [
        ["graph-config", "ok"],
        ["client-config", "ok"],
        ["backup", "ok"],
        ["server", "ok"],
      ],
    );
    assert.equal(read(`${file}.bak`), older);
    assert.equal(statSync(`${file}.bak`).mode & 0o777, 0o640);
    assert.deepEqual(JSON.parse(read(file)).mcpServers["capability-graph"], ownEntry(config));

    const newer = JSON.stringify({
      mcpServers: { "capability-graph": ownEntry("/older/still.json") },
    });
    writeFileSync(file, newer);
    await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "c.json",
      "--force",
      "--json",
    );
    assert.equal(read(`${file}.bak`), older);
    assert.equal(read(`${file}.bak.2`), newer);
  });

  test("a client file that is not JSON is failed: exit 1, untouched", async () => {
    const { cwd } = project();
    cpSync(
      path.join(FIXTURES, "client-files", "client-broken.json"),
      path.join(cwd, "broken.json"),
    );
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "broken.json",
      "--json",
    );
    assert.equal(exit, 1);
    const report = reportOf(io);
    assert.equal(report.status, "failed");
    assert.deepEqual(report.checks.at(-1), {
      id: "client-config",
      status: "fail",
      message: "broken.json: not valid JSON: left untouched",
    });
    assert.equal(read(path.join(cwd, "broken.json")), "this is not JSON {\n");
  });

  test("comments in a client that does not accept them make the file invalid", async () => {
    const { cwd } = project();
    writeFileSync(path.join(cwd, "c.json"), "// no\n{}\n");
    const { exit } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "c.json",
      "--json",
    );
    assert.equal(exit, 1);
    assert.equal(read(path.join(cwd, "c.json")), "// no\n{}\n");
  });

  test("a container that is not an object is failed and untouched", async () => {
    const { cwd } = project();
    writeFileSync(path.join(cwd, "c.json"), '{"mcpServers": []}');
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "c.json",
      "--json",
    );
    assert.equal(exit, 1);
    assert.equal(
      reportOf(io).checks.at(-1)?.message,
      "c.json: its mcpServers is not an object: left untouched",
    );
    assert.equal(read(path.join(cwd, "c.json")), '{"mcpServers": []}');
  });

  test("a configuration that does not open is failed first and the client file is untouched", async () => {
    const cwd = freshFolder();
    writeFileSync(
      path.join(cwd, "capability-graph.json"),
      JSON.stringify({ providers: [{ path: "providers/missing.json" }] }),
    );
    writeFileSync(path.join(cwd, "c.json"), "not even JSON");
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "c.json",
      "--json",
    );
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
    assert.equal(read(path.join(cwd, "c.json")), "not even JSON");
  });

  test("a configuration file that cannot be read is a failed report with nothing on stderr", async () => {
    const cwd = freshFolder();
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "c.json",
      "--json",
    );
    assert.equal(exit, 1);
    assert.equal(reportOf(io).checks[0]?.id, "graph-config");
    assert.equal(existsSync(path.join(cwd, "c.json")), false);
  });

  test("a fifo in the place of the client file is failed at once, never read", async () => {
    const { cwd } = project();
    execFileSync("mkfifo", [path.join(cwd, "c.json")]);
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "c.json",
      "--json",
    );
    assert.equal(exit, 1);
    assert.equal(
      reportOf(io).checks.at(-1)?.message,
      "c.json: is not a regular file: left untouched",
    );
  });

  test("a folder in the place of the client file is failed", async () => {
    const { cwd } = project();
    mkdirSync(path.join(cwd, "c.json"));
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "cursor",
      "--config-path",
      "c.json",
      "--json",
    );
    assert.equal(exit, 1);
    assert.equal(
      reportOf(io).checks.at(-1)?.message,
      "c.json: is not a regular file: left untouched",
    );
  });

  test("a Codex file that is not TOML is failed and untouched", async () => {
    const { cwd } = project();
    writeFileSync(path.join(cwd, "config.toml"), "[unclosed\n");
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "codex",
      "--config-path",
      "config.toml",
      "--json",
    );
    assert.equal(exit, 1);
    assert.equal(
      reportOf(io).checks.at(-1)?.message,
      "config.toml: not valid TOML: left untouched",
    );
    assert.equal(read(path.join(cwd, "config.toml")), "[unclosed\n");
  });

  test("a Codex entry defined inline cannot be spliced: failed, untouched", async () => {
    const { cwd } = project();
    const text = `mcp_servers = { other = { command = "x" } }\n`;
    writeFileSync(path.join(cwd, "config.toml"), text);
    const { exit, io } = await install(
      cwd,
      undefined,
      "--client",
      "codex",
      "--config-path",
      "config.toml",
      "--json",
    );
    assert.equal(exit, 1, io.out);
    assert.equal(read(path.join(cwd, "config.toml")), text);
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
      const { exit, io } = await install(cwd, undefined, "--client", client, "--dry-run", "--json");
      assert.equal(exit, 0);
      assert.deepEqual(reportOf(io).checks[1], {
        id: "client-config",
        status: "ok",
        message: `${location} does not exist yet: it will be created`,
      });
    });
  }
});
