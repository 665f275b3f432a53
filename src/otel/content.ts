/**
 * @module otel/content
 * Message content in the shapes the GenAI conventions give it — `gen_ai.system_instructions`,
 * `gen_ai.input.messages`, `gen_ai.output.messages` — written as JSON strings, for a host that
 * turned content on.
 *
 * Only what the model reads goes in: roles, text, tool calls and tool answers. An image sent
 * inline is named by its media type, never copied, and nothing from a request's headers or key
 * ever reaches here (the request body carries neither).
 */

import type { Message } from "../index.js";

/** One part of a message, as the conventions' JSON schemas describe it. */
type Part =
  | { type: "text"; content: string }
  | { type: "reasoning"; content: string }
  | { type: "tool_call"; id: string; name: string; arguments: unknown }
  | { type: "tool_call_response"; id: string; response: unknown }
  | { type: "uri"; modality: "image"; uri: string };

function argumentsOf(text: unknown): unknown {
  if (typeof text !== "string") return text ?? {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function imageUri(url: unknown): string {
  const text = typeof url === "string" ? url : "";
  if (!text.startsWith("data:")) return text;
  const comma = text.indexOf(",");
  return `${comma >= 0 ? text.slice(0, comma + 1) : "data:"}[${text.length} chars]`;
}

function contentParts(content: unknown): Part[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", content }];
  if (!Array.isArray(content)) return [];
  const parts: Part[] = [];
  for (const part of content) {
    if (part === null || typeof part !== "object") continue;
    const piece = part as { type?: unknown; text?: unknown; image_url?: { url?: unknown } };
    if (piece.type === "text" && typeof piece.text === "string") parts.push({ type: "text", content: piece.text });
    else if (piece.type === "image_url") parts.push({ type: "uri", modality: "image", uri: imageUri(piece.image_url?.url) });
  }
  return parts;
}

function textOf(content: unknown): string {
  return contentParts(content)
    .map((part) => (part.type === "text" ? part.content : ""))
    .join("");
}

/** The request's leading system messages and the rest, in the conventions' two shapes. */
export interface InputContent {
  /** `gen_ai.system_instructions`, where the request led with a system prompt. */
  system?: string | undefined;
  /** `gen_ai.input.messages`. */
  messages: string;
}

/**
 * Writes a request's messages as the conventions' system instructions and input messages.
 *
 * @param messages - The messages as the request sent them.
 */
export function inputContent(messages: readonly Message[]): InputContent {
  const list = Array.isArray(messages) ? messages : [];
  let lead = 0;
  const instructions: Part[] = [];
  while (lead < list.length && (list[lead] as { role?: unknown } | undefined)?.role === "system") {
    instructions.push(...contentParts(list[lead]!.content));
    lead += 1;
  }
  const rest = list.slice(lead).map((message) => {
    const role = typeof message?.role === "string" ? message.role : "user";
    if (message?.role === "tool") {
      return { role, parts: [{ type: "tool_call_response", id: String(message.tool_call_id ?? ""), response: textOf(message.content) }] };
    }
    const parts: Part[] = [];
    if (message?.role === "assistant" && typeof message.reasoning_content === "string" && message.reasoning_content !== "") {
      parts.push({ type: "reasoning", content: message.reasoning_content });
    }
    parts.push(...contentParts(message?.content));
    if (message?.role === "assistant" && Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls) {
        parts.push({
          type: "tool_call",
          id: String(call?.id ?? ""),
          name: String(call?.function?.name ?? ""),
          arguments: argumentsOf(call?.function?.arguments),
        });
      }
    }
    return { role, parts };
  });
  const content: InputContent = { messages: JSON.stringify(rest) };
  if (instructions.length > 0) content.system = JSON.stringify(instructions);
  return content;
}

/** What one request answered, as its output events streamed it. */
export interface OutputReply {
  reasoning: string;
  text: string;
  finishReason: string;
}

/**
 * Writes what a request answered as the conventions' output messages: one assistant message.
 *
 * @param reply - The reasoning and text the request streamed, and its finish reason.
 */
export function outputContent(reply: OutputReply): string {
  const parts: Part[] = [];
  if (reply.reasoning !== "") parts.push({ type: "reasoning", content: reply.reasoning });
  if (reply.text !== "") parts.push({ type: "text", content: reply.text });
  return JSON.stringify([{ role: "assistant", parts, finish_reason: reply.finishReason }]);
}
