// Reading a trusted local file (a configuration or a definition file) as bounded bytes: only a
// regular file, never blocking on a fifo or a device, never reading more than the limit + 1.
import { constants } from "node:fs";
import { type FileHandle, open, stat } from "node:fs/promises";

export type BoundedRead =
  | { readonly ok: true; readonly bytes: Uint8Array }
  | {
      readonly ok: false;
      readonly reason: "missing" | "directory" | "not-a-file" | "unreadable";
    }
  | { readonly ok: false; readonly reason: "too-large"; readonly size: number };

/**
 * Read a regular file of at most `maxBytes` bytes. The size is decided from the opened file
 * before its content is read; a file that grows while read past the limit is too large.
 */
export async function readBoundedFile(path: string, maxBytes: number): Promise<BoundedRead> {
  let handle: FileHandle | undefined;
  try {
    const before = await stat(path);
    if (before.isDirectory()) return { ok: false, reason: "directory" };
    if (!before.isFile()) return { ok: false, reason: "not-a-file" };
    // O_NONBLOCK: should the entry be swapped for a fifo after the stat, open does not block.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const status = await handle.stat();
    if (!status.isFile()) return { ok: false, reason: "not-a-file" };
    if (status.size > maxBytes) return { ok: false, reason: "too-large", size: status.size };
    // Read until the end of the file, never more than maxBytes + 1 bytes in total, in pieces of
    // at most 1 MiB, into one buffer of the size found (and a byte more, to see the file grow):
    // a large definition is never held twice, as pieces and as their concatenation.
    let buffer = Buffer.allocUnsafe(Math.min(status.size, maxBytes) + 1);
    let length = 0;
    while (length <= maxBytes) {
      if (length === buffer.length) {
        // The file grew since its size was read: room for more, up to the limit + 1.
        const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxBytes + 1));
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      const piece = Math.min(buffer.length - length, 1 << 20);
      const { bytesRead } = await handle.read(buffer, length, piece, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) return { ok: false, reason: "too-large", size: length };
    return { ok: true, bytes: buffer.subarray(0, length) };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { ok: false, reason: "missing" };
    if (code === "EISDIR") return { ok: false, reason: "directory" };
    return { ok: false, reason: "unreadable" };
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
