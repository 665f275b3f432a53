/**
 * @module testing
 * `@cubicecho/agent-core/testing`: a loopback OpenAI-compatible server for testing an agent loop
 * without mocking anything — a real `node:http` server on 127.0.0.1 that answers chat
 * completions from a script, imitates one server family, and records every request it receives.
 *
 * - Families ({@link PROFILE_NAMES}): OpenAI, llama.cpp, vLLM, LM Studio, Ollama, OpenRouter and
 *   DeepSeek, each with its own model listing, window routes (`/props`, `/api/v0/models`), streaming
 *   habits and refusal wordings; every wording names the public source it was copied from.
 * - Scripted turns ({@link turn}): content, reasoning, tool calls, usage and finish reason,
 *   rebuilt per family and per request; `respond` answers what nothing scripted.
 * - Refusals and faults: `refuse` (fields, values, strict schemas, prefill, overflow),
 *   `loading` (the 503 of a server still loading its model), `apiKey` (the 401 of a server
 *   started with a key), {@link refusal} for any one
 *   refusal such as the 429, `stall` / `drop` scripts that go silent or cut the connection, and
 *   {@link fault} (or the `fault` option) for the broken replies real routers send: a page that
 *   is not the API, an empty or cut stream, an error inside a 200.
 * - Accounting: prompt counts in characters over four or o200k tokens (the optional peer
 *   `gpt-tokenizer`, loaded only when asked for), and with `prefixCache` the `cached_tokens` of
 *   each answer is the prefix its request shares with the one before.
 *
 * Node only; nothing here imports a test framework, so it backs any test runner.
 *
 * @example
 * const server = await startEndpoint({ profile: "llama.cpp" });
 * server.script(turn({ content: "hello" }));
 * const response = await fetch(`${server.baseUrl}/chat/completions`, {
 *   method: "POST",
 *   body: JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: "hi" }] }),
 * });
 * await server.close();
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { createPromptCounter } from "./testing/render.js";
import { profileNamed, refusalWording, type Profile, type ProfileName, type RefusalDetail, type RefusalKind } from "./testing/profiles.js";
import { findRefusal } from "./testing/refusal-rules.js";
import { buildCompletion, buildTurnChunks, foldChunks, type TurnSpec, type UsageCounts } from "./testing/turns.js";
import { formatChunk, includesUsage, modelOf, openStream, parseBody, readBody, sendBody, sendJson } from "./testing/http.js";
import { CONTINUATION_CONFLICT, continuationConflict, echoInChunks, echoInCompletion, prefillEcho } from "./testing/prefill.js";
import { isPlainRecord } from "./testing/guards.js";
import { replayedBy } from "./testing/replayed.js";
import { fault } from "./testing/faults.js";
import type { EndpointOptions, EndpointServer, ErrorScript, RecordedRequest, Scripted, StreamScript } from "./testing/types.js";

export type {
  ChunkSpec,
  BytesScript,
  DropScript,
  EndpointOptions,
  EndpointServer,
  ErrorScript,
  JsonScript,
  RecordedRequest,
  Scripted,
  StallScript,
  StreamScript,
} from "./testing/types.js";
export type { Profile, ProfileName, RefusalDetail, RefusalKind, RefusalWording, StreamStyle } from "./testing/profiles.js";
export type { RefusalConfig, RefusalRules } from "./testing/refusal-rules.js";
export type { TurnSpec, ToolCallSpec, UsageOverride } from "./testing/turns.js";
export type { ReasoningCarrier } from "./testing/turn-carriers.js";
export { PROFILE_NAMES, REFUSAL_KINDS, PROFILES, messageOf, refusalWording } from "./testing/profiles.js";
export { SAMPLE_ONLY_KINDS, WORDING_SAMPLES, type SampleOnlyKind, type WordingClass, type WordingSample } from "./testing/wording-samples.js";
export { formatChunk } from "./testing/http.js";
export {
  FAULT_CONTENT,
  FAULT_POINTS,
  FAULT_SHAPES,
  FAULT_SOURCES,
  FAULT_TOOL,
  fault,
  type FaultOptions,
  type FaultPoint,
  type FaultShape,
} from "./testing/faults.js";
export {
  countChars4,
  createPromptCounter,
  renderMessage,
  renderPieces,
  renderRequest,
  type PromptCounter,
  type PromptUnits,
  type RenderableRequest,
} from "./testing/render.js";

const CHAT_PATH = "/v1/chat/completions";
const DEFAULT_WINDOW = 32_768;

/**
 * Builds a streamed turn the way the serving family streams one.
 *
 * The chunks returned are the OpenAI family's; the endpoint rebuilds them for its own profile
 * and the request they answer (usage only where asked for or always sent, the prompt counted
 * from the request, reasoning in the family's field), and folds them into one
 * `chat.completion` object for a request that does not stream.
 */
