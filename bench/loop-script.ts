/**
 * @module bench/loop-script
 * What the loop bench's endpoint streams and what every run must end with: the chunks of a tool
 * step and of the answer, the answer's text, and the 2 KB every tool call returns.
 */

/** Content chunks before a tool step's call. */
export const PREAMBLE_CHUNKS = 20;
/** Fragments a tool call's arguments arrive in. */
export const ARGUMENT_FRAGMENTS = 10;
/** Content chunks of the answer. */
export const ANSWER_CHUNKS = 200;
/** The tool every step calls. */
export const TOOL_NAME = "lookup";

/** The answer's chunks' texts, in order. */
const answerPieces = Array.from({ length: ANSWER_CHUNKS }, (_, index) => `w${index % 97} `);

/** The exact text every run must end with. */
export const ANSWER_TEXT = answerPieces.join("");

/** What every tool call returns: 2 KB of text. */
export const TOOL_RESULT = "r".repeat(2048);

const base = { id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1_700_000_000, model: "bench" };

function chunk(delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
  return { ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] };
}

function usage(): Record<string, unknown> {
  return { ...base, choices: [], usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 } };
}

/** Splits `text` into `count` pieces of near-equal length. */
function split(text: string, count: number): string[] {
  const size = Math.ceil(text.length / count);
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  return pieces;
}

/** The chunks of tool step `step` (from 0) of a run of `steps`. */
export function stepChunks(step: number, steps: number): unknown[] {
  const chunks: unknown[] = [chunk({ role: "assistant", content: "" })];
  for (let index = 0; index < PREAMBLE_CHUNKS; index++) chunks.push(chunk({ content: `look ${index} ` }));
  const args = JSON.stringify({ query: `step ${step + 1} of ${steps}: what the index says about it` });
  const fragments = split(args, ARGUMENT_FRAGMENTS);
  chunks.push(chunk({ tool_calls: [{ index: 0, id: `call_${step}`, type: "function", function: { name: TOOL_NAME, arguments: "" } }] }));
  for (const fragment of fragments) chunks.push(chunk({ tool_calls: [{ index: 0, function: { arguments: fragment } }] }));
  chunks.push(chunk({}, "tool_calls"), usage());
  return chunks;
}

/** The chunks of the answer. */
export function answerChunks(): unknown[] {
  return [chunk({ role: "assistant", content: "" }), ...answerPieces.map((text) => chunk({ content: text })), chunk({}, "stop"), usage()];
}
