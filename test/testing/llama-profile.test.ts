/**
 * The simulated llama.cpp profile held to what a real llama-server answered, field by field: the
 * recordings in test/fixtures/llama.cpp/ (scripts/record-llama.ts, `npm run record:llama`) are
 * replayed against the loopback endpoint and the two answers compared for field names, shapes,
 * status codes, wordings and the headers a client reads. Timings, ids, token counts and the
 * model's words differ on every run and are compared by type (ids by form) only.
 */
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PROFILES, refusalWording, startEndpoint, turn, type EndpointOptions, type EndpointServer } from "../support/endpoint.js";

const folder = resolve(import.meta.dirname, "../fixtures/llama.cpp");

interface Exchange {
  request: { method: string; path: string; headers?: Record<string, string>; body?: unknown };
  response: { status: number; headers: Record<string, string>; body?: unknown; events?: unknown[] };
  slot?: { grammar: string | null };
}

interface Recording {
  about: string;
  recorded: { build_info: string; source: string; version: string; flags: string[] };
  exchanges: Record<string, Exchange>;
}

function recording(name: string): Recording {
  return JSON.parse(readFileSync(resolve(folder, `${name}.json`), "utf8")) as Recording;
}

const servers: EndpointServer[] = [];

async function start(options: EndpointOptions = {}): Promise<EndpointServer> {
  const server = await startEndpoint({ profile: "llama.cpp", models: [{ id: "tiny.gguf" }], contextWindow: 2048, ...options });
  servers.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** Replays a recorded request against the loopback endpoint and reads its answer the way the recorder did. */
async function replay(server: EndpointServer, request: Exchange["request"]): Promise<Exchange["response"]> {
  const response = await fetch(`${server.origin}${request.path}`, {
    method: request.method,
    headers: { ...(request.body === undefined ? {} : { "content-type": "application/json" }), ...request.headers },
    ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
  });
  const text = await response.text();
  const headers = { "content-type": response.headers.get("content-type") ?? "" };
  if (headers["content-type"].includes("text/event-stream")) {
    const events = text
      .split("\n\n")
      .filter((block) => block.startsWith("data: "))
      .map((block) => (block.slice(6) === "[DONE]" ? "[DONE]" : (JSON.parse(block.slice(6)) as unknown)));
    return { status: response.status, headers, events };
  }
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: compared as the text.
  }
  return { status: response.status, headers, body };
}

function kind(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
}

/** What a client may rely on: values compared exactly rather than by type, by the last name of their path. */
const EXACT = new Set(["object", "owned_by", "type", "role", "message", "code", "status", "index", "content-type"]);

/** Where a value is compared by form, not by value: ids. */
const FORMS: Record<string, RegExp> = { id: /^(?:chatcmpl-)?[A-Za-z0-9]{32}$/ };

/**
 * Lists every difference between a simulated answer and a recorded one: a field one has and the
 * other lacks, a value of another type, an exact value that differs, an id of another form.
 * Arrays are compared element by element up to the shorter one; `loose` names paths whose
 * content is not compared (a sampling parameter list, a chat template).
 */
