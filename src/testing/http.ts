/**
 * @module testing/http
 * The loopback endpoint's plumbing over `node:http`: reading a request body, and writing JSON,
 * text and server-sent events back.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ChunkSpec } from "./types.js";
import { isPlainRecord } from "./guards.js";

/** Reads the model a request body names, or the loopback default. @internal */
export function modelOf(body: Record<string, unknown>): string {
  return typeof body.model === "string" ? body.model : "loopback-model";
}

/** Whether a request asked for usage in its stream. @internal */
export function includesUsage(body: Record<string, unknown>): boolean {
  const streamOptions = body.stream_options;
  return isPlainRecord(streamOptions) && streamOptions.include_usage === true;
}

/** Reads a request's whole body as UTF-8 text. @internal */
export function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    request.on("data", (part: Buffer) => parts.push(part));
    request.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    request.on("error", reject);
  });
}

/** Parses a body as JSON, keeping the raw text where it is not JSON. @internal */
export function parseBody(raw: string): unknown {
  if (raw === "") return "";
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/** Formats one chunk as an SSE event: objects as `data: <json>`, strings as written. */
export function formatChunk(chunk: ChunkSpec): string {
  if (typeof chunk === "string") return chunk.endsWith("\n") ? chunk : `${chunk}\n\n`;
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** Opens a server-sent event stream with status 200. @internal */
export function openStream(response: ServerResponse): void {
  response.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  response.flushHeaders();
}

/** Sends a JSON body with a status. @internal */
export function sendJson(response: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  response.end(text);
}

/** Sends a body: a string as text (HTML where it starts with `<`), anything else as JSON. @internal */
export function sendBody(response: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  if (typeof body === "string") {
    const type = body.trimStart().startsWith("<") ? "text/html; charset=utf-8" : "text/plain; charset=utf-8";
    response.writeHead(status, { "content-type": type, ...headers });
    response.end(body);
    return;
  }
  sendJson(response, status, body, headers);
}
