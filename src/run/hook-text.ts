/**
 * @module run/hook-text
 * Text that hooks and prompts handle: the untrusted fence, and a transcript as a hook reads it.
 *
 * `hooks` re-exports every public name here.
 */

import { createHash } from "node:crypto";
import { contentText } from "../text/content-text.js";

/** Options for {@link untrusted}. */
export interface UntrustedOptions {
  /** Where the text came from — a URL, a sender, a tool's name — written as the block's `source` attribute. */
  source?: string | undefined;
}

/** A code point as a fence reader would see it: compatibility-decomposed, marks and invisible format characters removed. */
const plain = (codePoint: string) => codePoint.normalize("NFKD").replace(/[\p{M}\p{Cf}]/gu, "");

/** The characters that read as `<` once decomposed: `<` itself, ≮, ﹤ and ＜. */
const LESS_THAN = /[<\u226E\uFE64\uFF1C]/u;
const WORD = "untrusted";

/** Whether a UTF-16 code unit is one of the four characters that read as `<`. */
const isLessThan = (code: number) => code === 0x3c || code === 0x226e || code === 0xfe64 || code === 0xff1c;

/** The code point starting at `at` (both halves of a surrogate pair), read as {@link plain} reads it; ASCII is itself. */
function plainAt(text: string, at: number): { piece: string; next: number } {
  const code = text.charCodeAt(at);
  if (code < 0x80) return { piece: text[at] as string, next: at + 1 };
  const point = String.fromCodePoint(text.codePointAt(at) as number);
  return { piece: plain(point), next: at + point.length };
}

/**
 * Whether the text after `start` spells an `untrusted` tag name, allowing spaces, slashes and
 * invisible characters before it. It reads no further than the next character that reads as
 * `<`, so the checks of all the `<` in a text read it once between them.
 */
function opensTag(text: string, start: number): boolean {
  let at = start;
  while (at < text.length) {
    const { piece, next } = plainAt(text, at);
    if (!/^[\s/]*$/u.test(piece)) break;
    at = next;
  }
  let word = "";
  while (at < text.length && word.length < WORD.length) {
    const { piece, next } = plainAt(text, at);
    at = next;
    if (piece === "") continue;
    word += piece.toLowerCase();
    if (!WORD.startsWith(word.slice(0, WORD.length))) return false;
  }
  return word.startsWith(WORD);
}

/** Escapes the `<` of every `untrusted` tag, opening or closing, in any case or spacing. */
function escapeFences(text: string): string {
  if (!LESS_THAN.test(text)) return text;
  let out = "";
  let copied = 0;
  for (let at = 0; at < text.length; at++) {
    if (!isLessThan(text.charCodeAt(at)) || !opensTag(text, at + 1)) continue;
    out += `${text.slice(copied, at)}&lt;`;
    copied = at + 1;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

const attribute = (text: string) => text.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

/**
 * Wraps text nobody vouched for in an `<untrusted>` fence the model can see, escaping any tag inside it that could close or reopen the fence.
 *
 * Every `untrusted` tag in the text — opening or closing, in any case, with spaces, slashes,
 * invisible characters or look-alike characters (fullwidth letters, ＜, ≮) — has its `<` written
 * as `&lt;`, so a page that writes `</untrusted>` and then an instruction leaves the instruction
 * inside the block. Nothing else in the text is changed. Put `UNTRUSTED_PREFACE` in the
 * system prompt once so the model knows what the fence means. This is one layer, not a defence
 * on its own: what the text can make the agent do is the tool policy's call.
 *
 * @param text - The text to fence; anything that is not a string is written as one.
 * @param options - `source` names where it came from.
 * @returns `<untrusted source="…">`, the text on its own lines, then `</untrusted>`.
 * @example
 * const content = `Summarise this page.\n\n${untrusted(page, { source: url })}`;
 */
export function untrusted(text: string, options: UntrustedOptions = {}): string {
  const body = escapeFences(typeof text === "string" ? text : String(text ?? ""));
  const source = options?.source;
  const attributes = typeof source === "string" ? ` source="${attribute(source)}"` : "";
  return `<untrusted${attributes}>\n${body}\n</untrusted>`;
}

/** One message of a transcript as a hook is handed it. */
export interface HookMessage {
  /** Who said it. */
  speaker: "user" | "assistant";
  /** What was said, trimmed; tool calls and results are not included. */
  text: string;
  /** A stable id for the message: the same session, stored index and text always give the same uuid. */
  uuid: string;
  /** The message's stored index: its position in the array plus `offset`. */
  index: number;
}

/** A name-based UUID (version 8, RFC 9562) from the SHA-256 of the session, the stored index, the speaker and the text. */
function messageUuid(sessionId: string, index: number, speaker: string, text: string): string {
  const hex = createHash("sha256").update(`${sessionId}\u0000${index}\u0000${speaker}\u0000${text}`).digest("hex");
  const variant = ((Number.parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const whole = (value: unknown, fallback: number) => (typeof value === "number" && Number.isFinite(value) ? Math.trunc(value) : fallback);

/**
 * Returns the user and assistant messages of a stretch of transcript as a hook reads them, each with a stable uuid.
 *
 * Tool calls, tool results, system messages and empty messages are left out: they are the
 * model's working, not the conversation. The uuid is derived with SHA-256 from the session id,
 * the message's stored index (`offset` plus its position in `messages`), its speaker and its
 * text, and is formatted as a version-8 UUID. It is the same every time the same message is
 * handed to a hook — after its turn, and again when a fold summarises it away — provided `offset`
 * says where `messages` starts in the stored transcript; a retry that writes a different answer
 * at the same index gets a different uuid.
 *
 * @param sessionId - Part of every uuid, so two sessions never share one.
 * @param messages - The transcript, in any shape with an OpenAI-style `role` and `content`.
 * @param from - The first array index read, inclusive; absent or below zero reads from the start.
 * @param to - The array index to stop before; absent or past the end reads to the end.
 * @param options - `offset` is the stored index of `messages[0]` (0 by default), for an array a fold has shifted.
 */
export function turnMessages(
  sessionId: string,
  messages: readonly { role: string; content?: unknown }[],
  from?: number,
  to?: number,
  options: { offset?: number } = {},
): HookMessage[] {
  if (!Array.isArray(messages)) return [];
  const offset = whole(options?.offset, 0);
  const end = Math.min(whole(to, messages.length), messages.length);
  const found: HookMessage[] = [];
  for (let at = Math.max(0, whole(from, 0)); at < end; at++) {
    const message = messages[at];
    if (message === null || typeof message !== "object") continue;
    if (message.role !== "user" && message.role !== "assistant") continue;
    const text = contentText(message.content).trim();
    if (!text) continue;
    const index = at + offset;
    found.push({ speaker: message.role, text, uuid: messageUuid(String(sessionId), index, message.role, text), index });
  }
  return found;
}

/**
 * Returns which turn of a session starts at a point, from 0: the user messages before it, plus `offset`.
 *
 * @param messages - The transcript.
 * @param before - The array index the turn starts at; absent is the end, the index of a question not yet appended.
 * @param options - `offset` counts the turns a fold took out of `messages` (0 by default).
 */
export function turnIndex(messages: readonly { role: string }[], before?: number, options: { offset?: number | undefined } = {}): number {
  const offset = whole(options?.offset, 0);
  if (!Array.isArray(messages)) return offset;
  const end = Math.min(Math.max(0, whole(before, messages.length)), messages.length);
  let turns = 0;
  for (let at = 0; at < end; at++) if (messages[at]?.role === "user") turns++;
  return offset + turns;
}