export function turn(spec: TurnSpec = {}): StreamScript {
  const chunks = buildTurnChunks(profileNamed("openai"), spec, { model: "loopback-model", includeUsage: false, usage: defaultUsage() });
  return { kind: "stream", chunks, turn: spec };
}

/**
 * Builds the error a family answers a refusal with: its real status, body and source.
 *
 * A string detail is read as the field (or, for `reasoningEffort`, the refused value).
 */
export function refusal(profile: ProfileName, what: RefusalKind, detail?: RefusalDetail | string): ErrorScript | StreamScript {
  const family = profileNamed(profile);
  const wording = refusalWording(family, what);
  const filled = normaliseDetail(what, detail);
  const body = wording.body(filled);
  if (what === "overflowInStream") {
    return { kind: "stream", chunks: [{ error: errorPayload(body) }], done: false };
  }
  return { kind: "error", status: wording.status, body, refusal: what, source: wording.source };
}

function errorPayload(body: unknown): unknown {
  if (body && typeof body === "object" && "error" in body) return (body as { error: unknown }).error;
  return body;
}

function normaliseDetail(what: RefusalKind, detail: RefusalDetail | string | undefined): RefusalDetail & { model: string } {
  if (typeof detail === "string") {
    const asValue = what === "reasoningEffort" || what === "temperature" || what === "temperatureValue";
    return asValue ? { model: "loopback-model", value: detail } : { model: "loopback-model", field: detail };
  }
  return { model: "loopback-model", ...detail };
}

function defaultUsage(): UsageCounts {
  return { prompt: 0, cached: undefined };
}

/**
 * Starts a loopback endpoint on 127.0.0.1 at a free port.
 *
 * Chat requests are answered, in order of precedence, by the family's refusal where the request
 * carries something `refuse` names, by the next scripted answer, by `respond`, and otherwise by
 * a 500 saying no response was scripted.
 */
