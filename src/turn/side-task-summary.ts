/**
 * @module turn/side-task-summary
 * What the summariser side task shows its model: the folded messages as a plain transcript, and
 * the prompt around them.
 */

import type { Message } from "../shapes/config.js";
import { contentText } from "../text/content-text.js";
import { isPlainRecord } from "../text/guards.js";

/** The system prompt a summary is written under unless the host gives its own. */
export const SUMMARY_INSTRUCTIONS = [
  "You condense the earlier part of a conversation between a user and an assistant that uses tools, so the conversation can go on without it.",
  "Keep what the assistant will need: the user's goals, constraints and preferences; decisions made and why; facts found (names, paths, numbers, errors); what was done; what is still open.",
  "Where an earlier summary is given, fold it in so nothing it says is lost.",
  "Write plain prose or short lists, in the conversation's language, with no preamble.",
].join("\n");

/** Cuts a text to `max` characters, keeping its start and end around a marker. */
export function clip(text: string, max: number): string {
  const limit = Math.max(64, Math.floor(max));
  if (text.length <= limit) return text;
  const left = text.length - limit;
  const head = Math.ceil((limit * 2) / 3);
  const tail = limit - head;
  return `${text.slice(0, head)}\n[… ${left.toLocaleString("en-US")} characters left out …]\n${text.slice(text.length - tail)}`;
}

/** The text of a message's content, parts on lines of their own; an image is named, not sent. */
const transcriptText = (content: unknown): string => contentText(content, { image: "[image]", separator: "\n" });

/** One message as a transcript line, or "" for one with nothing to show. */
function renderMessage(message: Message, max: number): string {
  // Checked as unknown: a record check on the union would narrow it to the message open to provider fields.
  if (!isPlainRecord(message as unknown)) return "";
  const text = transcriptText(message.content).trim();
  switch (message.role) {
    case "system":
    case "developer":
      return text ? `System: ${clip(text, max)}` : "";
    case "user":
      return text ? `User: ${clip(text, max)}` : "";
    case "assistant": {
      const lines = text ? [`Assistant: ${clip(text, max)}`] : [];
      for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
        const fn: Record<string, unknown> = isPlainRecord(call) && isPlainRecord(call.function) ? call.function : {};
        const name = typeof fn.name === "string" ? fn.name : "a tool";
        const args = typeof fn.arguments === "string" ? fn.arguments : "";
        lines.push(`Assistant called ${name}(${clip(args, max)})`);
      }
      return lines.join("\n");
    }
    case "tool":
      return `Tool result: ${clip(text, max)}`;
    default:
      return text ? clip(text, max) : "";
  }
}

/** The messages as a plain transcript, one block per message. */
export function renderTranscript(messages: readonly Message[], maxMessageChars: number): string {
  return messages
    .map((message) => renderMessage(message, maxMessageChars))
    .filter((line) => line !== "")
    .join("\n\n");
}

/** The user turn of a summary request: the earlier summary, where there is one, and the transcript. */
export function summaryPrompt(transcript: string, previous: string | undefined): string {
  const parts = previous ? [`The summary so far:\n${previous.trim()}`, `The conversation after it:\n${transcript}`] : [`The conversation:\n${transcript}`];
  parts.push("Write the summary now.");
  return parts.join("\n\n");
}
