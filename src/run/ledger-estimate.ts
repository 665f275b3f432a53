/**
 * @module run/ledger-estimate
 * The estimate a ledger falls back on where no pair of entries measures a message: text cut into
 * tokenizer-like pieces, and rates per piece, per message and per tool call fitted by least
 * squares to the groups the ledger did measure.
 *
 * `ledger` measures the groups and shares their totals out by {@link weightOf}; this file reads
 * only messages and group totals, never the ledger's entries.
 */

import type { Message } from "../shapes/config.js";
import { DEFAULT_CHARS_PER_TOKEN, IMAGE_PART_TOKENS, messageChars } from "../text/tokens.js";
import { contentText } from "../text/content-text.js";
import { positiveNumber } from "../text/guards.js";

/** A stretch of a transcript a pair of ledger entries measured: messages `from` up to `to`, and the tokens they cost together. */
export interface MeasuredGroup {
  /** The first message of the stretch. */
  from: number;
  /** One past the last message of the stretch. */
  to: number;
  /** The tokens the stretch cost: the difference of the two reported prompts. */
  total: number;
}

function imagesIn(message: Message): number {
  let images = 0;
  if (Array.isArray(message.content)) for (const part of message.content) if (part && (part as { type?: unknown }).type === "image_url") images += 1;
  return images;
}

/** What a message's tokens are shared out by inside a measured group: its characters, one more so none is empty. */
export function weightOf(message: Message | undefined): number {
  if (!message || typeof message !== "object") return 1;
  return messageChars(message) + 1 + imagesIn(message) * IMAGE_PART_TOKENS * DEFAULT_CHARS_PER_TOKEN;
}

const PIECE_SOURCE = String.raw`[A-Za-z]+|[0-9]+|[^\S\n]*\n\s*|[^\S\n]+|[^A-Za-z0-9\s\u0080-\uffff]+|[\u0080-\uffff]`;

/**
 * Counts the pieces a tokenizer is likely to cut a text into: a word per run of letters (a long
 * one more), digits in threes, punctuation in runs of up to three, a line break with its indent,
 * and each character outside ASCII. Unlike characters, pieces cost about the same number of
 * tokens in prose, JSON and code, which is what lets a rate measured on tool results estimate a
 * question.
 */
function piecesOf(text: string): number {
  if (typeof text !== "string" || text.length === 0) return 0;
  let pieces = 0;
  for (const match of text.matchAll(new RegExp(PIECE_SOURCE, "g"))) {
    const run = match[0];
    const code = run.charCodeAt(0);
    if ((code >= 65 && code <= 90) || (code >= 97 && code <= 122)) pieces += 1 + Math.floor((run.length - 1) / 7);
    else if (code >= 48 && code <= 57) pieces += Math.ceil(run.length / 3);
    else if (code >= 0x80) pieces += 1;
    else if (code === 32 || code === 9 || code === 10 || code === 13 || code === 12 || code === 11) pieces += run.includes("\n") || run.length > 1 ? 1 : 0;
    else pieces += Math.ceil(run.length / 3);
  }
  return pieces;
}

/** What the estimate reads off one message: its pieces, and how many tool calls it makes. */
function featuresOf(message: Message | undefined): { pieces: number; calls: number; chars: number } {
  if (!message || typeof message !== "object") return { pieces: 0, calls: 0, chars: 0 };
  let pieces = piecesOf(contentText(message.content)) + imagesIn(message) * IMAGE_PART_TOKENS;
  let calls = 0;
  if (message.role === "assistant") {
    if (typeof message.reasoning_content === "string") pieces += piecesOf(message.reasoning_content);
    if (typeof message.reasoning === "string") pieces += piecesOf(message.reasoning);
    for (const call of message.tool_calls ?? []) {
      calls += 1;
      pieces += piecesOf(call?.function?.name ?? "") + piecesOf(call?.function?.arguments ?? "");
    }
  }
  return { pieces, calls, chars: messageChars(message) };
}

