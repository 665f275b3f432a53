/**
 * @module testing/turn-carriers
 * The ways a real server hands over a turn's reasoning besides a reasoning field, for the
 * loopback endpoint to speak: Mistral's content parts, and the scratchpad written raw into the
 * content by a server without a reasoning parser (`<think>`, gpt-oss harmony, Gemma 4), plus
 * tool calls a model wrote inside its reasoning.
 */

/**
 * How a turn's reasoning travels.
 *
 * - `field`: the family's reasoning field (`reasoning_content` or `reasoning`).
 * - `parts`: content as a list of parts, `{ type: "thinking", thinking: [{ type: "text", text }] }`
 *   then `{ type: "text", text }`, as Mistral's reasoning models send it (recorded in vercel/ai
 *   `packages/mistral/src/__fixtures__/mistral-reasoning.chunks.txt`).
 * - `think`: raw in the content, `<think>…</think>` then the answer.
 * - `harmony`: raw gpt-oss harmony as llama-server passes it without a reasoning parser,
 *   `<|channel|>analysis<|message|>…` then `<|start|>assistant<|channel|>final<|message|>` and
 *   the answer, with no `<|end|>` between.
 * - `gemma`: raw Gemma 4, `<|channel>thought\n…<channel|>` then the answer (the markup of its
 *   chat template, llama.cpp `models/templates/google-gemma-4-31B-it-interleaved.jinja`).
 */
export type ReasoningCarrier = "field" | "parts" | "think" | "harmony" | "gemma";

/** The reasoning and the answer of a turn, as the carrier sends them. */
interface Carried {
  reasoning: string;
  content: string;
  field: "reasoning_content" | "reasoning";
  carrier: ReasoningCarrier;
}

function rawContent({ reasoning, content, carrier }: Carried): string {
  if (reasoning === "") return content;
  switch (carrier) {
    case "think":
      return `<think>\n${reasoning}\n</think>\n\n${content}`;
    case "harmony":
      return `<|channel|>analysis<|message|>${reasoning}<|start|>assistant<|channel|>final<|message|>${content}`;
    case "gemma":
      return `<|channel>thought\n${reasoning}<channel|>${content}`;
    default:
      return content;
  }
}

/** The deltas that carry a turn's reasoning and answer, each text in `split` pieces. */
export function carriedDeltas(turn: Carried, split: (text: string) => string[]): Record<string, unknown>[] {
  const deltas: Record<string, unknown>[] = [];
  if (turn.carrier === "parts") {
    for (const piece of split(turn.reasoning)) deltas.push({ content: [{ type: "thinking", thinking: [{ type: "text", text: piece }] }] });
    for (const piece of split(turn.content)) deltas.push({ content: [{ type: "text", text: piece }] });
    return deltas;
  }
  if (turn.carrier === "field") {
    for (const piece of split(turn.reasoning)) deltas.push({ [turn.field]: piece });
    for (const piece of split(turn.content)) deltas.push({ content: piece });
    return deltas;
  }
  for (const piece of split(rawContent(turn))) deltas.push({ content: piece });
  return deltas;
}

/** The message fields that carry a turn's reasoning and answer in a reply that is not streamed. */
export function carriedMessage(turn: Carried, emptyContent: string | null): Record<string, unknown> {
  if (turn.carrier === "parts") {
    const parts: unknown[] = [];
    if (turn.reasoning !== "") parts.push({ type: "thinking", thinking: [{ type: "text", text: turn.reasoning }] });
    if (turn.content !== "") parts.push({ type: "text", text: turn.content });
    return { content: parts.length > 0 ? parts : emptyContent };
  }
  if (turn.carrier === "field") {
    return { content: turn.content === "" ? emptyContent : turn.content, ...(turn.reasoning !== "" ? { [turn.field]: turn.reasoning } : {}) };
  }
  const raw = rawContent(turn);
  return { content: raw === "" ? emptyContent : raw };
}

/** A call written the way Hermes and Qwen write one, for a turn whose calls sit inside its reasoning. */
export function callAsMarkup(name: string, args: string): string {
  let parsed: unknown = args;
  try {
    parsed = JSON.parse(args);
  } catch {
    // Kept as the text it is.
  }
  return `<tool_call>\n${JSON.stringify({ name, arguments: parsed })}\n</tool_call>`;
}
