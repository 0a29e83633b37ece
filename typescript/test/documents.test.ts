import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  linkSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { readDocumentFile } from "../src/core/documents.js";
import { GraphError } from "../src/core/errors.js";

// Real files, folders, symbolic links, hard links and fifos under a fresh folder:
//   <top>/outside.md          a file outside the root
//   <top>/root/guide.md       the document
//   <top>/root/sub/           a folder
let top: string;
let root: string;

beforeEach(() => {
  top = realpathSync(mkdtempSync(join(tmpdir(), "cg-documents-")));
  root = join(top, "root");
  mkdirSync(join(root, "sub"), { recursive: true });
  writeFileSync(join(top, "outside.md"), "secret outside the root");
  writeFileSync(join(root, "guide.md"), "# Guide\r\n");
});

afterEach(() => rmSync(top, { recursive: true, force: true }));

async function codeOf(path: string, maxBytes = 1024): Promise<string> {
  try {
    await readDocumentFile(root, path, maxBytes);
    return "read";
  } catch (error) {
    assert.ok(error instanceof GraphError);
    return error.code;
  }
}

test("a regular file under the root is read with its size, digest and exact text", async () => {
  const body = await readDocumentFile(root, "guide.md", 1024);
  assert.deepEqual(body, {
    bytes: 9,
    sha256: createHash("sha256").update("# Guide\r\n").digest("hex"),
    text: "# Guide\r\n",
  });
});

test("a link whose target steps out of the root is refused", async () => {
  symlinkSync("../outside.md", join(root, "escape.md"));
  assert.equal(await codeOf("escape.md"), "CG_DOCUMENT_ACCESS_DENIED");
});

test("an absolute link target is refused even when it points inside the root", async () => {
  symlinkSync(join(root, "guide.md"), join(root, "absolute.md"));
  assert.equal(await codeOf("absolute.md"), "CG_DOCUMENT_ACCESS_DENIED");
});

test("a link that leaves the root and comes back is refused", async () => {
  symlinkSync("../root/guide.md", join(root, "roundtrip.md"));
  assert.equal(await codeOf("roundtrip.md"), "CG_DOCUMENT_ACCESS_DENIED");
});

test("links inside the root are followed, as files and as folders", async () => {
  writeFileSync(join(root, "sub", "deep.md"), "deep");
  symlinkSync("guide.md", join(root, "latest.md"));
  symlinkSync("sub", join(root, "current"));
  symlinkSync("../guide.md", join(root, "sub", "up.md"));
  assert.equal(await codeOf("latest.md"), "read");
  assert.equal(await codeOf("current/deep.md"), "read");
  assert.equal(await codeOf("sub/up.md"), "read");
});

test("more than 40 links in one read is a loop", async () => {
  symlinkSync("loop-b", join(root, "loop-a"));
  symlinkSync("loop-a", join(root, "loop-b"));
  assert.equal(await codeOf("loop-a"), "CG_DOCUMENT_ACCESS_DENIED");
});

test("a fifo is refused without being opened, so the read never blocks", async () => {
  assert.equal(spawnSync("mkfifo", [join(root, "pipe.md")]).status, 0);
  assert.equal(await codeOf("pipe.md"), "CG_DOCUMENT_ACCESS_DENIED");
});

test("a folder as the last component is refused", async () => {
  assert.equal(await codeOf("sub"), "CG_DOCUMENT_ACCESS_DENIED");
});

test("a missing entry and a file used as a folder are not found", async () => {
  assert.equal(await codeOf("absent.md"), "CG_DOCUMENT_NOT_FOUND");
  assert.equal(await codeOf("guide.md/inner.md"), "CG_DOCUMENT_NOT_FOUND");
  assert.equal(await codeOf(`${"x".repeat(300)}.md`), "CG_DOCUMENT_NOT_FOUND");
});

test("a hard link is read like the regular file it is", async () => {
  linkSync(join(root, "guide.md"), join(root, "linked.md"));
  assert.equal(await codeOf("linked.md"), "read");
});

test("the size is judged before reading: at the limit it is read, one byte more is too large", async () => {
  assert.equal(await codeOf("guide.md", 9), "read");
  assert.equal(await codeOf("guide.md", 8), "CG_DOCUMENT_TOO_LARGE");
});

test("invalid UTF-8 is unreadable", async () => {
  writeFileSync(join(root, "binary.md"), Buffer.from([0x66, 0xff, 0x66]));
  assert.equal(await codeOf("binary.md"), "CG_DOCUMENT_UNREADABLE");
});

test("a root replaced by a symbolic link is not followed", async () => {
  renameSync(root, join(top, "moved"));
  symlinkSync(join(top, "moved"), root);
  assert.equal(await codeOf("guide.md"), "CG_DOCUMENT_ACCESS_DENIED");
});

test("a removed root is not found", async () => {
  rmSync(root, { recursive: true });
  assert.equal(await codeOf("guide.md"), "CG_DOCUMENT_NOT_FOUND");
});

test("a document error never names the root, the path or a link target", async () => {
  symlinkSync("../outside.md", join(root, "escape.md"));
  try {
    await readDocumentFile(root, "escape.md", 1024);
    assert.fail("read outside the root");
  } catch (error) {
    assert.ok(error instanceof GraphError);
    const text = JSON.stringify(error.toJSON());
    for (const forbidden of [top, "escape.md", "outside"]) assert.ok(!text.includes(forbidden));
    assert.deepEqual(error.toJSON(), {
      code: "CG_DOCUMENT_ACCESS_DENIED",
      phase: "document",
      message: "Document path is not allowed",
      nextAction: "check_config",
    });
  }
});
