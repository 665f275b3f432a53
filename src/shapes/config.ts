/**
 * @module config
 * The structural shapes every function here asks for.
 *
 * Nothing in this package imports a consumer's configuration type. Each function asks for the
 * narrowest of these shapes it reads, and a settings row, a resolved agent document or a
 * zod-inferred object satisfies it structurally.
 */

/** Where requests go and how long to wait for them: the part of a config that names a server. */
export interface Endpoint {
  /** The OpenAI-compatible base URL, for example `http://127.0.0.1:8080/v1`. */
  baseUrl: string;
  /** The key sent as a bearer token; absent and empty are the same endpoint (no key). */
  apiKey?: string | undefined;
  /**
   * How long a call that does not stream may take, in seconds, and how long a stream may stay
   * silent between chunks; zero or absent waits forever.
   *
   * Setting it also sets the first-chunk allowance (five times this, unless firstTokenSeconds is
   * given), and that allowance runs from the moment the request is sent: time the request waits
   * in the server's queue for a free slot, and the prompt's prefill, count against it. A server
   * that has sent its response headers is not taken as working on the request, since servers and
   * proxies send them before a slot is free. On a busy server with few slots, give
   * firstTokenSeconds room for the queue, or a silent wait ends in a re-send that joins the back
   * of the same queue.
   */
  requestTimeoutSeconds?: number | undefined;
  /**
   * How long the first streamed chunk may take, in seconds, counted from the moment the request is
   * sent (queueing inside the server included); defaults to five times requestTimeoutSeconds.
   */
  firstTokenSeconds?: number | undefined;
  /** Extra headers sent with every request to this endpoint. */
  headers?: Record<string, string> | undefined;
}

/** A reasoning effort a host may ask for; `"off"` and an absent value send none. */
export type ReasoningEffort = "off" | "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | (string & {});

/** The model and its sampling settings. */
export interface ModelParams {
  /** The model name as the endpoint knows it. */
  model: string;
  /** Sampling temperature; absent leaves it to the server. */
  temperature?: number | undefined;
  /** The reply ceiling; zero or absent sends none. */
  maxTokens?: number | undefined;
  /** The reasoning effort to ask for; absent or `"off"` sends none. */
  reasoningEffort?: ReasoningEffort | undefined;
  /** Fields merged last into every request body (top_k, min_p, id_slot …). */
  extraBody?: Record<string, unknown> | undefined;
}

/** How a run may use tools. */
export interface ToolPolicy {
  /**
   * The most tool-calling steps a run may take before it stops, a whole number of at least one.
   * @default 20 (DEFAULT_MAX_TOOL_ITERATIONS, as a resolved agent document has it)
   */
  maxToolIterations?: number | undefined;
  /** Declare every tool (`eager`), load them on demand (`ondemand`) or behind a fixed proxy (`proxy`). */
  toolDiscovery?: "eager" | "ondemand" | "proxy" | undefined;
  /** The small model that preselects a run's tools; empty means no preselection. */
  toolSelectModel?: string | undefined;
  /**
   * Whether a server that refuses tools as such gets them described in the system prompt, with
   * calls read back from the reply's text; false lets that refusal end the run.
   * @default true
   */
  toolsInPrompt?: boolean | undefined;
}

/** How hard to try before a failure is the caller's. */
export interface RetryPolicy {
  /** Re-sends allowed for a transient failure before anything was produced. */
  maxRetries?: number | undefined;
  /** How long to wait for a server that is still loading the model, in seconds; 0 waits not at all, absent waits two minutes. */
  loadingTimeoutSeconds?: number | undefined;
}

/** The context window the operator states for a model, in tokens. */
export interface WindowPolicy {
  /** The operator's own window; it wins over anything a server reports. */
  contextLength?: number | undefined;
}

/** A text part of a message's content. */
export interface TextPart {
  type: "text";
  text: string;
}

/** An image part of a user message, the only way an image reaches an OpenAI-compatible server. */
export interface ImagePart {
  type: "image_url";
  image_url: { url: string; detail?: "auto" | "low" | "high" };
}

/** One part of a user message's content. */
export type ContentPart = TextPart | ImagePart;

/** A system or developer message. */
export interface SystemMessage {
  role: "system" | "developer";
  content: string | TextPart[];
  name?: string | undefined;
}

/** A user message: text, or parts that may carry images. */
export interface UserMessage {
  role: "user";
  content: string | ContentPart[];
  name?: string | undefined;
}

/** A tool call as an assistant message carries it on the wire. */
export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
  /**
   * A field the server put on the call that the library does not read (Gemini's `extra_content`),
   * kept as received and sent back with the call to the model that wrote it.
   */
  [providerField: string]: unknown;
}

/** The endpoint and model whose turn put provider fields on an assistant message. */
export interface FieldsOrigin {
  /** The endpoint's base URL as the run was configured with it. */
  baseUrl: string;
  /** The model's name as the endpoint knows it. */
  model: string;
  /** The message-level fields that came from the server, by name. */
  fields: string[];
}

