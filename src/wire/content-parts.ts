/**
 * @module wire/content-parts
 * Reading a reply's content when a server sends it as a list of parts rather than a string:
 * Mistral's reasoning models stream `delta.content` as `[{ type: "text", text }]` and
 * `[{ type: "thinking", thinking: [{ type: "text", text }] }]`, mixed with plain strings in the
 * same stream, and answer a non-streamed request the same way.
 */

import { isRecord } from "../text/guards.js";

/** Where the pieces of a part list go, in the order they were written. */
export interface ContentPartSink {
  /** A piece of answer text (a string part or a `text` part). */
  text(text: string): void;
  /** A piece of reasoning (a `thinking` or `reasoning` part). */
  reasoning(text: string): void;
  /** A part that is neither: what it is, for a notice, and the part itself. */
  setAside(kind: string, part: unknown): void;
}

/** The part types whose text is reasoning, and the field each keeps it in besides `text`. */
const REASONING_TYPES: Readonly<Record<string, string>> = { thinking: "thinking", reasoning: "reasoning", reasoning_text: "text" };
/** How deep a thinking part's nested parts are read; deeper nesting is set aside. */
const MAX_DEPTH = 8;

/**
 * Reads a list of content parts into answer and reasoning, in order.
 *
 * A string or a `{ type: "text", text }` part is answer; a `thinking` part (its `thinking` a
 * string or a list of text parts), a `reasoning` part and a `reasoning_text` part are reasoning.
 * Anything else (an unknown type, a part that is not an object, a text part whose text is not a
 * string) goes to `setAside`, so nothing is lost without a word. Empty text is skipped.
 */
export function readContentParts(parts: readonly unknown[], sink: ContentPartSink): void {
  for (let i = 0; i < parts.length; i++) readPart(parts[i], sink, false, 0);
}

function readPart(part: unknown, sink: ContentPartSink, inReasoning: boolean, depth: number): void {
  if (typeof part === "string") {
    if (part !== "") (inReasoning ? sink.reasoning : sink.text)(part);
    return;
  }
  if (!isRecord(part) || depth > MAX_DEPTH) {
    sink.setAside(part === null ? "null" : Array.isArray(part) ? "array" : typeof part, part);
    return;
  }
  const type = part.type;
  if (type === "text" || type === undefined) {
    if (typeof part.text === "string") {
      if (part.text !== "") (inReasoning ? sink.reasoning : sink.text)(part.text);
      return;
    }
    sink.setAside(typeof type === "string" ? type : "untyped", part);
    return;
  }
  const field = typeof type === "string" ? REASONING_TYPES[type] : undefined;
  if (field === undefined) {
    sink.setAside(typeof type === "string" ? type : "untyped", part);
    return;
  }
  const inner = part[field] ?? part.text;
  if (typeof inner === "string") {
    if (inner !== "") sink.reasoning(inner);
  } else if (Array.isArray(inner)) {
    for (let i = 0; i < inner.length; i++) readPart(inner[i], sink, true, depth + 1);
  } else if (inner !== undefined && inner !== null) {
    sink.setAside(type as string, part);
  }
}

/** The notice for a part kept out of the answer: its type and the start of the part as sent. */
export function setAsideNotice(kind: string, part: unknown): string {
  let shown: string;
  try {
    shown = JSON.stringify(part) ?? String(part);
  } catch {
    shown = String(part);
  }
  if (shown.length > 200) shown = `${shown.slice(0, 200)}…`;
  return `The reply held a content part of type "${kind}" that is neither text nor reasoning; it was kept out of the answer: ${shown}`;
}
