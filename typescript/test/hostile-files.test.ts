// Files that are not what they should be, through the public surfaces (the CLI as a subprocess,
// the MCP server over real stdio): a fifo, a device, a folder, a symbolic link or a huge sparse
// file where a regular file is expected, and client files nested deeper than any parser goes.
// Each gets its defined error or report at once; nothing waits on a fifo or reads without bound.
// Every subprocess runs under a time bound, so a regression fails instead of hanging the suite.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fakeCodex } from "./executors/fake_codex.js";
import { CLI, GUIDE_TEXT, graphFolder } from "./surface-fixtures.js";

/** A subprocess that has not ended by then is killed: the test then fails, it never hangs. */
const PROCESS_BOUND_MS = 20_000;

const folders: string[] = [];
after(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function freshFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), "cg-hostile-"));
  folders.push(folder);
  return folder;
}

function cli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const started = Date.now();
  const done = spawnSync(process.execPath, [CLI, ...args], {
    encoding: "utf8",
    input: "",
    cwd: options.cwd,
    env: options.env ?? { ...process.env, CAPABILITY_GRAPH_CONFIG: "" },
    timeout: PROCESS_BOUND_MS,
    killSignal: "SIGKILL",
  });
  assert.equal(
    done.signal,
    null,
    `the CLI ended by itself (killed after ${Date.now() - started} ms)`,
  );
  return done;
}

const OUTPUT_INVALID = {
  code: "CG_MODEL_OUTPUT_INVALID",
  phase: "match",
  message: "Model output is invalid",
  nextAction: "retry",
};

describe("a codex run that plants a fifo as its answer file", () => {
  test("the CLI's match is CG_MODEL_OUTPUT_INVALID at once and the temporary folder is removed", () => {
    const fake = fakeCodex({ exec: 'mkfifo "$answer"; exit 0' });
    const config = graphFolder({ executor: "codex" });
    const done = cli(["match", "--config", config, "validate the body"], {
      env: { ...process.env, PATH: fake.searchPath, CAPABILITY_GRAPH_CONFIG: "" },
    });
    assert.equal(done.status, 1);
    assert.equal(done.stdout, "");
    assert.deepEqual(JSON.parse(done.stderr), { ok: false, error: OUTPUT_INVALID });
    const work = fake.recorded("work.txt")?.trim() ?? "";
    assert.notEqual(work, "");
    assert.equal(existsSync(join(work, "..")), false);
  });

  test("the MCP server answers read_document after more such matches than Node has I/O threads", async () => {
    const fake = fakeCodex({ exec: 'mkfifo "$answer"; exit 0' });
    const client = new Client({ name: "hostile-files-test", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, "mcp", "--config", graphFolder({ executor: "codex" })],
        env: { ...process.env, PATH: fake.searchPath, CAPABILITY_GRAPH_CONFIG: "" } as Record<
          string,
          string
        >,
        stderr: "pipe",
      }),
    );
    try {
      const bound = { timeout: PROCESS_BOUND_MS };
      const matches = await Promise.all(
        Array.from({ length: 6 }, () =>
          client.callTool(
            { name: "match_capabilities", arguments: { request: "validate the body" } },
            undefined,
            bound,
          ),
        ),
      );
      for (const result of matches) {
        assert.equal(result.isError, true);
        const content = result.content as Array<{ text: string }>;
        assert.deepEqual(JSON.parse(content[0]?.text ?? ""), OUTPUT_INVALID);
      }
      const read = await client.callTool(
        {
          name: "read_document",
          arguments: { capabilityId: "acme::route.validation", documentId: "guide" },
        },
        undefined,
        bound,
      );
      assert.equal(read.isError, undefined);
      assert.equal((read.structuredContent as { text: string }).text, GUIDE_TEXT);
    } finally {
      await client.close();
    }
  });
});

describe("client files nested deeper than the parsers go ([CG-MAINT-8], [CG-MAINT-20])", () => {
  const deep = (levels: number): string =>
    `{"other": ${"[".repeat(levels)}${"]".repeat(levels)}}\n`;

  for (const [command, client] of [
    ["mcp-install", "cursor"],
    ["mcp-install", "vscode"],
    ["mcp-uninstall", "cursor"],
    ["mcp-uninstall", "zed"],
  ] as const) {
    test(`${command} --client ${client} on a file 5,000 levels deep reports failed, exit 1, the file untouched`, () => {
      const cwd = freshFolder();
      const file = join(cwd, "client.json");
      const text = deep(5000);
      writeFileSync(file, text);
      const config = command === "mcp-install" ? ["--config", graphFolder()] : [];
      const done = cli([command, ...config, "--client", client, "--config-path", file, "--json"], {
        cwd,
      });
      assert.equal(done.stderr, "");
      assert.equal(done.status, 1);
      const report = JSON.parse(done.stdout) as { status: string; checks: unknown[] };
      assert.equal(report.status, "failed");
      assert.deepEqual(report.checks.at(-1), {
        id: "client-config",
        status: "fail",
        message: "client.json: nested more than 200 levels deep: left untouched",
      });
      assert.equal(readFileSync(file, "utf8"), text);
    });
  }

  test("a file 200 levels deep is still edited", () => {
    const cwd = freshFolder();
    const file = join(cwd, "client.json");
    writeFileSync(file, deep(199));
    const done = cli(
      ["mcp-install", "--config", graphFolder(), "--client", "cursor", "--config-path", file],
      { cwd },
    );
    assert.equal(done.status, 0, done.stdout);
    const written = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    assert.deepEqual(Object.keys(written), ["other", "mcpServers"]);
  });
});
