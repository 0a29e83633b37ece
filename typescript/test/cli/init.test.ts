// `init` on real folders (spec section 12.3): the scaffold, --dry-run, --config, the conflict
// rule that never overwrites a file, the report and its exit status.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { CapabilityGraph } from "../../src/core/graph.js";
import { runInit } from "../../src/surfaces/cli/init.js";
import { captureIo, freshFolder, read, reportOf } from "./maintenance-helpers.js";

async function init(cwd: string, ...args: string[]) {
  const io = captureIo(cwd);
  const exit = await runInit(args, io);
  return { exit, io };
}

describe("init", () => {
  test("scaffolds a configuration, a provider and a document in DIR: ok, exit 0", async () => {
    const cwd = freshFolder();
    const { exit, io } = await init(cwd, "project", "--json");
    assert.equal(exit, 0);
    const report = reportOf(io);
    assert.equal(report.status, "ok");
    assert.deepEqual(
      report.checks.map(({ id, status }) => [id, status]),
      [
        ["configuration", "ok"],
        ["provider", "ok"],
        ["document", "ok"],
      ],
    );
    const configuration = JSON.parse(read(path.join(cwd, "project", "capability-graph.json")));
    assert.deepEqual(configuration, {
      providers: [{ path: "providers/example.json" }],
      model: { executor: "lexical" },
    });
    const provider = JSON.parse(read(path.join(cwd, "project", "providers", "example.json")));
    assert.equal(provider.providerId, "example");
    const documentPath = provider.capabilities[0].documents[0].path;
    assert.ok(existsSync(path.join(cwd, "project", "providers", documentPath)));
  });

  test("the scaffold opens as a graph: a lexical match finds it and its document reads", async () => {
    const cwd = freshFolder();
    await init(cwd, "--config", "graph/my.json", "--json");
    const graph = await CapabilityGraph.open(path.join(cwd, "graph", "my.json"));
    try {
      const match = await graph.call("match_capabilities", { request: "find items by keyword" });
      assert.equal(match.status, "matched");
      assert.equal((match.candidates as Array<{ id: string }>)[0]?.id, "example::search");
      const document = await graph.call("read_document", {
        capabilityId: "example::quick-start",
        documentId: "guide",
      });
      assert.equal(
        document.text,
        read(path.join(cwd, "graph", "providers", "docs", "quick-start.md")),
      );
    } finally {
      await graph.close();
    }
  });

  test("leaves no temporary file behind", async () => {
    const cwd = freshFolder();
    await init(cwd, ".", "--json");
    assert.deepEqual(readdirSync(cwd).sort(), ["capability-graph.json", "providers"]);
    assert.deepEqual(readdirSync(path.join(cwd, "providers")).sort(), ["docs", "example.json"]);
  });

  test("defaults DIR to the working folder", async () => {
    const cwd = freshFolder();
    const { exit } = await init(cwd, "--json");
    assert.equal(exit, 0);
    assert.ok(existsSync(path.join(cwd, "capability-graph.json")));
  });

  test("--dry-run writes nothing and reports planned with the three files", async () => {
    const cwd = freshFolder();
    const { exit, io } = await init(cwd, "project", "--dry-run", "--json");
    assert.equal(exit, 0);
    const report = reportOf(io);
    assert.equal(report.status, "planned");
    assert.equal(report.checks.length, 3);
    assert.deepEqual(report.warnings, []);
    assert.equal(existsSync(path.join(cwd, "project")), false);
  });

  test("a second init finds every file with the same content: ok, nothing rewritten", async () => {
    const cwd = freshFolder();
    await init(cwd, ".", "--json");
    const before = read(path.join(cwd, "capability-graph.json"));
    const { exit, io } = await init(cwd, ".", "--json");
    assert.equal(exit, 0);
    const report = reportOf(io);
    assert.equal(report.status, "ok");
    assert.ok(
      report.checks.every((item) => item.message.endsWith("already exists with this content")),
    );
    assert.equal(read(path.join(cwd, "capability-graph.json")), before);
  });

  test("a configuration that exists with other content is a conflict: exit 3, nothing written", async () => {
    const cwd = freshFolder();
    writeFileSync(path.join(cwd, "capability-graph.json"), '{"providers": []}\n');
    const { exit, io } = await init(cwd, ".", "--json");
    assert.equal(exit, 3);
    const report = reportOf(io);
    assert.equal(report.status, "conflict");
    assert.deepEqual(report.checks[0], {
      id: "configuration",
      status: "fail",
      message: "capability-graph.json already exists and differs: not overwritten",
    });
    assert.equal(read(path.join(cwd, "capability-graph.json")), '{"providers": []}\n');
    assert.equal(existsSync(path.join(cwd, "providers")), false);
  });

  test("a conflict under --dry-run is still a conflict", async () => {
    const cwd = freshFolder();
    mkdirSync(path.join(cwd, "providers"));
    writeFileSync(path.join(cwd, "providers", "example.json"), "{}");
    const { exit, io } = await init(cwd, ".", "--dry-run", "--json");
    assert.equal(exit, 3);
    assert.equal(reportOf(io).status, "conflict");
  });

  test("--dry-run with every file already in place is ok: nothing would be written", async () => {
    // [CG-MAINT-19]
    const cwd = freshFolder();
    await init(cwd, ".", "--json");
    const { exit, io } = await init(cwd, ".", "--dry-run", "--json");
    assert.equal(exit, 0);
    assert.equal(reportOf(io).status, "ok");
  });

  test("a folder in the place of a planned file is a conflict", async () => {
    const cwd = freshFolder();
    mkdirSync(path.join(cwd, "capability-graph.json"));
    const { exit, io } = await init(cwd, ".", "--json");
    assert.equal(exit, 3);
    assert.equal(reportOf(io).checks[0]?.status, "fail");
  });

  test("a symbolic link to a file with the scaffold's content counts as the same file", async () => {
    const source = freshFolder();
    await init(source, ".", "--json");
    const cwd = freshFolder();
    await init(cwd, ".", "--json");
    const link = path.join(cwd, "capability-graph.json");
    rmSync(link);
    symlinkSync(path.join(source, "capability-graph.json"), link);
    const { exit } = await init(cwd, ".", "--json");
    assert.equal(exit, 0);
  });

  test("--config FILE writes the configuration at FILE and the provider below FILE's folder", async () => {
    const cwd = freshFolder();
    const { exit } = await init(cwd, "--config", "graph/my.json", "--json");
    assert.equal(exit, 0);
    assert.deepEqual(JSON.parse(read(path.join(cwd, "graph", "my.json"))).providers, [
      { path: "providers/example.json" },
    ]);
    assert.ok(existsSync(path.join(cwd, "graph", "providers", "example.json")));
  });

  test("--config FILE with another DIR names the provider relative to FILE", async () => {
    const cwd = freshFolder();
    const { exit } = await init(cwd, "elsewhere", "--config", "graph/my.json", "--json");
    assert.equal(exit, 0);
    assert.deepEqual(JSON.parse(read(path.join(cwd, "graph", "my.json"))).providers, [
      { path: "../elsewhere/providers/example.json" },
    ]);
    assert.ok(existsSync(path.join(cwd, "elsewhere", "providers", "example.json")));
  });

  test("without --json the report is text on stdout", async () => {
    const cwd = freshFolder();
    const { exit, io } = await init(cwd, ".");
    assert.equal(exit, 0);
    assert.equal(io.err, "");
    assert.deepEqual(io.out.split("\n"), [
      "capability-graph init: ok",
      "  [ok  ] configuration: Created capability-graph.json",
      "  [ok  ] provider: Created providers/example.json",
      "  [ok  ] document: Created providers/docs/quick-start.md",
      "",
    ]);
  });

  test("an unknown option is a usage error that does not repeat it: exit 2, nothing on stdout", async () => {
    const cwd = freshFolder();
    const { exit, io } = await init(cwd, "--frobnicate-XYZZY");
    assert.equal(exit, 2);
    assert.equal(io.out, "");
    assert.ok(io.err.startsWith("usage: capability-graph init"));
    assert.ok(!io.err.includes("XYZZY"));
    assert.deepEqual(readdirSync(cwd), []);
  });

  test("a second positional argument is a usage error", async () => {
    const cwd = freshFolder();
    const { exit, io } = await init(cwd, "one", "two-XYZZY");
    assert.equal(exit, 2);
    assert.ok(!io.err.includes("XYZZY"));
  });

  test("--help prints the help on stdout: exit 0", async () => {
    const cwd = freshFolder();
    const { exit, io } = await init(cwd, "--help");
    assert.equal(exit, 0);
    assert.ok(
      io.out.startsWith(
        "usage: capability-graph init [-h] [--config FILE] [--json] [--dry-run] [DIR]\n",
      ),
    );
    assert.equal(io.err, "");
  });

  test("a file name with a line feed is shown on one line in the report", async () => {
    const cwd = freshFolder();
    const { exit, io } = await init(cwd, "odd\nname", "--json");
    assert.equal(exit, 0);
    assert.ok(reportOf(io).checks[0]?.message.includes("odd\ufffdname"));
  });
});
