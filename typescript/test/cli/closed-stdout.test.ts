// A stdout that is closed when the CLI starts ([CG-CLI-7]): Node reopens it on the null device
// before the program runs, so the CLI has to recognise it (Linux, through /proc) to exit 74
// instead of losing its output with exit 0. The shell closes the descriptor: `>&-`.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { CLI, graphFolder } from "../surface-fixtures.js";

const linux = process.platform === "linux";

/** Run the CLI under sh with `redirect` applied to it; returns status, stdout and stderr. */
function shell(redirect: string, ...args: string[]) {
  return spawnSync("sh", ["-c", `exec "$0" "$@" ${redirect}`, process.execPath, CLI, ...args], {
    encoding: "utf8",
    input: "",
  });
}

test("a command whose stdout is closed exits 74 with one line on stderr", { skip: !linux }, () => {
  for (const args of [
    ["explain", "CG_GRAPH_CLOSED"],
    ["--version"],
    ["list", "--config", graphFolder()],
  ]) {
    const done = shell(">&-", ...args);
    assert.equal(done.status, 74, args.join(" "));
    assert.equal(done.stderr, "capability-graph: cannot write to stdout\n");
  }
});

test("stdout redirected to /dev/null is an ordinary stdout: exit 0", { skip: !linux }, () => {
  const done = shell(">/dev/null", "explain", "CG_GRAPH_CLOSED");
  assert.equal(done.status, 0);
  assert.equal(done.stderr, "");
});

test("a failed graph command with stdout closed is its own failure, exit 1", {
  skip: !linux,
}, () => {
  const done = shell(">&-", "list", "--config", "/nonexistent/cg.json");
  assert.equal(done.status, 1);
  assert.match(done.stderr, /^\{"ok":false,"error":\{"code":"CG_CONFIG_INVALID"/);
});