function differences(simulated: unknown, recorded: unknown, path = "", loose: readonly string[] = []): string[] {
  const here = path || "(body)";
  if (loose.includes(path)) return kind(simulated) === kind(recorded) ? [] : [`${here}: ${kind(recorded)} recorded, ${kind(simulated)} simulated`];
  if (kind(simulated) !== kind(recorded)) return [`${here}: ${kind(recorded)} recorded, ${kind(simulated)} simulated`];
  const name =
    path
      .split(".")
      .pop()
      ?.replace(/\[\d+\]$/, "") ?? "";
  if (Array.isArray(recorded) && Array.isArray(simulated)) {
    const out: string[] = [];
    for (let index = 0; index < Math.min(recorded.length, simulated.length); index += 1)
      out.push(...differences(simulated[index], recorded[index], `${path}[${index}]`, loose));
    if ((recorded.length === 0) !== (simulated.length === 0)) out.push(`${here}: ${recorded.length} recorded, ${simulated.length} simulated`);
    return out;
  }
  if (kind(recorded) === "object") {
    const sim = simulated as Record<string, unknown>;
    const rec = recorded as Record<string, unknown>;
    const out: string[] = [];
    for (const key of Object.keys(rec)) if (!(key in sim)) out.push(`${path ? `${path}.` : ""}${key}: recorded, not simulated`);
    for (const key of Object.keys(sim)) if (!(key in rec)) out.push(`${path ? `${path}.` : ""}${key}: simulated, not recorded`);
    for (const key of Object.keys(rec)) if (key in sim) out.push(...differences(sim[key], rec[key], path ? `${path}.${key}` : key, loose));
    return out;
  }
  const form = FORMS[name];
  if (form && typeof simulated === "string" && typeof recorded === "string") {
    return form.test(recorded) === form.test(simulated)
      ? []
      : [`${here}: ${JSON.stringify(recorded)} recorded, ${JSON.stringify(simulated)} simulated, not of the same form`];
  }
  if (EXACT.has(name) && simulated !== recorded) return [`${here}: ${JSON.stringify(recorded)} recorded, ${JSON.stringify(simulated)} simulated`];
  return [];
}

/** Compares two whole answers: status, the content type, and the body or each kind of stream event. */
function answerDifferences(simulated: Exchange["response"], recorded: Exchange["response"], loose: readonly string[] = []): string[] {
  const out: string[] = [];
  if (simulated.status !== recorded.status) out.push(`status: ${recorded.status} recorded, ${simulated.status} simulated`);
  out.push(...differences(simulated.headers["content-type"], recorded.headers["content-type"], "content-type"));
  if (recorded.events || simulated.events) out.push(...streamDifferences(simulated.events ?? [], recorded.events ?? []));
  else out.push(...differences(simulated.body, recorded.body, "", loose));
  return out;
}

/** Names a stream event by what it carries. */
function eventKind(event: unknown): string {
  if (event === "[DONE]") return "done";
  const record = event as { choices?: Array<{ delta?: Record<string, unknown>; finish_reason?: unknown }>; usage?: unknown; error?: unknown };
  if (record.error !== undefined) return "error";
  const choice = record.choices?.[0];
  if (!choice) return record.usage ? "usage" : "other";
  const delta = choice.delta ?? {};
  if (choice.finish_reason) return "finish";
  if ("role" in delta) return "role";
  const calls = delta.tool_calls as Array<{ id?: unknown }> | undefined;
  if (calls) return calls[0]?.id ? "call opened" : "call arguments";
  if ("reasoning_content" in delta) return "reasoning";
  if ("content" in delta) return "content";
  return "other";
}

/** Compares two streams: the first event of each kind, and what opens and ends them. */
function streamDifferences(simulated: unknown[], recorded: unknown[]): string[] {
  const out: string[] = [];
  const firstOf = (events: unknown[]) => {
    const found = new Map<string, unknown>();
    for (const event of events) if (!found.has(eventKind(event))) found.set(eventKind(event), event);
    return found;
  };
  const sim = firstOf(simulated);
  const rec = firstOf(recorded);
  for (const [name, event] of rec) {
    if (!sim.has(name)) out.push(`stream: a ${name} event recorded, none simulated`);
    else out.push(...differences(sim.get(name), event, name));
  }
  for (const name of sim.keys()) if (!rec.has(name)) out.push(`stream: a ${name} event simulated, none recorded`);
  const ends = (events: unknown[]) => [eventKind(events[0]), ...events.slice(-2).map(eventKind)].join(" … ");
  if (ends(simulated) !== ends(recorded)) out.push(`stream: ${ends(recorded)} recorded, ${ends(simulated)} simulated`);
  return out;
}

/**
 * Scripts the turn a recorded answer was: content, a scratchpad and tool calls where it had them,
 * and its finish reason, so the simulated answer has the same kinds of events to compare.
 */