/** An assistant message, possibly ending in tool calls. */
export interface AssistantMessage {
  role: "assistant";
  content?: string | TextPart[] | null | undefined;
  tool_calls?: ToolCall[] | undefined;
  /** The scratchpad behind a tool call, for the model families that read it back. */
  reasoning_content?: string | undefined;
  /** The same scratchpad under the name vLLM and Groq read it by, as a request body sends it there. */
  reasoning?: string | undefined;
  name?: string | undefined;
  /**
   * Where this message's provider fields came from: they go back only to the same endpoint and
   * model, and are left out of a request to any other. Never sent itself.
   */
  fieldsOrigin?: FieldsOrigin | undefined;
  /** A field the server put on the message that the library does not read (OpenRouter's `reasoning_details`), kept as received. */
  [providerField: string]: unknown;
}

/** A tool's answer to one call. */
export interface ToolMessage {
  role: "tool";
  tool_call_id: string;
  content: string | TextPart[];
}

/** One message of a chat transcript. */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** A JSON Schema: an object, or the boolean schemas `true` and `false`. */
export type JsonSchema = boolean | { [keyword: string]: unknown };

/** A tool as a request declares it. */
export interface ToolDefinition {
  type: "function";
  function: {
    name: string;
    description?: string | undefined;
    parameters?: JsonSchema | undefined;
    strict?: boolean | undefined;
  };
}

/** The finish reasons a server sends, as constants. */
export const FinishReason = {
  Stop: "stop",
  Length: "length",
  ToolCalls: "tool_calls",
  ContentFilter: "content_filter",
  FunctionCall: "function_call",
} as const;

/** A finish reason a server sent; other strings pass through unchanged. */
export type FinishReason = (typeof FinishReason)[keyof typeof FinishReason] | (string & {});

/** What one turn cost, as the endpoint reported it. */
export interface TurnUsage {
  /** Prompt tokens; zero where the server sent nothing. */
  prompt: number;
  /** Completion tokens; zero where the server sent nothing. */
  completion: number;
  /** Total tokens; zero where the server sent nothing. */
  total: number;
  /** Prompt tokens served from the cache; zero where the server sent nothing. */
  cached: number;
  /** The prompt less cached, present only where a cache count was reported. */
  uncached?: number | undefined;
  /** completion_tokens_details.reasoning_tokens, present only where reported. */
  reasoningTokens?: number | undefined;
}

/** llama.cpp's per-request timings, kept on a turn for run metrics. */
export interface TurnTimings {
  /** Prompt tokens evaluated (not from cache). */
  promptN?: number | undefined;
  /** Milliseconds spent evaluating the prompt (prefill). */
  promptMs?: number | undefined;
  /** Tokens generated. */
  predictedN?: number | undefined;
  /** Milliseconds spent generating (decode). */
  predictedMs?: number | undefined;
  /** Prompt tokens reused from the slot's cache. */
  cacheN?: number | undefined;
  /** Draft tokens proposed by speculative decoding. */
  draftN?: number | undefined;
  /** Draft tokens accepted. */
  draftAcceptedN?: number | undefined;
}

/** One turn read back from an endpoint. */
export interface Turn {
  /** The answer text, with fenced reasoning taken out. */
  content: string;
  /** The tool calls the model made, reassembled. */
  toolCalls: ToolCall[];
  /** What the turn cost. */
  usage: TurnUsage;
  /** The finish reason the server sent; "" where it never said. */
  finishReason: FinishReason;
  /** The scratchpad, from a reasoning field or a fence. */
  reasoning: string;
  /** llama.cpp's timings, where the server sent them. */
  timings?: TurnTimings | undefined;
  /** Milliseconds from the request to the first chunk that carried something. */
  firstTokenMs?: number | undefined;
  /** Milliseconds from the request to the end of the stream. */
  durationMs?: number | undefined;
  /** Extra requests a continuation spent on this turn. */
  continuations?: number | undefined;
  /**
   * Fields the server put on the assistant message that the library does not read
   * (`reasoning_details`), as received; absent where there were none.
   */
  messageFields?: Record<string, unknown> | undefined;
}

/** A side task's settings as an agent document states them; absent fields take the task's own default. */
export interface ResolvedTask {
  /** The side task's model; absent uses the host's choice. */
  model?: string | undefined;
  /** The side task's base URL; absent is the agent's endpoint. */
  baseUrl?: string | undefined;
  /** The side task's own key; resolution never fills it in. */
  apiKey?: string | undefined;
  /** The reply ceiling; 0 sends none. */
  maxTokens?: number | undefined;
  /** Sampling temperature. */
  temperature?: number | undefined;
  /** A reasoning effort level; absent or "off" sends the no-thinking hints. */
  reasoningEffort?: ReasoningEffort | undefined;
  /** Fields merged into the side task's request body. */
  extraBody?: Record<string, unknown> | undefined;
}
