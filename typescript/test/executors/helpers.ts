// Shared test support for the executor tests: a job with a small catalog, and a real loopback
// HTTP server whose handler each test supplies.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import type { ExecutorJob } from "../../src/core/executors/protocol.js";

export const CATALOG = [
  {
    id: "billing::invoice.create",
    providerId: "billing",
    name: "Create invoice",
    description: "Create and send an invoice to a customer.",
    tags: ["billing", "invoice"],
  },
  {
    id: "acme::route.validation",
    providerId: "acme",
    name: "Request validation",
    description: "Validate input before a route handler runs.",
    tags: ["http", "validation"],
    whenToUse: "a route needs a declared request contract",
  },
] as const;

export function makeJob(overrides: Partial<ExecutorJob> = {}): ExecutorJob {
  return {
    request: "create an invoice",
    context: { tenant: "t1" },
    catalog: CATALOG,
    limit: 5,
    deadline: performance.now() + 30_000,
    maxOutputBytes: 4096,
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** One request as the server saw it. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface LoopbackServer {
  baseUrl: string;
  seen: SeenRequest[];
  /** Resolves when a request's connection was closed by the client before an answer ended. */
  clientWentAway: Promise<void>;
  close(): Promise<void>;
}

/**
 * A server on 127.0.0.1 answering every POST with `handler` (after the body was read). The
 * handler may leave the response open to play a slow server.
 */
export async function loopbackServer(
  handler: (request: SeenRequest, response: http.ServerResponse) => void,
): Promise<LoopbackServer> {
  const seen: SeenRequest[] = [];
  let noticeGone: () => void = () => undefined;
  const clientWentAway = new Promise<void>((resolve) => {
    noticeGone = resolve;
  });
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const entry: SeenRequest = {
        method: request.method ?? "",
        url: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      seen.push(entry);
      response.on("close", () => {
        if (!response.writableFinished) noticeGone();
      });
      handler(entry, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    seen,
    clientWentAway,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A chat-completions answer with one choice. */
export function completion(message: Record<string, unknown>, finishReason = "stop"): string {
  return JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion",
    choices: [
      { index: 0, message: { role: "assistant", ...message }, finish_reason: finishReason },
    ],
  });
}

export function answerJson(response: http.ServerResponse, status: number, body: string): void {
  response.writeHead(status, { "Content-Type": "application/json" });
  response.end(body);
}
