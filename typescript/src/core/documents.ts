// Reading a `path` document under its provider's document root by the containment rule of
// section 8.2, with what Node offers (no openat): the path is resolved component by component
// with lstat (never following an entry), symbolic links are expanded by this procedure itself,
// and the file is opened with O_NOFOLLOW | O_NONBLOCK. On Linux every directory of the walk,
// the root first, is held open and its entries are reached through its descriptor
// (`/proc/self/fd/N/name`, what openat does), so a folder swapped for a link during the walk
// cannot redirect it out of the root. Elsewhere ([CG-DOC-15]) the identity of the opened file and
// of every directory on the way is compared after the open, so an entry swapped during the walk
// is detected instead of followed. Paths are bytes (names and link targets need not be UTF-8).
import { createHash } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { type FileHandle, lstat, open, readlink } from "node:fs/promises";
import { type GraphError, graphError } from "./errors.js";

/** More symbolic links than this in one read is a loop ([CG-DOC-5]). */
const MAX_LINKS = 40;

export interface DocumentBody {
  readonly bytes: number;
  readonly sha256: string;
  readonly text: string;
}

const denied = () => graphError("CG_DOCUMENT_ACCESS_DENIED", "document");
const missing = () => graphError("CG_DOCUMENT_NOT_FOUND", "document");
const unreadable = () => graphError("CG_DOCUMENT_UNREADABLE", "document");
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

class Refusal {
  constructor(readonly error: GraphError) {}
}

/** A directory on the walk's stack: how to reach it, and what it was when examined. */
interface Directory {
  /** A path that names it: its full path, or `/proc/self/fd/N` once pinned. */
  readonly access: Buffer;
  readonly status: Stats;
  /** Pinned: held open, so that its path no longer matters (see CAN_PIN). */
  readonly handle?: FileHandle;
}

interface Located {
  /** A path naming the regular file, every component of it examined without following. */
  readonly path: Buffer;
  readonly status: Stats;
  /** The directories walked through, with their identity when they were examined. */
  readonly directories: readonly Directory[];
}

const SLASH = 0x2f;

/**
 * Paths are handled as bytes, so a name or a link target that is not UTF-8 is looked up as it
 * is ([CG-DOC-5], [CG-DOC-9]). On Linux every directory of the walk is held open while it is on
 * the stack and reached as `/proc/self/fd/N`: a name is looked up in the very directory that was
 * examined, whatever happens to the path that led to it ([CG-DOC-3]), and every path handed to
 * the system stays far below PATH_MAX (4,096 bytes), however deep the links lead inside the
 * root ([CG-DOC-5]).
 */
const CAN_PIN = process.platform === "linux";

/** Read a declared document path below `root` (a real absolute path fixed at open). */
export async function readDocumentFile(
  root: string,
  declaredPath: string,
  maxBytes: number,
): Promise<DocumentBody> {
  const held: FileHandle[] = [];
  try {
    const located = await locate(root, declaredPath, held);
    return await readLocated(located, maxBytes);
  } catch (error) {
    if (error instanceof Refusal) throw error.error;
    throw unreadable();
  } finally {
    await Promise.all(held.map((handle) => handle.close().catch(() => undefined)));
  }
}

async function examine(path: Buffer): Promise<Stats> {
  try {
    return await lstat(path);
  } catch (error) {
    throw new Refusal(systemRefusal(error));
  }
}

function systemRefusal(error: unknown): GraphError {
  const code = (error as { code?: unknown }).code;
  if (code === "ENOENT" || code === "ENOTDIR" || code === "ENAMETOOLONG") return missing();
  if (code === "ELOOP") return denied();
  return unreadable();
}

function child(directory: Buffer, name: Buffer): Buffer {
  return Buffer.concat([directory, Buffer.of(SLASH), name]);
}

function splitComponents(path: Buffer): Buffer[] {
  const components: Buffer[] = [];
  let start = 0;
  for (let index = 0; index <= path.length; index += 1) {
    if (index === path.length || path[index] === SLASH) {
      components.push(path.subarray(start, index));
      start = index + 1;
    }
  }
  return components;
}

const isName = (component: Buffer, name: string): boolean => component.equals(Buffer.from(name));

