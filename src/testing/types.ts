/**
 * @module testing/types
 * The shapes the loopback endpoint is driven with: scripted answers, the requests it records,
 * its options and the running server's handle.
 */
import type { PromptCounter, PromptUnits } from "./render.js";
import type { ProfileName, RefusalKind } from "./profile-types.js";
import type { RefusalConfig } from "./refusal-rules.js";
import type { TurnSpec } from "./turns.js";

/**
 * The broken replies the loopback endpoint can serve.
 *
 * - `htmlPage`: a 200 `text/html` page (a login wall, a proxy's block page) where the API was
 *   expected; after output, the page's markup written into the stream before it closes.
 * - `emptyStream`: a 200 event stream (or JSON body) that closes without a single event; after
 *   output, only keep-alive comments follow before the close.
 * - `cutStream`: a stream that closes cleanly with neither a finish reason nor `[DONE]`; not
 *   streamed, a JSON body cut off part way.
 * - `errorBesideChoice`: OpenRouter's upstream failure, an `error` object beside a choice whose
 *   `finish_reason` is `"error"`.
 * - `errorEmptyChoices`: a router's error chunk with `choices: []` (an upstream at capacity, 502).
 * - `errorNoChoices`: OpenAI's `{ error }` with no `choices`, a `server_error`.
 * - `rateLimitInStream`: OpenRouter's 429 sent inside the 200 stream.
 */
export type FaultShape = "htmlPage" | "emptyStream" | "cutStream" | "errorBesideChoice" | "errorEmptyChoices" | "errorNoChoices" | "rateLimitInStream";

/** Where in the reply the fault comes: before any output, after some answer text, or part way through a tool call's arguments. */
export type FaultPoint = "before" | "afterContent" | "inToolCall";

/** One SSE event to send: an object is sent as `data: <json>`, a string as written. */
export type ChunkSpec = Record<string, unknown> | string;

/** A streamed reply: each chunk in turn, optionally spaced out, then `data: [DONE]`. */
export interface StreamScript {
  kind: "stream";
  /** The chunks, in order. */
  chunks: ChunkSpec[];
  /** Milliseconds to wait before each chunk. @default 0 */
  delayMs?: number | undefined;
  /** Whether `data: [DONE]` ends the stream. @default true */
  done?: boolean | undefined;
  /** The turn the chunks were built from; set by `turn()` so the server rebuilds it per profile and request. */
  turn?: TurnSpec | undefined;
}

/** A reply that is not streamed: any JSON body with a status. */
export interface JsonScript {
  kind: "json";
  /** The HTTP status. @default 200 */
  status?: number | undefined;
  /** The body, sent as JSON (a string is sent as text). */
  body: unknown;
  /** Extra response headers. */
  headers?: Record<string, string> | undefined;
}

/** An error reply: a JSON object, or a raw string such as an HTML page. */
export interface ErrorScript {
  kind: "error";
  /** The HTTP status. */
  status: number;
  /** The body: an object is sent as JSON, a string as text (HTML where it starts with `<`). */
  body: unknown;
  /** Extra response headers, such as `retry-after`. */
  headers?: Record<string, string> | undefined;
  /** The refusal this error was built for, where `refusal()` built it. */
  refusal?: RefusalKind | undefined;
  /** Where the wording comes from, where `refusal()` built it. */
  source?: string | undefined;
}

/** A reply that sends its headers (and these chunks), then says nothing until the server closes. */
export interface StallScript {
  kind: "stall";
  /** Chunks sent before the silence. */
  afterChunks?: ChunkSpec[] | undefined;
  /** Say nothing at all, not even the headers. @default false */
  beforeHeaders?: boolean | undefined;
}

/** A reply whose socket is destroyed after these chunks. */
export interface DropScript {
  kind: "drop";
  /** Chunks sent before the socket is destroyed. */
  afterChunks?: ChunkSpec[] | undefined;
}

/**
 * A reply sent byte for byte as given: each part written on its own, in order, then the
 * response ends. For replaying a recorded stream exactly, cut wherever a test likes.
 */
export interface BytesScript {
  kind: "bytes";
  /** The body's pieces; each is written and flushed before the next. */
  parts: readonly (string | Uint8Array)[];
  /** The HTTP status. @default 200 */
  status?: number;
  /** The content type. @default "text/event-stream" */
  contentType?: string;
}

/** One scripted answer to a chat-completions request. */
export type Scripted = StreamScript | JsonScript | ErrorScript | StallScript | DropScript | BytesScript;

