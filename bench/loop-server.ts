/**
 * @module bench/loop-server
 * The scripted chat endpoint loop.bench.ts measures against, run as a child process so that its
 * own work is not charged to the process being measured.
 *
 * A request's model name says how many tool steps the run has (`bench-s10` for ten). The number
 * of tool results already in the request's messages says which step it is: before the last,
 * the reply is a tool step (20 content chunks of preamble, then one call to `lookup` whose
 * arguments come in 10 fragments); after it, the 200-chunk answer. Every reply ends with a usage
 * chunk and `[DONE]`, as the OpenAI family streams one. Anything but a chat request is a 404.
 * Prints `{ "port": … }` on its first line once listening; stops when its stdin closes.
 */
import { createServer } from "node:http";
import { answerChunks, stepChunks } from "./loop-script.js";

function render(chunks: readonly unknown[]): string {
  return `${chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("")}data: [DONE]\n\n`;
}

/** Rendered once per (steps, step) pair; the server's share is then writing bytes. */
const rendered = new Map<string, string>();

function replyFor(steps: number, step: number): string {
  const key = `${steps}/${step}`;
  let text = rendered.get(key);
  if (text === undefined) {
    text = render(step < steps ? stepChunks(step, steps) : answerChunks());
    rendered.set(key, text);
  }
  return text;
}

const server = createServer((request, response) => {
  const parts: Buffer[] = [];
  request.on("data", (part: Buffer) => parts.push(part));
  request.on("end", () => {
    if (request.method !== "POST" || !request.url?.endsWith("/chat/completions")) {
      response.writeHead(404, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: "not found", type: "invalid_request_error" } }));
      return;
    }
    const body = JSON.parse(Buffer.concat(parts).toString("utf8")) as { model?: string; messages?: Array<{ role?: string }> };
    const steps = Number(/^bench-s(\d+)$/.exec(body.model ?? "")?.[1] ?? 0);
    const step = (body.messages ?? []).filter((message) => message.role === "tool").length;
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    response.end(replyFor(steps, step));
  });
});

server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === "object" && address ? address.port : 0 })}\n`);
});
process.stdin.resume();
process.stdin.on("end", () => {
  server.closeAllConnections();
  server.close();
});