/** Hold a directory open and reach it through its descriptor from now on. */
async function pin(path: Buffer, status: Stats, held: FileHandle[]): Promise<Directory> {
  let handle: FileHandle;
  try {
    handle = await open(
      path,
      constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
  } catch (error) {
    throw new Refusal(systemRefusal(error));
  }
  held.push(handle);
  // Replaced since it was examined: the walk would go on somewhere else.
  if (!sameEntry(await handle.stat(), status)) throw new Refusal(unreadable());
  return { access: Buffer.from(`/proc/self/fd/${handle.fd}`), status, handle };
}

/** Let go of a directory popped from the stack: held directories are as many as the stack. */
async function unpin(directory: Directory, held: FileHandle[]): Promise<void> {
  const handle = directory.handle;
  if (handle === undefined) return;
  held.splice(held.indexOf(handle), 1);
  await handle.close().catch(() => undefined);
}

/** The procedure of section 8.2: a stack of directories starting with the root. */
async function locate(root: string, declaredPath: string, held: FileHandle[]): Promise<Located> {
  const rootPath = Buffer.from(root);
  const rootStatus = await examine(rootPath);
  // A root later replaced by a symbolic link is not followed ([CG-DOC-2]).
  if (rootStatus.isSymbolicLink()) throw new Refusal(denied());
  if (!rootStatus.isDirectory()) throw new Refusal(missing());
  const stack: Directory[] = [
    CAN_PIN ? await pin(rootPath, rootStatus, held) : { access: rootPath, status: rootStatus },
  ];
  const pending = splitComponents(Buffer.from(declaredPath, "utf8"));
  let links = 0;
  for (;;) {
    const component = pending.shift();
    if (component === undefined) throw new Refusal(denied());
    const remaining = pending.length > 0;
    if (isName(component, "..")) {
      if (stack.length === 1) throw new Refusal(denied());
      await unpin(stack.pop() as Directory, held);
      if (!remaining) throw new Refusal(denied());
      continue;
    }
    if (component.length === 0 || isName(component, ".")) {
      // Only a link target can hold these (declared paths are plain names): they name the
      // directory on top of the stack and change nothing ([CG-DOC-16]).
      if (!remaining) throw new Refusal(denied());
      continue;
    }
    const top = stack.at(-1) as Directory;
    const path = child(top.access, component);
    const status = await examine(path);
    if (status.isSymbolicLink()) {
      links += 1;
      if (links > MAX_LINKS) throw new Refusal(denied());
      let target: Buffer;
      try {
        target = await readlink(path, { encoding: "buffer" });
      } catch (error) {
        throw new Refusal(systemRefusal(error));
      }
      if (target.length === 0 || target[0] === SLASH) throw new Refusal(denied());
      pending.unshift(...splitComponents(target));
      continue;
    }
    if (remaining) {
      if (!status.isDirectory()) throw new Refusal(missing());
      stack.push(CAN_PIN ? await pin(path, status, held) : { access: path, status });
      continue;
    }
    if (!status.isFile()) throw new Refusal(denied());
    return { path, status, directories: stack };
  }
}

const sameEntry = (left: Stats, right: Stats) => left.dev === right.dev && left.ino === right.ino;

async function readLocated(located: Located, maxBytes: number): Promise<DocumentBody> {
  let handle: FileHandle | undefined;
  try {
    try {
      handle = await open(
        located.path,
        constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      );
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      // Swapped for a link after it was examined, or gone: never followed, never guessed.
      if (code === "ELOOP") throw new Refusal(denied());
      throw new Refusal(systemRefusal(error));
    }
    const opened = await handle.stat();
    if (!opened.isFile()) throw new Refusal(denied());
    if (!sameEntry(opened, located.status)) throw new Refusal(unreadable());
    // Every directory on the way must still be the one examined: otherwise the path may have
    // resolved through an entry swapped in during the walk.
    for (const directory of located.directories) {
      // A held directory is the one examined for as long as it is held.
      if (directory.handle !== undefined) continue;
      const now = await examine(directory.access);
      if (!now.isDirectory() || !sameEntry(now, directory.status)) throw new Refusal(unreadable());
    }
    if (opened.size > maxBytes) throw new Refusal(graphError("CG_DOCUMENT_TOO_LARGE", "document"));
    const buffer = Buffer.alloc(opened.size);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    // Shrunk, grown or rewritten while read: not a version that exists ([CG-DOC-12]).
    const probe = Buffer.alloc(1);
    const { bytesRead: beyond } = await handle.read(probe, 0, 1, length);
    const after = await handle.stat();
    if (
      length !== opened.size ||
      beyond !== 0 ||
      after.size !== opened.size ||
      after.mtimeMs !== opened.mtimeMs ||
      after.ctimeMs !== opened.ctimeMs
    ) {
      throw new Refusal(unreadable());
    }
    // Renamed over or moved while read: the path no longer names this file.
    const current = await lstat(located.path).catch(() => undefined);
    if (current === undefined || !sameEntry(current, opened)) throw new Refusal(unreadable());
    let text: string;
    try {
      text = utf8.decode(buffer);
    } catch {
      throw new Refusal(unreadable());
    }
    return {
      bytes: buffer.length,
      sha256: createHash("sha256").update(buffer).digest("hex"),
      text,
    };
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
