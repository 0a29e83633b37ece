// A property of the client-file splice ([CG-MAINT-12]): for any JSON object a Cursor file may
// hold, in any of the usual layouts, mcp-install succeeds and the file then parses to exactly
// the old document plus the entry, and mcp-uninstall brings it back to the old document (with an
// empty server container where there was none). Cases come from a seeded generator, so a failure
// names its seed and replays.
import assert from "node:assert/strict";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { parse as parseJsonc } from "jsonc-parser";
import { CLI_MODULE, runMcpInstall, runMcpUninstall } from "../../src/surfaces/cli/mcp-install.js";
import { scaled } from "../scale.js";
import {
  generator,
  layout,
  randomDocument,
  randomObject,
  randomString,
} from "./client-file-generators.js";
import { captureIo, freshFolder, REPOSITORY } from "./maintenance-helpers.js";

const CASES = scaled(60);

test(`mcp-install then mcp-uninstall on ${CASES} generated Cursor files keeps the rest of the document exactly`, async () => {
  const cwd = freshFolder();
  cpSync(
    path.join(REPOSITORY, "conformance", "fixtures", "maintenance", "capability-graph.json"),
    path.join(cwd, "capability-graph.json"),
  );
  const config = path.join(cwd, "capability-graph.json");
  const entry = { command: process.execPath, args: [CLI_MODULE, "mcp", "--config", config] };
  const file = path.join(cwd, "c.json");
  for (let seed = 1; seed <= CASES; seed += 1) {
    const random = generator(seed);
    const document = randomDocument(random);
    writeFileSync(file, layout(document, random));

    const installIo = captureIo(cwd);
    const installed = await runMcpInstall(
      ["--client", "cursor", "--config-path", "c.json", "--json"],
      installIo,
    );
    assert.equal(installed, 0, `seed ${seed}: ${installIo.out}`);
    const servers = (document.mcpServers ?? {}) as Record<string, unknown>;
    assert.deepEqual(
      JSON.parse(readFileSync(file, "utf8")),
      { ...document, mcpServers: { ...servers, "capability-graph": entry } },
      `seed ${seed}`,
    );

    const uninstallIo = captureIo(cwd);
    const removed = await runMcpUninstall(
      ["--client", "cursor", "--config-path", "c.json", "--json"],
      uninstallIo,
    );
    assert.equal(removed, 0, `seed ${seed}: ${uninstallIo.out}`);
    assert.deepEqual(
      JSON.parse(readFileSync(file, "utf8")),
      { ...document, mcpServers: servers },
      `seed ${seed}`,
    );
  }
});

/** An indented layout with line comments after some lines and block comments between others. */
function commentedLayout(document: unknown, random: () => number): string {
  const lines = JSON.stringify(document, null, 2).split("\n");
  const out: string[] = [];
  for (const line of lines) {
    if (random() < 0.2) out.push("/* note */");
    out.push(random() < 0.3 ? `${line} // note` : line);
  }
  return `${out.join("\n")}\n`;
}

function commentCount(text: string): number {
  return (text.match(/\/\/ note|\/\* note \*\//g) ?? []).length;
}

test(`mcp-install then mcp-uninstall on ${CASES} generated VS Code files keeps the document and every comment`, async () => {
  const cwd = freshFolder();
  cpSync(
    path.join(REPOSITORY, "conformance", "fixtures", "maintenance", "capability-graph.json"),
    path.join(cwd, "capability-graph.json"),
  );
  const config = path.join(cwd, "capability-graph.json");
  const entry = {
    type: "stdio",
    command: process.execPath,
    args: [CLI_MODULE, "mcp", "--config", config],
  };
  const file = path.join(cwd, "mcp.json");
  for (let seed = 1; seed <= CASES; seed += 1) {
    const random = generator(seed * 7919);
    const document = randomObject(random, 0);
    if (random() < 0.6)
      document.servers = { other: { type: "stdio", command: randomString(random) } };
    const text = commentedLayout(document, random);
    writeFileSync(file, text);
    const comments = commentCount(text);
    const servers = (document.servers ?? {}) as Record<string, unknown>;

    const installIo = captureIo(cwd);
    assert.equal(
      await runMcpInstall(["--client", "vscode", "--config-path", "mcp.json", "--json"], installIo),
      0,
      `seed ${seed}: ${installIo.out}`,
    );
    const installed = readFileSync(file, "utf8");
    assert.deepEqual(
      parseJsonc(installed),
      { ...document, servers: { ...servers, "capability-graph": entry } },
      `seed ${seed}`,
    );
    assert.equal(commentCount(installed), comments, `seed ${seed}: comments kept`);

    const uninstallIo = captureIo(cwd);
    assert.equal(
      await runMcpUninstall(
        ["--client", "vscode", "--config-path", "mcp.json", "--json"],
        uninstallIo,
      ),
      0,
      `seed ${seed}: ${uninstallIo.out}`,
    );
    const removed = readFileSync(file, "utf8");
    assert.deepEqual(parseJsonc(removed), { ...document, servers }, `seed ${seed}`);
    assert.equal(commentCount(removed), comments, `seed ${seed}: comments kept`);
  }
});