export async function startEndpoint(options: EndpointOptions = {}): Promise<EndpointServer> {
  const family = profileNamed(options.profile ?? "openai");
  const counter = await createPromptCounter(options.promptTokens ?? "chars4");
  const now = options.now ?? Date.now;
  const window = options.contextWindow ?? DEFAULT_WINDOW;
  const queue: Scripted[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  let loadingLeft = options.loading ?? 0;
  let faultsLeft = options.fault ? (options.fault.times ?? Number.POSITIVE_INFINITY) : 0;
  let previousChat: Record<string, unknown> | undefined;
  let closed = false;

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (closed) return resolve();
      const entry = {
        timer: setTimeout(() => {
          timers.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      timers.add(entry);
    });

  const server: Server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      if (!response.headersSent && !response.destroyed) {
        sendJson(response, 500, { error: { message: `loopback endpoint failed: ${String(error)}`, type: "server_error" } });
      } else {
        response.destroy();
      }
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const raw = await readBody(request);
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    const method = request.method ?? "GET";
    const recorded: RecordedRequest = { method, path, headers: { ...request.headers }, body: parseBody(raw), at: now() };
    requests.push(recorded);

    const override = options.routes?.[`${method} ${path}`];
    if (override) {
      await send(response, typeof override === "function" ? override(recorded) : override, recorded);
      return;
    }
    const chatting = method === "POST" && path === CHAT_PATH;
    // llama.cpp answers every route, /health included, with its loading refusal until the model is in.
    if (loadingLeft > 0 && family.loadingEveryRoute && !chatting) return answerRefusal(response, "loading", { model: "loopback-model" });
    if (options.apiKey !== undefined && !family.openRoutes.includes(`${method} ${path}`) && request.headers.authorization !== `Bearer ${options.apiKey}`) {
      return sendBody(response, family.unauthorized.status, family.unauthorized.body);
    }
    if (chatting) return chat(recorded, response);
    if (method === "GET" && path === "/health") {
      const body = family.health();
      if (body !== null) return sendJson(response, 200, body);
    }
    if (method === "GET" && path === "/v1/models") return listModels(response);
    if (method === "GET" && path === "/props") {
      const body = options.props !== undefined ? options.props : family.props(firstModelId(), window);
      if (body !== null) return sendJson(response, 200, body);
    }
    if (method === "GET" && path === "/api/ps" && family.loadedModels) return sendJson(response, 200, family.loadedModels(firstModelId(), window));
    if (method === "GET" && path === "/api/v0/models") {
      const body = options.lmstudioModels !== undefined ? options.lmstudioModels : family.lmstudioModels(firstModelId(), window);
      if (body !== null) return sendJson(response, 200, body);
    }
    const missing = family.notFound(method, path);
    sendBody(response, missing.status, missing.body);
  }

  function firstModelId(): string {
    return options.models?.[0]?.id ?? "loopback-model";
  }

  function listModels(response: ServerResponse): void {
    const entries = (options.models ?? [{ id: "loopback-model" }]).map((model) => {
      const base = family.modelEntry(model.id, window);
      if (options.listingWhileLoading && family.name === "llama.cpp") base.meta = null;
      return { ...base, ...model };
    });
    sendJson(response, 200, family.listing(entries));
  }

  async function chat(recorded: RecordedRequest, response: ServerResponse): Promise<void> {
    const body = isPlainRecord(recorded.body) ? recorded.body : {};
    const promptTokens = counter.countRequest(body);
    recorded.promptTokens = promptTokens;

    if (loadingLeft > 0) {
      loadingLeft -= 1;
      recorded.refused = "loading";
      return answerRefusal(response, "loading", { model: modelOf(body) });
    }
    const replayed = replayedBy(family, body);
    if (replayed) recorded.replayed = replayed;
    const checked = family.check?.(body);
    if (checked?.refusal) recorded.refused = checked.refusal;
    if (checked) return sendBody(response, checked.status, checked.body);
    const found = findRefusal(family, options.refuse, body, { promptTokens, window });
    if (found) {
      recorded.refused = found.kind;
      return answerRefusal(response, found.kind, { model: modelOf(body), ...found.detail });
    }
    if (continuationConflict(family.name, body)) return sendJson(response, CONTINUATION_CONFLICT.status, CONTINUATION_CONFLICT.body);
    // Only a request the model actually reads moves the cache: a refused one never reaches a slot.
    const cached = options.prefixCache ? (previousChat ? counter.countCommonPrefix(previousChat, body) : 0) : undefined;
    if (cached !== undefined) recorded.cachedTokens = cached;
    previousChat = body;
    if (options.fault && faultsLeft > 0) {
      faultsLeft -= 1;
      const { shape, point, streamed } = options.fault;
      return send(response, fault(shape, point, { streamed: streamed ?? body.stream === true }), recorded);
    }
    const scripted = queue.shift() ?? options.respond?.(recorded);
    if (!scripted) {
      sendJson(response, 500, {
        error: {
          message: `the loopback endpoint has no response scripted for request #${requests.length} (${CHAT_PATH})`,
          type: "server_error",
        },
      });
      return;
    }
    // Ollama cuts a longer prompt to the loaded window and answers 200 with the count it kept
    // (https://github.com/ollama/ollama/issues/7987: prompt_eval_count equals the context size).
    const reported = family.name === "ollama" ? Math.min(promptTokens, window) : promptTokens;
    await send(response, scripted, recorded, { prompt: reported, cached });
  }

  async function answerRefusal(response: ServerResponse, kind: RefusalKind, detail: RefusalDetail & { model: string }): Promise<void> {
    const wording = refusalWording(family, kind);
    const body = wording.body(detail);
    if (kind === "overflowInStream") {
      await stream(response, { kind: "stream", chunks: [{ error: errorPayload(body) }], done: false });
      return;
    }
    sendBody(response, wording.status, body);
  }

  async function send(response: ServerResponse, scripted: Scripted, recorded: RecordedRequest, usage?: UsageCounts): Promise<void> {
    const body = isPlainRecord(recorded.body) ? recorded.body : {};
    switch (scripted.kind) {
      case "json":
        sendBody(response, scripted.status ?? 200, scripted.body, scripted.headers);
        return;
      case "error":
        sendBody(response, scripted.status, scripted.body, scripted.headers);
        return;
      case "stall":
        if (scripted.beforeHeaders) return;
        openStream(response);
        for (const chunk of scripted.afterChunks ?? []) response.write(formatChunk(chunk));
        return;
      case "drop":
        openStream(response);
        for (const chunk of scripted.afterChunks ?? []) response.write(formatChunk(chunk));
        await new Promise<void>((resolve) => response.write("", () => resolve()));
        response.socket?.destroy();
        response.destroy();
        return;
      case "bytes":
        response.writeHead(scripted.status ?? 200, { "content-type": scripted.contentType ?? "text/event-stream", "cache-control": "no-cache" });
        response.flushHeaders();
        for (const part of scripted.parts) {
          if (closed || response.destroyed) return;
          // Each piece goes out in a write of its own, so the reader meets the cuts the test chose.
          await new Promise<void>((resolve) => response.write(part, () => resolve()));
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
        response.end();
        return;
      case "stream": {
        const wantsStream = body.stream === true;
        const counts = usage ?? { prompt: counter.countRequest(body), cached: undefined };
        const context = { model: modelOf(body), includeUsage: includesUsage(body), usage: counts };
        if (!wantsStream && recorded.path === CHAT_PATH) {
          const failed = scripted.turn ? undefined : scripted.chunks.find((chunk) => typeof chunk === "object" && "error" in chunk);
          if (failed && typeof failed === "object") {
            // An error a server would have sent inside a stream comes back as a plain error here.
            const payload = failed.error;
            const code = isPlainRecord(payload) && typeof payload.code === "number" && payload.code >= 400 ? payload.code : 400;
            sendJson(response, code, { error: payload });
            return;
          }
          const chunks = scripted.turn ? buildTurnChunks(family, scripted.turn, { ...context, includeUsage: true }) : scripted.chunks;
          const completion = scripted.turn ? buildCompletion(family, scripted.turn, context) : foldChunks(chunks, context.model);
          const echo = scripted.turn ? prefillEcho(family.name, body, false) : undefined;
          sendJson(response, 200, echo !== undefined ? echoInCompletion(completion, echo) : completion);
          return;
        }
        const echo = scripted.turn ? prefillEcho(family.name, body, true) : undefined;
        const built = scripted.turn ? buildTurnChunks(family, scripted.turn, { ...context, delayMs: scripted.delayMs }) : scripted.chunks;
        const chunks = echo !== undefined ? echoInChunks(built, echo) : built;
        await stream(response, { ...scripted, chunks });
        return;
      }
    }
  }

  async function stream(response: ServerResponse, scripted: StreamScript): Promise<void> {
    openStream(response);
    for (const chunk of scripted.chunks) {
      if (scripted.delayMs) await sleep(scripted.delayMs);
      if (closed || response.destroyed) return;
      response.write(formatChunk(chunk));
    }
    if (scripted.delayMs) await sleep(scripted.delayMs);
    if (closed || response.destroyed) return;
    if (scripted.done !== false) response.write("data: [DONE]\n\n");
    response.end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const origin = `http://127.0.0.1:${port}`;
  let closing: Promise<void> | undefined;

  return {
    baseUrl: `${origin}/v1`,
    origin,
    profile: family.name,
    requests,
    counter,
    script: (...responses) => {
      queue.push(...responses);
    },
    pending: () => queue.length,
    chatBodies: () => requests.filter((r) => r.method === "POST" && r.path === CHAT_PATH).map((r) => (isPlainRecord(r.body) ? r.body : {})),
    chatRequests: () => requests.filter((r) => r.method === "POST" && r.path === CHAT_PATH),
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        closed = true;
        for (const entry of timers) {
          clearTimeout(entry.timer);
          entry.resolve();
        }
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}

/** The profile object for a name, for tests that read a family's listing or wording directly. */
export function profileOf(name: ProfileName): Profile {
  return profileNamed(name);
}