function scriptLike(recorded: Exchange["response"]): ReturnType<typeof turn> {
  const choices = [...(recorded.events ?? []), recorded.body].flatMap(
    (event) => ((event as { choices?: unknown[] } | undefined)?.choices ?? []) as Array<Record<string, any>>,
  );
  const kinds = new Set((recorded.events ?? []).map(eventKind));
  const message = choices.find((choice) => choice.message)?.message as Record<string, unknown> | undefined;
  const finish = choices.map((choice) => choice.finish_reason).find((reason) => typeof reason === "string") as string | undefined;
  const calls = recorded.events
    ? recorded.events.filter((event) => eventKind(event) === "call opened").length
    : ((message?.tool_calls as unknown[] | undefined)?.length ?? 0);
  const content = kinds.has("content") || (typeof message?.content === "string" && message.content !== "");
  const reasoning = kinds.has("reasoning") || typeof message?.reasoning_content === "string";
  return turn({
    ...(content ? { content: "thought as lean" } : {}),
    ...(reasoning ? { reasoning: "Hidden thought" } : {}),
    ...(calls > 0 ? { toolCalls: Array.from({ length: calls }, (_, index) => ({ name: "record_word", arguments: { word: `w${index}` } })) } : {}),
    ...(finish ? { finishReason: finish } : {}),
  });
}

describe("the recordings", () => {
  it("each name the llama.cpp build and the flags they came from", () => {
    const files = readdirSync(folder).filter((file) => file.endsWith(".json"));
    expect(files.length).toBeGreaterThanOrEqual(12);
    for (const file of files) {
      const { recorded, exchanges } = recording(file.replace(/\.json$/, ""));
      expect(recorded.source, file).toBe("llama.cpp source of July 2026 (ggml 0.15.3)");
      expect(recorded.build_info, file).toBe("b0-unknown");
      expect(recorded.flags.length, file).toBeGreaterThan(0);
      expect(Object.keys(exchanges).length, file).toBeGreaterThan(0);
    }
  });
});

