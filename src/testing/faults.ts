/**
 * @module testing/faults
 * Broken replies as real servers and routers send them, for the loopback endpoint to serve: a
 * page that is not the API, an empty stream, a stream cut before it finished, and errors inside
 * a 200 in each shape routers use, each at a chosen point of the reply (before any output, after
 * some content, inside a tool call), streamed or as one body. Each shape names the public page or
 * thread it was copied from in {@link FAULT_SOURCES}.
 */
import type { ChunkSpec, FaultPoint, FaultShape, JsonScript, Scripted, StreamScript } from "./types.js";

export type { FaultPoint, FaultShape } from "./types.js";

/** Every fault shape, in a stable order, for tests that walk them all. */
export const FAULT_SHAPES: readonly FaultShape[] = Object.freeze([
  "htmlPage",
  "emptyStream",
  "cutStream",
  "errorBesideChoice",
  "errorEmptyChoices",
  "errorNoChoices",
  "rateLimitInStream",
]);

/** Every fault point, in order. */
export const FAULT_POINTS: readonly FaultPoint[] = Object.freeze(["before", "afterContent", "inToolCall"]);

/** Where each fault shape was seen, quoted or described. */
export const FAULT_SOURCES: Readonly<Record<FaultShape, string>> = Object.freeze({
  htmlPage:
    "https://github.com/xtekky/gpt4free/issues/1049 (a streamed chat completion answered with a web app's index page) and https://github.com/acheong08/ChatGPT/issues/58 (a 'The request is blocked.' page)",
  emptyStream:
    "https://github.com/NousResearch/hermes-agent/pull/65738 ('Provider returned an empty stream with no finish_reason') and https://openrouter.ai/docs/api-reference/streaming (': OPENROUTER PROCESSING' keep-alive comments)",
  cutStream: "https://github.com/BerriAI/litellm/pull/39748 (a proxy's 200 stream that stops after two chunks with no error frame and no [DONE])",
  errorBesideChoice: "https://openrouter.ai/docs/api-reference/errors (Streaming Error Formats: mid-stream errors, and errors in a body that did not stream)",
  errorEmptyChoices:
    "https://github.com/diegosouzapw/OmniRoute/pull/8210 (OpenRouter: a chunk with empty choices and a top-level error, 'Worker local total request limit reached (33/32)', a 502)",
  errorNoChoices:
    "https://github.com/coder/aibridge fixtures/openai/chatcompletions/stream_error.txtar (OpenAI: content, then { error: { type: server_error } })",
  rateLimitInStream: "https://github.com/Aider-AI/aider/issues/3550 (OpenRouter: 'Rate limit exceeded: free-models-per-day', code 429, inside a 200 stream)",
});

const HTML_PAGE =
  "<!DOCTYPE html><html><head><title>Microsoft</title></head><body><div id='content'><div id='message'><h2>The request is blocked.</h2></div></div></body></html>";

const OPENROUTER_FAULT = { code: "server_error", message: "Provider disconnected unexpectedly" };
const CAPACITY_FAULT = { code: 502, message: "Worker local total request limit reached (33/32)" };
const OPENAI_FAULT = { message: "The server had an error while processing your request. Sorry about that!", type: "server_error" };
const RATE_FAULT = {
  message: "Rate limit exceeded: free-models-per-day",
  code: 429,
  metadata: { headers: { "X-RateLimit-Limit": "200", "X-RateLimit-Remaining": "0" }, provider_name: "Google AI Studio" },
};

/** The answer text a fault after content shows first. */
export const FAULT_CONTENT = "The answer so far";

/** The tool a fault inside a tool call had started calling. */
export const FAULT_TOOL = "lookup";

const ID = "chatcmpl-fault";

function piece(delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
  return { id: ID, object: "chat.completion.chunk", created: 1, model: "loopback-model", choices: [{ index: 0, delta, finish_reason: finish }] };
}