/** A request as the endpoint received it. */
export interface RecordedRequest {
  /** The HTTP method. */
  method: string;
  /** The path, without the query string. */
  path: string;
  /** The request headers, names lower-cased. */
  headers: Record<string, string | string[] | undefined>;
  /** The body parsed as JSON, or the raw string where it is not JSON (empty string for none). */
  body: unknown;
  /** When the request arrived, from the `now` option. */
  at: number;
  /** The refusal the endpoint answered it with on its own, if any. */
  refused?: RefusalKind | undefined;
  /** The prompt size the endpoint counted for a chat request, in the configured unit. */
  promptTokens?: number | undefined;
  /** The cached prefix the endpoint reported, where `prefixCache` is on and the request was not refused. */
  cachedTokens?: number | undefined;
  /**
   * The reasoning the family read back off the request's assistant turns, in order, from the
   * fields it reads (vLLM: `reasoning` only); absent for a family whose input fields are not known.
   */
  replayed?: string[] | undefined;
}

/** Options for `startEndpoint`. */
export interface EndpointOptions {
  /** The server family to imitate. @default "openai" */
  profile?: ProfileName | undefined;
  /** The `/v1/models` entries; each is merged over the profile's default entry for its id. @default [{ id: "loopback-model" }] */
  models?: Array<{ id: string } & Record<string, unknown>> | undefined;
  /** The served context window the listings and the overflow check use. @default 32768 */
  contextWindow?: number | undefined;
  /** llama.cpp's `/props` body; null answers 404. Defaults to the profile's. */
  props?: object | null | undefined;
  /** LM Studio's `/api/v0/models` body; null answers 404. Defaults to the profile's. */
  lmstudioModels?: object | null | undefined;
  /** List llama.cpp models with `meta: null`, as a router does while the model loads. @default false */
  listingWhileLoading?: boolean | undefined;
  /**
   * Answer this many chat requests with the family's "still loading" refusal first; until they
   * are answered, a llama.cpp endpoint answers every other route (`/health`, the listing,
   * `/props`) with it too, as llama-server does. @default 0
   */
  loading?: number | undefined;
  /**
   * The key the server was started with: a request without `Authorization: Bearer <key>` gets the
   * family's 401, except on the routes the family leaves open (llama.cpp: `/health` and the
   * listing). @default no key: every request is answered
   */
  apiKey?: string | undefined;
  /** What this server, or one model on it, refuses; answered with the profile's wording. */
  refuse?: RefusalConfig | undefined;
  /** How `usage.prompt_tokens` is counted. @default "chars4" */
  promptTokens?: PromptUnits | undefined;
  /**
   * Report `cached_tokens` as the prefix this request shares with the previous one the server
   * answered (a refused request leaves the cache as it was). @default false
   */
  prefixCache?: boolean | undefined;
  /**
   * Answer chat requests with a broken reply of this shape (see `fault`) before anything
   * scripted: at `point` (default `"before"`), streamed where the request streams unless
   * `streamed` says otherwise, for the first `times` requests (default every one).
   */
  fault?: { shape: FaultShape; point?: FaultPoint; streamed?: boolean; times?: number } | undefined;
  /** Answers a chat request when the script queue is empty; undefined falls through to the 500. */
  respond?: (request: RecordedRequest) => Scripted | undefined;
  /** Overrides for other routes, keyed by `"GET /v1/models"`-style method and path. */
  routes?: Record<string, Scripted | ((request: RecordedRequest) => Scripted)> | undefined;
  /** The clock requests are stamped with. @default Date.now */
  now?: (() => number) | undefined;
}

/** A running loopback endpoint. */
export interface EndpointServer {
  /** The OpenAI base URL, `http://127.0.0.1:<port>/v1`. */
  readonly baseUrl: string;
  /** The server's origin, `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** The profile being imitated. */
  readonly profile: ProfileName;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Queues answers for POST /v1/chat/completions, first in first out. */
  script(...responses: Scripted[]): void;
  /** How many scripted answers are still queued. */
  pending(): number;
  /** The bodies of the chat-completions requests, in order. */
  chatBodies(): Array<Record<string, unknown>>;
  /** The chat-completions requests, in order, with what the endpoint did about each. */
  chatRequests(): RecordedRequest[];
  /** The prompt counter the endpoint reports with. */
  readonly counter: PromptCounter;
  /** Closes the server and every socket still open; timers it set are cleared. */
  close(): Promise<void>;
}