describe("the llama.cpp profile against a real llama-server", () => {
  it("lists its models, answers /health and a missing route as llama-server does", async () => {
    const server = await start();
    for (const exchange of Object.values(recording("listing").exchanges)) {
      expect(answerDifferences(await replay(server, exchange.request), exchange.response), exchange.request.path).toEqual([]);
    }
  });

  it("answers /props with the fields llama-server sends, n_ctx the served window", async () => {
    const server = await start();
    const { props } = recording("props").exchanges;
    const answer = await replay(server, props!.request);
    expect(answerDifferences(answer, props!.response, ["default_generation_settings.params", "chat_template_caps", "modalities"])).toEqual([]);
    expect((answer.body as { default_generation_settings: { n_ctx: number } }).default_generation_settings.n_ctx).toBe(2048);
  });

  it("answers every route, /health included, with the loading refusal while the model loads", async () => {
    const server = await start({ loading: 1 });
    const { exchanges } = recording("loading");
    expect(Object.keys(exchanges).sort()).toEqual(["GET /health", "GET /props", "GET /v1/models", "POST /v1/chat/completions"]);
    // The chat request goes last: it is the one that ends the simulated loading.
    for (const route of ["GET /health", "GET /v1/models", "GET /props", "POST /v1/chat/completions"]) {
      const exchange = exchanges[route]!;
      expect(answerDifferences(await replay(server, exchange.request), exchange.response), route).toEqual([]);
    }
  });

  it("streams a turn with usage and without, and answers one that does not stream, in llama-server's shapes", async () => {
    const server = await start();
    const { exchanges } = recording("stream");
    for (const name of ["withUsage", "withoutUsage", "notStreamed"]) {
      const exchange = exchanges[name]!;
      server.script(scriptLike(exchange.response));
      expect(answerDifferences(await replay(server, exchange.request), exchange.response), name).toEqual([]);
    }
  });

  it("streams tool calls as llama-server does: 32-character ids, the opening brace in the first delta", async () => {
    const server = await start();
    const { streamed, notStreamed } = recording("tool-calls").exchanges;
    for (const exchange of [streamed!, notStreamed!]) {
      server.script(scriptLike(exchange.response));
      expect(answerDifferences(await replay(server, exchange.request), exchange.response)).toEqual([]);
    }
    const opened = streamed!.response.events!.find((event) => eventKind(event) === "call opened") as {
      choices: Array<{ delta: { tool_calls: Array<{ function: { arguments: string } }> } }>;
    };
    expect(opened.choices[0]!.delta.tool_calls[0]!.function.arguments).toBe("{");
  });

  it("takes an object tool_choice and parallel_tool_calls false and enforces neither, as llama-server's grammar shows", async () => {
    const { exchanges } = recording("grammar");
    const rules = (name: string) => (exchanges[name]?.slot?.grammar ?? "").replace(/until-\d+/g, "until");
    // An object tool_choice gets the grammar "auto" does; parallel_tool_calls false still lets one
    // <tool_call> block follow another (it only stops several calls sharing one block).
    expect(rules("objectChoice")).toBe(rules("autoChoice"));
    expect(rules("requiredNotParallel")).toContain("tool-calls ::= (tool-call space)+");
    expect(rules("requiredNotParallel")).not.toBe(rules("required"));
    const server = await start();
    server.script(
      turn({
        toolCalls: [
          { name: "record_word", arguments: { word: "a" } },
          { name: "record_word", arguments: { word: "b" } },
        ],
      }),
      turn({ content: "no call" }),
    );
    const both = await replay(server, exchanges.requiredNotParallel!.request);
    expect(both.status).toBe(200);
    expect((both.body as { choices: Array<{ message: { tool_calls: unknown[] } }> }).choices[0]!.message.tool_calls).toHaveLength(2);
    expect((await replay(server, exchanges.objectChoice!.request)).status).toBe(200);
  });

  it("refuses an unknown tool_choice and both continuation flags with llama-server's words", async () => {
    const server = await start();
    const { unknownToolChoice, bothContinuationFlags } = recording("refusals").exchanges;
    for (const exchange of [unknownToolChoice!, bothContinuationFlags!]) {
      const answer = await replay(server, exchange.request);
      expect(answerDifferences(answer, exchange.response)).toEqual([]);
      expect(answer.body).toEqual(exchange.response.body);
    }
  });

  it("words a schema the converter cannot take as llama-server does", () => {
    const { exchanges } = recording("refusals");
    const recorded = exchanges.unknownType!.response;
    const wording = refusalWording(PROFILES["llama.cpp"], "schemaGrammar");
    expect(wording.status).toBe(recorded.status);
    expect(wording.body({ model: "tiny.gguf", value: '{"type":"foo"}' })).toEqual(recorded.body);
    // Every converter refusal carries the same lead-in before the converter's own words.
    const lead = "Unable to generate parser for this template. Automatic parser generation failed: JSON schema conversion failed:\n";
    for (const name of ["unanchoredPattern", "unresolvedRef", "toolPattern"])
      expect((exchanges[name]!.response.body as { error: { message: string } }).error.message.startsWith(lead), name).toBe(true);
  });

  it("refuses a prompt past the window with llama-server's body, streamed or not", async () => {
    const server = await start({ contextWindow: 512, refuse: { contextOverflow: true } });
    for (const exchange of Object.values(recording("overflow").exchanges)) {
      const answer = await replay(server, exchange.request);
      // The simulated prompt is counted in characters over four, not llama's tokens: the sentence is compared with the recorded counts below.
      expect(answerDifferences(answer, exchange.response, ["error.message"])).toEqual([]);
      const { error } = exchange.response.body as { error: { n_prompt_tokens: number; n_ctx: number } };
      const worded = refusalWording(PROFILES["llama.cpp"], "contextOverflow").body({
        model: "tiny.gguf",
        promptTokens: error.n_prompt_tokens,
        window: error.n_ctx,
      });
      expect(worded).toEqual(exchange.response.body);
    }
  });

  it("answers a server started with a key as llama-server does: /health and the listing open, the rest 401", async () => {
    const server = await start({ apiKey: "K" });
    server.script(turn({ content: "ok" }));
    for (const [name, exchange] of Object.entries(recording("auth").exchanges)) {
      const answer = await replay(server, exchange.request);
      expect(answerDifferences(answer, exchange.response, ["default_generation_settings.params", "chat_template_caps", "modalities"]), name).toEqual([]);
      if (exchange.response.status === 401) expect(answer.body, name).toEqual(exchange.response.body);
    }
  });

  it("refuses tools with llama-server's words when it runs without its chat templates", async () => {
    const server = await start({ refuse: { tools: true } });
    const { tools } = recording("no-jinja").exchanges;
    const answer = await replay(server, tools!.request);
    expect(answerDifferences(answer, tools!.response)).toEqual([]);
    expect(answer.body).toEqual(tools!.response.body);
  });

  it("takes a prefill, and one carried on with continue_final_message, with a thinking template too", async () => {
    const server = await start();
    const prefill = recording("prefill").exchanges;
    const reasoning = recording("reasoning").exchanges;
    for (const exchange of [prefill.notStreamed!, prefill.continued!, reasoning.deepseekPrefill!]) {
      expect(exchange.response.status).toBe(200);
      server.script(turn({ content: " three" }));
      expect((await replay(server, exchange.request)).status).toBe(200);
    }
  });

  it("streams the scratchpad in reasoning_content, as llama-server does under --reasoning-format deepseek", async () => {
    const server = await start();
    const { deepseekStreamed } = recording("reasoning").exchanges;
    expect(deepseekStreamed!.response.events!.some((event) => eventKind(event) === "reasoning")).toBe(true);
    server.script(scriptLike(deepseekStreamed!.response));
    expect(answerDifferences(await replay(server, deepseekStreamed!.request), deepseekStreamed!.response)).toEqual([]);
  });
});