/** Solves a small linear system by Gaussian elimination; undefined when it is singular. */
function solve(matrix: number[][], vector: number[]): number[] | undefined {
  const size = vector.length;
  const rows = matrix.map((row, index) => [...row, vector[index]!]);
  for (let column = 0; column < size; column += 1) {
    let pivot = column;
    for (let row = column + 1; row < size; row += 1) if (Math.abs(rows[row]![column]!) > Math.abs(rows[pivot]![column]!)) pivot = row;
    if (Math.abs(rows[pivot]![column]!) < 1e-9) return undefined;
    [rows[column], rows[pivot]] = [rows[pivot]!, rows[column]!];
    for (let row = 0; row < size; row += 1) {
      if (row === column) continue;
      const factor = rows[row]![column]! / rows[column]![column]!;
      for (let k = column; k <= size; k += 1) rows[row]![k]! -= factor * rows[column]![k]!;
    }
  }
  return rows.map((row, index) => row[size]! / row[index]!);
}

/** Least squares without intercept over the first `terms` features; undefined unless every rate is usable. */
function fit(groups: readonly number[][], totals: readonly number[], terms: number): number[] | undefined {
  if (groups.length < terms + 1) return undefined;
  const matrix = Array.from({ length: terms }, () => new Array<number>(terms).fill(0));
  const vector = new Array<number>(terms).fill(0);
  groups.forEach((features, index) => {
    for (let i = 0; i < terms; i += 1) {
      vector[i]! += features[i]! * totals[index]!;
      for (let j = 0; j < terms; j += 1) matrix[i]![j]! += features[i]! * features[j]!;
    }
  });
  const rates = solve(matrix, vector);
  if (!rates || !(rates[0]! > 0) || rates.some((rate) => !Number.isFinite(rate) || rate < 0)) return undefined;
  return rates;
}

/** How many of the latest measured groups the estimate's rates are fitted to. */
const FITTED_GROUPS = 64;

/**
 * Builds the estimate of one message's tokens from the latest measured groups of a transcript.
 *
 * The rates are fitted to at most the latest 64 groups: per piece of text, per message and per
 * tool call where the groups can tell those apart, a single rate per piece where they cannot,
 * and characters over `charsPerToken` (with images at their flat cost) where nothing was
 * measured.
 *
 * @param groups - The measured groups, oldest first, indexing into `list`.
 * @param list - The transcript the groups were measured on.
 * @param charsPerToken - The divisor used while nothing was measured; absent or unusable, the default.
 */
export function fitEstimate(
  groups: readonly MeasuredGroup[],
  list: readonly Message[],
  charsPerToken: number | undefined,
): (message: Message | undefined) => number {
  // The rates are fitted to the latest groups only: they describe what the run is made of now,
  // and reading every group's text would make a long transcript slow to measure.
  const features: number[][] = [];
  const totals: number[] = [];
  for (const group of groups.slice(-FITTED_GROUPS)) {
    let pieces = 0;
    let calls = 0;
    for (let index = group.from; index < group.to; index += 1) {
      const found = featuresOf(list[index]);
      pieces += found.pieces;
      calls += found.calls;
    }
    features.push([pieces, group.to - group.from, calls]);
    totals.push(group.total);
  }
  // Tokens as a rate per piece, plus a cost per message and per tool call where the groups can
  // tell them apart; a plain rate where they cannot; the divisor where nothing was measured.
  let rates = fit(features, totals, 3) ?? fit(features, totals, 2);
  if (!rates) {
    const pieces = features.reduce((sum, group) => sum + group[0]!, 0);
    const tokens = totals.reduce((sum, total) => sum + total, 0);
    if (pieces > 0 && tokens > 0) rates = [tokens / pieces];
  }
  const chosen = rates;
  const divisor = positiveNumber(charsPerToken) ?? DEFAULT_CHARS_PER_TOKEN;
  const estimate = (message: Message | undefined): number => {
    const found = featuresOf(message);
    if (!chosen) return found.chars / divisor + (message && typeof message === "object" ? imagesIn(message) * IMAGE_PART_TOKENS : 0);
    return found.pieces * chosen[0]! + (chosen[1] ?? 0) + found.calls * (chosen[2] ?? 0);
  };
  return estimate;
}
