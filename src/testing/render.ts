/**
 * @module testing/render
 * A deterministic stand-in for a chat template, and the prompt counts the loopback endpoint
 * reports from it.
 *
 * A request renders as its tool block first, then each message on its own:
 * `<|tools|>` + the tools as JSON + `<|end|>`, then `<|role|>` + the message's text + its
 * tool calls as JSON + `<|end|>` per message. Each piece is counted alone and the counts are
 * summed, so a request that only appends messages to the one before it costs exactly the sum of
 * the appended messages' own counts more. Two units are offered:
 *
 * - `"chars4"`: the rendered request's length in UTF-16 code units over four, rounded up.
 * - `"o200k"`: tokens of the o200k_base encoding (gpt-tokenizer), loaded on first use.
 *
 * Tests import these to compute the counts they expect the endpoint to report.
 */

/** How `usage.prompt_tokens` is counted: characters over four, or o200k_base tokens. */
export type PromptUnits = "chars4" | "o200k";

/** The pieces of a request the rendering reads; anything else on the body is ignored. */
export interface RenderableRequest {
  /** The chat messages, in order. */
  messages?: unknown;
  /** The declared tools, rendered as one block ahead of the messages. */
  tools?: unknown;
}

/** Renders a message's content as text: a string as is, text parts joined, an image as a marker. */
export function renderContent(content: unknown): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    let text = "";
    for (const part of content) {
      if (part && typeof part === "object") {
        const typed = part as { type?: unknown; text?: unknown };
        if (typed.type === "text" && typeof typed.text === "string") text += typed.text;
        else if (typed.type === "image_url") text += "<|image|>";
        else text += JSON.stringify(part);
      } else if (typeof part === "string") {
        text += part;
      }
    }
    return text;
  }
  return JSON.stringify(content);
}

/** Renders one message alone: `<|role|>`, its text, its tool calls as JSON, then `<|end|>`. */
export function renderMessage(message: unknown): string {
  if (!message || typeof message !== "object") return `<|unknown|>${JSON.stringify(message) ?? ""}<|end|>`;
  const typed = message as { role?: unknown; content?: unknown; tool_calls?: unknown };
  const role = typeof typed.role === "string" ? typed.role : "unknown";
  const calls = Array.isArray(typed.tool_calls) && typed.tool_calls.length > 0 ? JSON.stringify(typed.tool_calls) : "";
  return `<|${role}|>${renderContent(typed.content)}${calls}<|end|>`;
}

/** Renders the tool block, or the empty string where the request declares no tools. */
export function renderTools(tools: unknown): string {
  if (!Array.isArray(tools) || tools.length === 0) return "";
  return `<|tools|>${JSON.stringify(tools)}<|end|>`;
}

/**
 * Renders a request as its pieces: the tool block (possibly empty) first, then one string per
 * message.
 *
 * Joining the pieces gives the whole rendered prompt.
 */
export function renderPieces(request: RenderableRequest): string[] {
  const messages = Array.isArray(request.messages) ? request.messages : [];
  return [renderTools(request.tools), ...messages.map(renderMessage)];
}

/** Renders a request as one string: the tool block followed by every message. */
export function renderRequest(request: RenderableRequest): string {
  return renderPieces(request).join("");
}

/** Counts a string in characters over four, rounded up: the default prompt unit. */
export function countChars4(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Measures how many leading characters two strings share. */
export function commonPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i += 1;
  return i;
}

/** Measures how many leading entries two token sequences share. */
export function commonTokenPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i += 1;
  return i;
}

/** Encodes text as tokens; the o200k counter's only dependency. */
export type Encoder = (text: string) => number[];

/**
 * Counts a request's prompt, and what it shares with an earlier one, in one unit.
 *
 * Build one with `createPromptCounter`; it is synchronous once built.
 */
export interface PromptCounter {
  /** The unit this counter counts in. */
  readonly units: PromptUnits;
  /** Counts one rendered piece (the tool block or one message) alone. */
  countPiece(piece: string): number;
  /** Counts a whole request: the sum of its pieces' counts. */
  countRequest(request: RenderableRequest): number;
  /** Counts one message as it would be rendered inside a request. */
  countMessage(message: unknown): number;
  /** Counts the longest prefix two requests' renderings share, in this counter's unit. */
  countCommonPrefix(previous: RenderableRequest, next: RenderableRequest): number;
}

function chars4Counter(): PromptCounter {
  return {
    units: "chars4",
    countPiece: countChars4,
    countRequest: (request) => countChars4(renderRequest(request)),
    countMessage: (message) => countChars4(renderMessage(message)),
    countCommonPrefix: (previous, next) => Math.floor(commonPrefixLength(renderRequest(previous), renderRequest(next)) / 4),
  };
}

function tokenCounter(encode: Encoder): PromptCounter {
  const tokensOf = (request: RenderableRequest): number[] => renderPieces(request).flatMap((piece) => encode(piece));
  return {
    units: "o200k",
    countPiece: (piece) => encode(piece).length,
    countRequest: (request) => renderPieces(request).reduce((sum, piece) => sum + encode(piece).length, 0),
    countMessage: (message) => encode(renderMessage(message)).length,
    countCommonPrefix: (previous, next) => commonTokenPrefix(tokensOf(previous), tokensOf(next)),
  };
}

/**
 * Builds a prompt counter for a unit, loading the o200k_base encoding on first use.
 *
 * Text that looks like a special token is counted as plain text rather than refused, so any
 * request body can be counted.
 */
export async function createPromptCounter(units: PromptUnits = "chars4"): Promise<PromptCounter> {
  if (units === "chars4") return chars4Counter();
  const { encode } = await import("gpt-tokenizer/encoding/o200k_base");
  const plain = { disallowedSpecial: new Set<string>() };
  return tokenCounter((text) => encode(text, plain));
}