describe("the comparison", () => {
  it("reports a recorded field that is changed, renamed, retyped or given another status", async () => {
    const server = await start();
    const listing = recording("listing").exchanges.listing!;
    const answer = await replay(server, listing.request);
    const mutate = (change: (copy: Exchange["response"] & { body: any }) => void): string[] => {
      const copy = structuredClone(listing.response) as Exchange["response"] & { body: any };
      change(copy);
      return answerDifferences(answer, copy);
    };
    expect(mutate(() => undefined)).toEqual([]);
    expect(mutate((copy) => (copy.body.data[0].owned_by = "llama.cpp"))).toEqual(['data[0].owned_by: "llama.cpp" recorded, "llamacpp" simulated']);
    expect(
      mutate((copy) => {
        copy.body.data[0].meta.n_ctx_served = copy.body.data[0].meta.n_ctx;
        delete copy.body.data[0].meta.n_ctx;
      }),
    ).toEqual(["data[0].meta.n_ctx_served: recorded, not simulated", "data[0].meta.n_ctx: simulated, not recorded"]);
    expect(mutate((copy) => (copy.body.data[0].created = String(copy.body.data[0].created)))).toEqual(["data[0].created: string recorded, number simulated"]);
    expect(mutate((copy) => (copy.status = 503))).toEqual(["status: 503 recorded, 200 simulated"]);
    expect(mutate((copy) => (copy.headers["content-type"] = "text/plain"))).toEqual([
      'content-type: "text/plain" recorded, "application/json; charset=utf-8" simulated',
    ]);
  });

  it("reports a stream event of another shape, a missing kind of event and an id of another form", async () => {
    const server = await start();
    const exchange = recording("tool-calls").exchanges.streamed!;
    server.script(scriptLike(exchange.response));
    const answer = await replay(server, exchange.request);
    const events = structuredClone(exchange.response.events!) as any[];
    const opened = events.find((event) => eventKind(event) === "call opened");
    opened.choices[0].delta.tool_calls[0].id = "call_0";
    opened.choices[0].logprobs = null;
    const withoutFinish = events.filter((event) => eventKind(event) !== "finish");
    const simulatedId = JSON.stringify((answer.events!.find((event) => eventKind(event) === "call opened") as any).choices[0].delta.tool_calls[0].id);
    expect(streamDifferences(answer.events!, events)).toEqual([
      "call opened.choices[0].logprobs: recorded, not simulated",
      `call opened.choices[0].delta.tool_calls[0].id: "call_0" recorded, ${simulatedId} simulated, not of the same form`,
    ]);
    expect(streamDifferences(answer.events!, withoutFinish)).toContain("stream: a finish event simulated, none recorded");
  });
});