/** The chunks a reply had sent before the fault at `point`. */
function leadIn(point: FaultPoint): ChunkSpec[] {
  const open = piece({ role: "assistant", content: "" });
  if (point === "before") return [open];
  if (point === "afterContent") return [open, piece({ content: FAULT_CONTENT })];
  return [
    open,
    piece({ tool_calls: [{ index: 0, id: "call_fault", type: "function", function: { name: FAULT_TOOL, arguments: "" } }] }),
    piece({ tool_calls: [{ index: 0, function: { arguments: '{"city": "Par' } }] }),
  ];
}

/** The message a body that did not stream had got to by `point`. */
function messageAt(point: FaultPoint): Record<string, unknown> {
  if (point === "before") return { role: "assistant", content: "" };
  if (point === "afterContent") return { role: "assistant", content: FAULT_CONTENT };
  return { role: "assistant", content: null, tool_calls: [{ id: "call_fault", type: "function", function: { name: FAULT_TOOL, arguments: '{"city": "Par' } }] };
}

function streamed(point: FaultPoint, tail: ChunkSpec[]): StreamScript {
  return { kind: "stream", chunks: [...leadIn(point), ...tail], done: false };
}

function body(value: unknown): JsonScript {
  return { kind: "json", status: 200, body: value, headers: { "content-type": "application/json" } };
}

/** Options for {@link fault}. */
export interface FaultOptions {
  /** Serve the fault as an event stream; false serves one body, as a server that ignored `stream: true`. @default true */
  streamed?: boolean;
}

/**
 * Builds a broken reply of a shape at a point, as the loopback endpoint serves it.
 *
 * Streamed, the reply sends what it had got to by `point` (the opening chunk, some answer text,
 * or a tool call with half its arguments) and then the fault. As one body, the point is the
 * message the body had got to, beside the error where the shape has a choice to carry it.
 */
export function fault(shape: FaultShape, point: FaultPoint = "before", options: FaultOptions = {}): Scripted {
  const streaming = options.streamed !== false;
  switch (shape) {
    case "htmlPage":
      if (streaming && point !== "before") return streamed(point, [`${HTML_PAGE}\n`]);
      return { kind: "json", status: 200, body: HTML_PAGE };
    case "emptyStream":
      if (!streaming) return body("");
      if (point === "before") return { kind: "stream", chunks: [], done: false };
      return streamed(point, [": OPENROUTER PROCESSING\n\n"]);
    case "cutStream":
      if (streaming) return streamed(point, []);
      return body(JSON.stringify({ id: ID, object: "chat.completion", choices: [{ index: 0, message: messageAt(point) }] }).slice(0, 60));
    case "errorBesideChoice":
      if (streaming) {
        return streamed(point, [
          {
            id: ID,
            object: "chat.completion.chunk",
            created: 1,
            model: "loopback-model",
            provider: "openai",
            error: OPENROUTER_FAULT,
            choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
          },
        ]);
      }
      return body({
        id: ID,
        object: "chat.completion",
        model: "loopback-model",
        provider: "openai",
        error: OPENROUTER_FAULT,
        choices: [{ index: 0, message: messageAt(point), finish_reason: "error" }],
      });
    case "errorEmptyChoices":
      if (streaming)
        return streamed(point, [{ id: ID, object: "chat.completion.chunk", created: 1, model: "loopback-model", choices: [], error: CAPACITY_FAULT }]);
      return body({ id: ID, object: "chat.completion", model: "loopback-model", choices: [], error: CAPACITY_FAULT });
    case "errorNoChoices":
      if (streaming) return streamed(point, [{ error: OPENAI_FAULT }]);
      return body({ error: OPENAI_FAULT });
    case "rateLimitInStream":
      if (streaming) return streamed(point, [{ error: RATE_FAULT, user_id: "user_loopback" }]);
      return body({ error: RATE_FAULT, user_id: "user_loopback" });
  }
}
