// Files that are not what they should be, through the public surfaces (the CLI as a subprocess,
// the MCP server over real stdio): a fifo, a device, a folder, a symbolic link or a huge sparse
// file where a regular file is expected, and client files nested deeper than any parser goes.
// Each gets its defined error or report at once; nothing waits on a fifo or reads without bound.
// Every subprocess runs under a time bound, so a regression fails instead of hanging the suite.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CapabilityGraph } from "../src/index.js";
import { fakeCodex } from "./executors/fake-codex.js";
import { CLI, GUIDE_TEXT, graphFolder, PROVIDER } from "./surface-fixtures.js";

/** A subprocess that has not ended by then is killed: the test then fails, it never hangs. */
const PROCESS_BOUND_MS = 20_000;

const folders: string[] = [];
after(() => {
  // rm(1), not rmSync: some trees are deeper than PATH_MAX.
  if (folders.length > 0) spawnSync("rm", ["-rf", "--", ...folders]);
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

describe("links inside a document root are followed ([CG-DOC-5], [CG-DOC-9])", () => {
  /** A graph whose one document `acme::route.validation/guide` is `path` under `root`. */
  async function readGuide(root: string, path: string): Promise<unknown> {
    const graph = await CapabilityGraph.open({
      providers: [
        {
          definition: {
            ...PROVIDER,
            capabilities: [
              { ...PROVIDER.capabilities[0], documents: [{ id: "guide", title: "Guide", path }] },
            ],
          },
          documentRoot: root,
        },
      ],
      documents: { bodies: ["acme"] },
    });
    try {
      const result = await graph.readDocument({
        capabilityId: "acme::route.validation",
        documentId: "guide",
      });
      return (result as { text?: unknown }).text;
    } catch (error) {
      return (error as { code?: unknown }).code;
    } finally {
      await graph.close();
    }
  }

  test("a link whose target name is not UTF-8 is followed to its file", async () => {
    const root = freshFolder();
    const name = Buffer.from([0x67, 0xff, 0xfe, 0x2e, 0x6d, 0x64]); // "g\xff\xfe.md"
    writeFileSync(Buffer.concat([Buffer.from(`${root}/`), name]), GUIDE_TEXT);
    symlinkSync(name, join(root, "guide.md"));
    assert.equal(await readGuide(root, "guide.md"), GUIDE_TEXT);
  });

  test("a link through a folder whose name is not UTF-8 is followed", async () => {
    const root = freshFolder();
    const folder = Buffer.concat([Buffer.from(`${root}/`), Buffer.from([0xc3, 0x28])]);
    mkdirSync(folder);
    writeFileSync(Buffer.concat([folder, Buffer.from("/guide.md")]), GUIDE_TEXT);
    symlinkSync(Buffer.from([0xc3, 0x28]), join(root, "current"));
    assert.equal(await readGuide(root, "current/guide.md"), GUIDE_TEXT);
  });

  test("a chain of links whose expansion exceeds 4,096 bytes is followed", async () => {
    const root = freshFolder();
    // Two chains of 15 folders with 200-byte names (3,015 bytes each): `deep` leads down the
    // first, `next` (at its bottom) down the second; the file's real path is over 6,000 bytes.
    const chain = (letter: string) =>
      Array.from({ length: 15 }, (_, index) => `${letter}${index}`.padEnd(200, letter)).join("/");
    const built = spawnSync(
      "sh",
      [
        "-c",
        // One folder at a time: the shell's own path for the folders passes PATH_MAX.
        'set -e; cd -P "$1"; mkdir -p "$2"; ln -s "$2" deep; for d in $(echo "$2" | tr / " "); do cd -P "$d"; done; mkdir -p "$3"; ln -s "$3" next; for d in $(echo "$3" | tr / " "); do cd -P "$d"; done; printf "%s" "$4" > guide.md; ln -s "$5" out.md',
        "sh",
        root,
        chain("a"),
        chain("b"),
        GUIDE_TEXT,
        "../".repeat(40),
      ],
      { encoding: "utf8" },
    );
    assert.equal(built.status, 0, built.stderr);
    assert.equal(await readGuide(root, "deep/next/guide.md"), GUIDE_TEXT);
    // Its length is no escape hatch: a link at that depth leaving the root is still refused.
    assert.equal(await readGuide(root, "deep/next/out.md"), "CG_DOCUMENT_ACCESS_DENIED");
  });
});

describe("every path argument given a fifo, a device, a folder or a huge sparse file", () => {
  /** Where a regular file is expected: the kinds of entry planted there, made in `folder`. */
  const kinds: Array<[string, (file: string) => void]> = [
    ["a fifo", (file) => assert.equal(spawnSync("mkfifo", [file]).status, 0)],
    ["a folder", (file) => mkdirSync(file)],
    [
      "a sparse file of 1 TiB",
      (file) => assert.equal(spawnSync("truncate", ["-s", "1T", file]).status, 0),
    ],
  ];
  if (process.getuid?.() === 0) {
    kinds.push([
      "a character device (/dev/zero's numbers)",
      (file) => {
        assert.equal(spawnSync("mknod", [file, "c", "1", "5"]).status, 0);
      },
    ]);
  }

  const UNREADABLE_CONFIG = {
    ok: false,
    error: {
      code: "CG_CONFIG_INVALID",
      phase: "config",
      message: "Cannot read a valid bounded JSON configuration file",
      nextAction: "check_config",
    },
  };

  for (const [kind, plant] of kinds) {
    test(`init --config naming ${kind} is a conflict, nothing read or written`, () => {
      const cwd = freshFolder();
      plant(join(cwd, "entry"));
      const done = cli(["init", "--config", "entry", "--json"], { cwd });
      assert.equal(done.status, 3, done.stdout);
      const report = JSON.parse(done.stdout) as { status: string; checks: unknown[] };
      assert.equal(report.status, "conflict");
      assert.deepEqual(report.checks[0], {
        id: "configuration",
        status: "fail",
        message: "entry already exists and differs: not overwritten",
      });
    });

    for (const command of ["mcp-install", "mcp-uninstall"]) {
      test(`${command} --config-path naming ${kind} is a failed client-config check`, () => {
        const cwd = freshFolder();
        plant(join(cwd, "entry"));
        const config = command === "mcp-install" ? ["--config", graphFolder()] : [];
        const done = cli(
          [command, ...config, "--client", "cursor", "--config-path", "entry", "--json"],
          {
            cwd,
          },
        );
        assert.equal(done.status, 1, done.stdout);
        const report = JSON.parse(done.stdout) as { status: string; checks: unknown[] };
        assert.equal(report.status, "failed");
        assert.deepEqual(report.checks.at(-1), {
          id: "client-config",
          status: "fail",
          message: kind.startsWith("a sparse")
            ? "entry: is larger than 16 MiB: left untouched"
            : "entry: is not a regular file: left untouched",
        });
      });
    }

    test(`--config naming ${kind} is CG_CONFIG_INVALID for a graph command`, () => {
      const cwd = freshFolder();
      plant(join(cwd, "entry"));
      const done = cli(["list", "--config", "entry"], { cwd });
      assert.equal(done.status, 1);
      assert.deepEqual(JSON.parse(done.stderr), UNREADABLE_CONFIG);
    });

    test(`call --arguments-file naming ${kind} is a usage error`, () => {
      const cwd = freshFolder();
      plant(join(cwd, "entry"));
      const done = cli(
        ["call", "list_capabilities", "--config", graphFolder(), "--arguments-file", "entry"],
        {
          cwd,
        },
      );
      if (kind.startsWith("a sparse")) {
        // A regular file: judged by its size, read no further than maxInputBytes + 1.
        assert.equal(done.status, 1);
        assert.equal(
          (JSON.parse(done.stderr) as { error: { code: string } }).error.code,
          "CG_INPUT_TOO_LARGE",
        );
      } else {
        assert.equal(done.status, 2);
        assert.match(done.stderr, /--arguments-file: not a readable regular file/);
      }
    });

    test(`a provider path naming ${kind} is CG_CONFIG_INVALID`, () => {
      const cwd = freshFolder();
      plant(join(cwd, "entry"));
      writeFileSync(join(cwd, "graph.json"), JSON.stringify({ providers: [{ path: "entry" }] }));
      const done = cli(["list", "--config", "graph.json"], { cwd });
      assert.equal(done.status, 1);
      assert.equal(
        (JSON.parse(done.stderr) as { error: { code: string } }).error.code,
        kind.startsWith("a sparse") ? "CG_DEFINITION_INVALID" : "CG_CONFIG_INVALID",
      );
    });

    test(`a document naming ${kind} is refused at once`, () => {
      const config = graphFolder();
      const guide = join(config, "..", "providers", "docs", "guide.md");
      rmSync(guide);
      plant(guide);
      const done = cli(["read", "acme::route.validation", "guide", "--config", config]);
      assert.equal(done.status, 1);
      assert.equal(
        (JSON.parse(done.stderr) as { error: { code: string } }).error.code,
        kind.startsWith("a sparse") ? "CG_DOCUMENT_TOO_LARGE" : "CG_DOCUMENT_ACCESS_DENIED",
      );
    });
  }
});
