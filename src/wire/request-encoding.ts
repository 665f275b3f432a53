/**
 * @module wire/request-encoding
 * Writes a chat request's JSON with its declared tools taken from the text the runtime wrote once
 * per definition, instead of having every request write every tool again: with forty tools that
 * is some 40 KB of JSON per request that the body of each step would otherwise repeat.
 *
 * Only the openai SDK's own `OpenAI` client, whose `chat.completions.create` is the SDK's own
 * method, gets the written body, through its `post` (the same route, headers, auth and options
 * the method uses); a subclass such as `AzureOpenAI`, which reads the body as an object, or
 * a client whose method a host wrapped or replaced (tracing, logging, a test double), is called
 * as before, so what it watches still sees every request.
 */
import OpenAI from "openai";
import { declaredJsonOf } from "./tools-cache.js";

/**
 * The request's JSON with `stream: true`, its tools spliced in from their written text; undefined
 * where the body declares no tools or any of them is not one the runtime declared (the SDK then
 * writes the body as usual). The text parses to what `JSON.stringify` would write, `tools` last.
 */
export function encodeStreamedBody(body: Readonly<Record<string, unknown>>): string | undefined {
  const tools = body.tools;
  if (!Array.isArray(tools) || tools.length === 0) return undefined;
  const written: string[] = [];
  for (const tool of tools) {
    const json = declaredJsonOf(tool);
    if (json === undefined) return undefined;
    written.push(json);
  }
  const { tools: _tools, ...rest } = body;
  const head = JSON.stringify({ ...rest, stream: true });
  return `${head.slice(0, -1)},"tools":[${written.join(",")}]}`;
}

/**
 * Whether a request may go through the client's `post`: the client is the SDK's own `OpenAI` class
 * (not a subclass such as `AzureOpenAI`, which builds its requests from the body as an object) and
 * its chat-completions method is the SDK's own, not one a host wrapped or replaced.
 */
export function postsDirectly(client: OpenAI): boolean {
  if (typeof client !== "object" || client === null || Object.getPrototypeOf(client) !== OpenAI.prototype) return false;
  const completions = (client as { chat?: { completions?: { create?: unknown } } }).chat?.completions;
  return completions?.create === OpenAI.Chat.Completions.prototype.create && typeof (client as { post?: unknown }).post === "function";
}
