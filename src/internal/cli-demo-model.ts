/**
 * @module internal/cli-demo-model
 * The scripted model behind `agent-core demo` when no URL is given: a `respond` function for the
 * loopback endpoint that plays a short, believable run by reading the transcript it is sent —
 * think, list the folder, think, calculate, answer — streamed a word at a time.
 */
import type { RecordedRequest, Scripted } from "./testing-types.js";
import { turn } from "../testing.js";

/** The question the demo asks, of the simulated model and of a real one alike. */
export const DEMO_QUESTION = "How many files and folders are in the project folder, and what is that count times 2.5, plus 4?";

/** The system prompt the demo sends. */
export const DEMO_SYSTEM =
  "You are a careful assistant with two tools. Use list_files to look at folders and calculate for any arithmetic, then answer in one or two sentences.";

interface Seen {
  listing?: string;
  result?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Reads which tools have answered so far, by matching each tool message to the call it answers. */
function readTranscript(body: unknown): Seen {
  const messages = isRecord(body) && Array.isArray(body.messages) ? body.messages : [];
  const names = new Map<string, string>();
  const seen: Seen = {};
  for (const message of messages) {
    if (!isRecord(message)) continue;
    if (message.role === "assistant" && Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls) {
        if (isRecord(call) && typeof call.id === "string" && isRecord(call.function)) names.set(call.id, String(call.function.name));
      }
    }
    if (message.role === "tool" && typeof message.tool_call_id === "string") {
      const content = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
      const name = names.get(message.tool_call_id);
      if (name === "list_files") seen.listing = content;
      if (name === "calculate") seen.result = content;
    }
  }
  return seen;
}

function wordsIn(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/**
 * Builds the demo's scripted model: a `respond` function that answers each chat request with the
 * next step of the run, chunks spaced `delayMs` apart.
 *
 * @param delayMs - The pause before each streamed chunk, so the run reads as live. @default 12
 */
export function demoModel(delayMs = 12): (request: RecordedRequest) => Scripted {
  return (request) => {
    const seen = readTranscript(request.body);
    const stream = (spec: Parameters<typeof turn>[0] & object): Scripted => {
      const pieces = Math.max(3, wordsIn(`${spec.reasoning ?? ""} ${spec.content ?? ""}`));
      return { ...turn({ ...spec, pieces }), delayMs };
    };
    if (seen.listing === undefined) {
      return stream({
        reasoning: "The user wants to know how many entries the project folder holds, and then a little arithmetic on that count. I should look rather than guess: list the folder first.",
        toolCalls: [{ id: "call_list", name: "list_files", arguments: { path: "." } }],
      });
    }
    const entries = seen.listing.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("…"));
    const count = entries.length;
    if (seen.result === undefined) {
      return stream({
        reasoning: `The listing shows ${count} entries. Now (${count} × 2.5) + 4 — the calculator will get that exactly right.`,
        toolCalls: [{ id: "call_calc", name: "calculate", arguments: { expression: `(${count} * 2.5) + 4` } }],
      });
    }
    const folders = entries.filter((line) => line.endsWith("/")).length;
    return stream({
      reasoning: "Both results are in; time to answer.",
      content: `The project folder holds ${count} entries (${folders} folders and ${count - folders} files), and ${count} × 2.5 + 4 = ${seen.result}.`,
    });
  };
}
