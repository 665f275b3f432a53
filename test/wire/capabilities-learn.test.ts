/**
 * A grammar-constrained server, known from its model listing, gets the relaxed schemas from its
 * first request: what the listing says (capabilities-server), listModels noting it, and the one
 * read before the first loop step that declares tools (capabilities-learn).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it, vi } from "vitest";
import type { Message, ToolDefinition } from "../../src/shapes/config.js";
import { runAgentLoopIn, type AgentLoopOptions } from "../../src/run/agent-loop.js";
import { clearState, createState, type RuntimeState } from "../../src/state/state.js";
import { capabilitiesForIn } from "../../src/wire/capabilities.js";
import { learnServerIn } from "../../src/wire/capabilities-learn.js";
import { grammarServerOf, noteListingIn } from "../../src/wire/capabilities-server.js";
import { listModelsIn } from "../../src/wire/client.js";
import { exportCapabilitiesIn, importCapabilitiesIn } from "../../src/wire/snapshot.js";
import { PROFILE_NAMES, PROFILES, startEndpoint, turn, type EndpointOptions, type EndpointServer } from "../support/endpoint.js";

const recordedListing = (
  JSON.parse(readFileSync(resolve(import.meta.dirname, "../fixtures/llama.cpp/listing.json"), "utf8")) as {
    exchanges: { listing: { response: { body: { data: unknown[] } } } };
  }
).exchanges.listing.response.body;

const NAME: ToolDefinition = {
  type: "function",
  function: {
    name: "record_name",
    description: "Records a name.",
    parameters: {
      type: "object",
      properties: { name: { type: "string", maxLength: 40 }, count: { type: "integer", minimum: 1, maximum: 9 } },
      required: ["name", "count"],
    },
  },
};

const question: Message[] = [{ role: "user", content: "Record a name." }];

async function withServer(options: EndpointOptions, body: (server: EndpointServer, state: RuntimeState) => Promise<void>): Promise<void> {
  const server = await startEndpoint(options);
  const state = createState();
  try {
    await body(server, state);
  } finally {
    clearState(state);
    await server.close();
  }
}

function run(state: RuntimeState, server: EndpointServer, options: Partial<AgentLoopOptions> = {}) {
  return runAgentLoopIn(state, {
    config: { baseUrl: server.baseUrl, model: "loopback-model", maxToolIterations: 4, maxRetries: 0 },
    messages: question,
    tools: [NAME],
    dispatch: () => "recorded",
    ...options,
  });
}

function routes(server: EndpointServer): string[] {
  return server.requests.map((request) => `${request.method} ${request.path}`);
}

const firstTool = (server: EndpointServer, index = 0) => (server.chatBodies()[index]?.tools as ToolDefinition[])[0]!.function as Record<string, unknown>;

describe("why a grammar server gets the relaxed schemas", () => {
  const grammar = (
    JSON.parse(readFileSync(resolve(import.meta.dirname, "../fixtures/llama.cpp/grammar.json"), "utf8")) as {
      exchanges: Record<string, { request: { body: Record<string, unknown> }; slot: { grammar: string } }>;
    }
  ).exchanges;

  it("llama-server's grammar bounds what relaxTools and relaxSchema keep, and not what the strict rewrite moved into descriptions", () => {
    // The same maxLength: 10, sent both ways; the recorder sent this library's own rewrites.
    expect(grammar.toolRelaxed!.slot.grammar).toContain('tool-record-word-schema-word ::= "\\"" char{0,10} "\\""');
    expect(grammar.toolStrict!.slot.grammar).toContain('tool-record-word-schema-word-kv ::= "\\"word\\"" space ":" space string');
    expect(grammar.toolStrict!.slot.grammar).not.toContain("char{0,10}");
    expect(grammar.formatRelaxed!.slot.grammar).toContain("char{0,10}");
    expect(grammar.formatStrict!.slot.grammar).not.toContain("char{0,10}");
    expect(JSON.stringify(grammar.toolStrict!.request.body.tools)).toContain('"strict":true');
  });
});

describe("grammarServerOf", () => {
  it("names llama.cpp from the listing llama-server really sends", () => {
    expect(grammarServerOf(recordedListing.data)).toBe("llama.cpp");
  });

  it("names llama.cpp, vLLM and LM Studio from their listings, and no other family", () => {
    const named = Object.fromEntries(PROFILE_NAMES.map((name) => [name, grammarServerOf([PROFILES[name].modelEntry("m", 4096)])]));
    expect(named).toEqual({ openai: undefined, "llama.cpp": "llama.cpp", vllm: "vLLM", lmstudio: "LM Studio", ollama: undefined, openrouter: undefined });
  });

  it("names nothing for a listing whose entries name two owners, or none, or for something that is not a listing", () => {
    expect(
      grammarServerOf([
        { id: "a", owned_by: "vllm" },
        { id: "b", owned_by: "openai" },
      ]),
    ).toBeUndefined();
    expect(grammarServerOf([{ id: "a" }])).toBeUndefined();
    for (const odd of [undefined, null, "llamacpp", { owned_by: "llamacpp" }, [null, 1, "x"]]) expect(grammarServerOf(odd)).toBeUndefined();
  });

  it("marks a record only once and never throws", () => {
    const state = createState();
    expect(noteListingIn(state, { baseUrl: "http://x/v1" }, recordedListing.data)).toBe("llama.cpp");
    expect(noteListingIn(state, { baseUrl: "http://x/v1" }, recordedListing.data)).toBeUndefined();
    expect(noteListingIn(state, { baseUrl: 42 as unknown as string }, recordedListing.data)).toBeUndefined();
    expect(capabilitiesForIn(state, "http://x/v1")).toMatchObject({ grammarConstrained: true, strictSchemas: false });
  });
});

describe("listModels", () => {
  it("marks a llama.cpp endpoint grammar-constrained from the listing it reads, and an OpenAI one not", async () => {
    for (const [profile, marked] of [
      ["llama.cpp", true],
      ["openai", false],
    ] as const) {
      await withServer({ profile }, async (server, state) => {
        await listModelsIn(state, { baseUrl: server.baseUrl });
        expect(capabilitiesForIn(state, server.baseUrl)).toMatchObject({ grammarConstrained: marked, strictSchemas: !marked });
      });
    }
  });
});

describe("a loop step that declares tools", () => {
  it("reads a llama.cpp listing once and sends relaxed tools, their bounds kept, from the first step", async () => {
    await withServer({ profile: "llama.cpp" }, async (server, state) => {
      server.script(
        turn({ toolCalls: [{ name: "record_name", arguments: { name: "Ada", count: 2 } }] }),
        turn({ content: "Done." }),
        turn({ content: "Again." }),
      );
      await run(state, server);
      await run(state, server);
      expect(routes(server)).toEqual(["GET /v1/models", "POST /v1/chat/completions", "POST /v1/chat/completions", "POST /v1/chat/completions"]);
      for (const index of [0, 1, 2]) {
        const declared = firstTool(server, index);
        expect(declared.strict).toBeUndefined();
        expect(declared.parameters).toMatchObject({ properties: { name: { type: "string", maxLength: 40 }, count: { minimum: 1, maximum: 9 } } });
      }
      expect(exportCapabilitiesIn(state).endpoints).toEqual([{ baseUrl: server.baseUrl, key: "", strictSchemas: false, grammarConstrained: true }]);
    });
  });

  it("sends an OpenAI endpoint strict tools after reading its listing once", async () => {
    await withServer({ profile: "openai" }, async (server, state) => {
      server.script(turn({ content: "Done." }), turn({ content: "Again." }));
      await run(state, server);
      await run(state, server);
      expect(routes(server)).toEqual(["GET /v1/models", "POST /v1/chat/completions", "POST /v1/chat/completions"]);
      expect(firstTool(server).strict).toBe(true);
      expect(exportCapabilitiesIn(state).endpoints).toEqual([]);
    });
  });

  it("reads no listing for a step without tools", async () => {
    await withServer({ profile: "llama.cpp" }, async (server, state) => {
      server.script(turn({ content: "Done." }));
      await run(state, server, { tools: [] });
      expect(routes(server)).toEqual(["POST /v1/chat/completions"]);
    });
  });

  it("needs no listing in a fresh runtime that imported the snapshot", async () => {
    await withServer({ profile: "llama.cpp" }, async (server, state) => {
      server.script(turn({ content: "Done." }), turn({ content: "Again." }));
      await run(state, server);
      const fresh = createState();
      try {
        expect(importCapabilitiesIn(fresh, JSON.parse(JSON.stringify(exportCapabilitiesIn(state)))).ignored).toEqual([]);
        await run(fresh, server);
      } finally {
        clearState(fresh);
      }
      expect(routes(server)).toEqual(["GET /v1/models", "POST /v1/chat/completions", "POST /v1/chat/completions"]);
      expect(firstTool(server, 1).strict).toBeUndefined();
    });
  });

  it("asks again on the next step when the listing met the model still loading", async () => {
    await withServer({ profile: "llama.cpp", loading: 1 }, async (server, state) => {
      server.script(turn({ toolCalls: [{ name: "record_name", arguments: { name: "Ada", count: 2 } }] }), turn({ content: "Done." }));
      await run(state, server, { sleep: async () => undefined });
      expect(routes(server)).toEqual([
        "GET /v1/models",
        "POST /v1/chat/completions",
        "POST /v1/chat/completions",
        "GET /v1/models",
        "POST /v1/chat/completions",
      ]);
      // Before the model was in, nothing said which server this is; once it was, the tools went relaxed.
      expect(firstTool(server, 1).strict).toBe(true);
      expect(firstTool(server, 2).strict).toBeUndefined();
    });
  });

  it("leaves the record as it was when the listing cannot be had, and does not ask again", async () => {
    const broken = { kind: "error" as const, status: 500, body: { error: { message: "listing broke", type: "server_error" } } };
    await withServer({ profile: "llama.cpp", routes: { "GET /v1/models": broken } }, async (server, state) => {
      server.script(turn({ content: "Done." }), turn({ content: "Again." }));
      await run(state, server);
      await run(state, server);
      expect(routes(server)).toEqual(["GET /v1/models", "POST /v1/chat/completions", "POST /v1/chat/completions"]);
      expect(firstTool(server).strict).toBe(true);
    });
  });

  it("lets a later request ask again after a stopped read, and never rejects", async () => {
    await withServer({ profile: "llama.cpp", routes: { "GET /v1/models": { kind: "stall", beforeHeaders: true } } }, async (server, state) => {
      const controller = new AbortController();
      const pending = learnServerIn(state, { baseUrl: server.baseUrl }, { signal: controller.signal });
      // Stopped once the server holds the request, however long it took to get there.
      await vi.waitFor(() => expect(routes(server)).toHaveLength(1));
      controller.abort(new Error("stopped"));
      await expect(pending).resolves.toBeUndefined();
      const again = new AbortController();
      const second = learnServerIn(state, { baseUrl: server.baseUrl }, { signal: again.signal });
      await vi.waitFor(() => expect(routes(server)).toHaveLength(2));
      again.abort(new Error("stopped"));
      await second;
      expect(routes(server)).toEqual(["GET /v1/models", "GET /v1/models"]);
      expect(capabilitiesForIn(state, server.baseUrl).grammarConstrained).toBe(false);
    });
  });
});
