import { describe, expect, it } from "vitest";
import { capabilitiesForIn, freshEndpointCapabilities, modelCapabilitiesForIn, type EndpointCapabilities } from "../../src/wire/capabilities.js";
import { NegotiationError, negotiate } from "../../src/wire/negotiate.js";
import { getClientIn } from "../../src/wire/client.js";
import type { ModelParams } from "../../src/shapes/config.js";
import { exportCapabilitiesIn } from "../../src/wire/snapshot.js";
import { streamTurn } from "../../src/wire/stream.js";
import { PROFILES, PROFILE_NAMES, turn, type EndpointOptions, type ProfileName, WORDING_SAMPLES } from "../support/endpoint.js";
import { bodyFor, sendTurn, withEndpoint, type Wants } from "../support/negotiation.js";

interface MatrixCase {
  kind: string;
  refuse: EndpointOptions["refuse"];
  config: ModelParams;
  wants?: Wants;
  /** The first body carries it, the second does not. */
  sentThenGone: (first: Record<string, unknown>, second: Record<string, unknown>) => void;
  latch: (snapshot: ReturnType<typeof exportCapabilitiesIn>) => void;
}

const M = "gpt-x";
function modelLatch(snapshot: ReturnType<typeof exportCapabilitiesIn>): Record<string, unknown> {
  return (snapshot.endpoints[0]?.models?.[M] ?? {}) as Record<string, unknown>;
}

const MATRIX: MatrixCase[] = [
  {
    kind: "reasoningEffort (a list of supported values)",
    refuse: { reasoningEffort: ["none"] },
    config: { model: M, reasoningEffort: "none" },
    sentThenGone: (first, second) => {
      expect(first.reasoning_effort).toBe("none");
      expect(second.reasoning_effort).toBe("minimal");
    },
    latch: (snapshot) => expect(modelLatch(snapshot).refusedEfforts).toContain("none"),
  },
  {
    kind: "reasoningEffortUnsupported",
    refuse: { reasoningEffort: true },
    config: { model: M, reasoningEffort: "high" },
    sentThenGone: (first, second) => {
      expect(first.reasoning_effort).toBe("high");
      expect(second).not.toHaveProperty("reasoning_effort");
    },
    latch: (snapshot) => expect(modelLatch(snapshot).reasoningEffort).toBe(false),
  },
  {
    kind: "maxTokens",
    refuse: { maxTokens: true },
    config: { model: M, maxTokens: 100 },
    sentThenGone: (first, second) => {
      expect(first.max_tokens).toBe(100);
      expect(second).not.toHaveProperty("max_tokens");
      expect(second.max_completion_tokens).toBe(100);
    },
    latch: (snapshot) => expect(modelLatch(snapshot).legacyTokenLimit).toBe(false),
  },
  {
    kind: "temperature",
    refuse: { temperature: true },
    config: { model: M, temperature: 0.2 },
    sentThenGone: (first, second) => {
      expect(first.temperature).toBe(0.2);
      expect(second).not.toHaveProperty("temperature");
    },
    latch: (snapshot) => expect(modelLatch(snapshot).chosenTemperature).toBe(false),
  },
  {
    kind: "unknownField",
    refuse: { fields: ["min_p"] },
    config: { model: M, extraBody: { min_p: 0.05 } },
    sentThenGone: (first, second) => {
      expect(first.min_p).toBe(0.05);
      expect(second).not.toHaveProperty("min_p");
    },
    latch: (snapshot) => expect(modelLatch(snapshot).droppedFields).toEqual(["min_p"]),
  },
  {
    kind: "unknownParameter",
    refuse: { fields: ["top_k"], fieldWording: "unknown" },
    config: { model: M, extraBody: { top_k: 20 } },
    sentThenGone: (first, second) => {
      expect(first.top_k).toBe(20);
      expect(second).not.toHaveProperty("top_k");
    },
    latch: (snapshot) => expect(modelLatch(snapshot).droppedFields).toEqual(["top_k"]),
  },
  {
    kind: "responseFormat",
    refuse: { responseFormat: true },
    config: { model: M },
    wants: { format: true },
    sentThenGone: (first, second) => {
      expect(first).toHaveProperty("response_format");
      expect(second).not.toHaveProperty("response_format");
    },
    latch: (snapshot) => expect(modelLatch(snapshot).structuredOutput).toBe(false),
  },
  {
    kind: "schemaGrammar",
    refuse: { schemaGrammar: true },
    config: { model: M },
    wants: { tools: true },
    sentThenGone: (first, second) => {
      expect(JSON.stringify(first.tools)).toContain('"not"');
      expect(JSON.stringify(second.tools)).not.toContain('"not"');
    },
    latch: (snapshot) => expect(snapshot.endpoints[0]?.strictSchemas).toBe(false),
  },
];

describe("negotiate: the refusal matrix", () => {
  for (const profile of PROFILE_NAMES) {
    for (const entry of MATRIX) {
      it(`${profile}: re-sends once without what ${entry.kind} refused, latches it, and sends the lesser request next time`, async () => {
        await withEndpoint({ profile, refuse: entry.refuse }, async (context) => {
          context.server.script(turn({ content: "one" }), turn({ content: "two" }));
          const first = await sendTurn(context, entry.config, entry.wants);
          expect(first.content).toBe("one");
          const bodies = context.server.chatBodies();
          expect(bodies).toHaveLength(2);
          entry.sentThenGone(bodies[0] as Record<string, unknown>, bodies[1] as Record<string, unknown>);
          entry.latch(exportCapabilitiesIn(context.state));
          expect(context.notices.length).toBeGreaterThan(0);

          const second = await sendTurn(context, entry.config, entry.wants);
          expect(second.content).toBe("two");
          expect(context.server.chatBodies()).toHaveLength(3);
          expect(context.server.chatBodies()[2]).toEqual(bodies[1]);
        });
      });
    }
  }
});

/** Real wordings for refusals the profiles do not carry. */
const STREAM_OPTIONS_WORDINGS: Array<{ source: string; status: number; body: unknown }> = [
  {
    // https://github.com/QuantumNous/new-api/issues/418
    source: "new-api proxy",
    status: 400,
    body: {
      error: {
        message: "Unknown parameter: 'stream_options'. (request id: 20240806214436917505976hvsFC5y2)",
        type: "invalid_request_error",
        param: "stream_options",
        code: "unknown_parameter",
      },
    },
  },
  {
    // https://github.com/songquanpeng/one-api/issues/1423 (Azure OpenAI)
    source: "Azure OpenAI",
    status: 400,
    body: {
      error: {
        message: "Unrecognized request argument supplied: stream_options. Please contact us through an Azure support request.",
        type: "invalid_request_error",
        param: null,
        code: null,
      },
    },
  },
];

describe("negotiate: endpoint-level latches", () => {
  for (const wording of STREAM_OPTIONS_WORDINGS) {
    it(`latches usageInStream off when stream_options is refused (${wording.source})`, async () => {
      await withEndpoint({ profile: "openai" }, async (context) => {
        context.server.script({ kind: "error", status: wording.status, body: wording.body }, turn({ content: "ok" }), turn({ content: "again" }));
        await sendTurn(context, { model: M });
        const bodies = context.server.chatBodies();
        expect(bodies).toHaveLength(2);
        expect(bodies[0]).toHaveProperty("stream_options");
        expect(bodies[1]).not.toHaveProperty("stream_options");
        expect(exportCapabilitiesIn(context.state).endpoints[0]?.usageInStream).toBe(false);
        await sendTurn(context, { model: "another-model" });
        expect(context.server.chatBodies()[2]).not.toHaveProperty("stream_options");
      });
    });
  }

  it("latches strictSchemas off on xAI's strict wording", async () => {
    await withEndpoint({ profile: "openai" }, async (context) => {
      // https://github.com/livekit/agents/issues/2253
      context.server.script(
        {
          kind: "error",
          status: 400,
          body: { code: "Client specified an invalid argument", error: "Invalid request content: `strict` mode on function call is currently not supported." },
        },
        turn({ content: "ok" }),
      );
      await sendTurn(context, { model: M }, { tools: true });
      const bodies = context.server.chatBodies();
      expect(bodies).toHaveLength(2);
      expect(JSON.stringify(bodies[0]?.tools)).toContain('"strict":true');
      expect(JSON.stringify(bodies[1]?.tools)).not.toContain('"strict"');
      expect(context.supports.strictSchemas).toBe(false);
    });
  });

  for (const profile of PROFILE_NAMES) {
    for (const kind of ["streamOptions", "strict"] as const) {
      if (!PROFILES[profile].refusals[kind]) continue;
      it(`${profile}: re-sends once without what its ${kind} wording refused`, async () => {
        await withEndpoint({ profile, refuse: { [kind]: true } }, async (context) => {
          context.server.script(turn({ content: "ok" }), turn({ content: "again" }));
          await sendTurn(context, { model: M }, { tools: true });
          const bodies = context.server.chatBodies();
          expect(bodies).toHaveLength(2);
          if (kind === "streamOptions") expect(bodies[1]).not.toHaveProperty("stream_options");
          else expect(JSON.stringify(bodies[1]?.tools)).not.toContain('"strict"');
          await sendTurn(context, { model: M }, { tools: true });
          expect(context.server.chatBodies()).toHaveLength(3);
        });
      });
    }
  }
});

describe("negotiate: the real-world wording samples", () => {
  const cases: Record<string, { config: ModelParams; wants?: Wants; gone: (body: Record<string, unknown>) => boolean }> = {
    streamOptions: { config: { model: M }, gone: (body) => !("stream_options" in body) },
    strict: { config: { model: M }, wants: { tools: true }, gone: (body) => !JSON.stringify(body.tools).includes('"strict"') },
    reasoningEffort: { config: { model: M, reasoningEffort: "none" }, gone: (body) => body.reasoning_effort !== "none" },
    reasoningEffortUnsupported: { config: { model: M, reasoningEffort: "low" }, gone: (body) => !("reasoning_effort" in body) },
    maxTokens: { config: { model: M, maxTokens: 64 }, gone: (body) => !("max_tokens" in body) && body.max_completion_tokens === 64 },
    temperature: { config: { model: M, temperature: 0 }, gone: (body) => !("temperature" in body) },
    responseFormat: { config: { model: M }, wants: { format: true }, gone: (body) => !("response_format" in body) },
    unknownField: { config: { model: M, extraBody: { thinking: { type: "enabled" } } }, gone: (body) => !("thinking" in body) },
  };
  for (const sample of WORDING_SAMPLES) {
    const entry = cases[sample.kind];
    if (!entry) continue;
    it(`re-sends once without what ${sample.server} refused (${sample.kind}, ${sample.source})`, async () => {
      await withEndpoint({ profile: "openai" }, async (context) => {
        context.server.script({ kind: "error", status: sample.status, body: sample.body }, turn({ content: "ok" }));
        await sendTurn(context, entry.config, entry.wants ?? {});
        const bodies = context.server.chatBodies() as Record<string, unknown>[];
        expect(bodies).toHaveLength(2);
        expect(entry.gone(bodies[0]!)).toBe(false);
        expect(entry.gone(bodies[1]!)).toBe(true);
      });
    });
  }
});

describe("negotiate: isolation", () => {
  it("latches two keys on one base URL separately over the wire", async () => {
    await withEndpoint({ profile: "openai" }, async (context) => {
      const asKey = async (apiKey: string) => {
        const supports = capabilitiesForIn(context.state, context.server.baseUrl, apiKey);
        const client = getClientIn(context.state, { baseUrl: context.server.baseUrl, apiKey });
        return negotiate(supports, (current, produced, model) => streamTurn(client, bodyFor({ model: M }, current, model) as never, { produced }), {
          model: M,
        });
      };
      const refused = STREAM_OPTIONS_WORDINGS[0] as { status: number; body: unknown };
      context.server.script({ kind: "error", status: refused.status, body: refused.body }, turn({ content: "a" }), turn({ content: "b" }));
      await asKey("key-a");
      await asKey("key-b");
      const bodies = context.server.chatBodies();
      expect(bodies).toHaveLength(3);
      expect(bodies[1]).not.toHaveProperty("stream_options");
      expect(bodies[2]).toHaveProperty("stream_options");
      expect(context.server.chatRequests()[2]?.headers.authorization).toBe("Bearer key-b");
    });
  });
});

describe("negotiate: the reasoning effort", () => {
  const bare = (value: string) => ({
    kind: "error" as const,
    status: 400,
    body: {
      error: {
        message: `Unsupported value: 'reasoning_effort' does not support '${value}' with this model.`,
        type: "invalid_request_error",
        param: "reasoning_effort",
        code: "unsupported_value",
      },
    },
  });

  it("re-sends at the cheapest listed value above the refused one", async () => {
    await withEndpoint(
      { profile: "openai", refuse: { reasoningEffort: ["none", "minimal", "low"], supportedEfforts: ["medium", "high"] } },
      async (context) => {
        context.server.script(turn({ content: "ok" }));
        await sendTurn(context, { model: M, reasoningEffort: "none" });
        expect(context.server.chatBodies().map((body) => body.reasoning_effort)).toEqual(["none", "medium"]);
        expect(modelCapabilitiesForIn(context.state, context.server.baseUrl, undefined, M).refusedEfforts.sort()).toEqual(["low", "minimal", "none"]);
      },
    );
  });

  it("walks the ladder a rung per refusal when nothing is listed, with a notice stepping up from none", async () => {
    await withEndpoint({ profile: "openai" }, async (context) => {
      context.server.script(bare("none"), bare("minimal"), turn({ content: "ok" }));
      await sendTurn(context, { model: M, reasoningEffort: "none" });
      expect(context.server.chatBodies().map((body) => body.reasoning_effort)).toEqual(["none", "minimal", "low"]);
      expect(context.notices[0]).toMatch(/"none".*"minimal"/);
    });
  });

  it("passes the refusal on when the ladder runs out", async () => {
    await withEndpoint({ profile: "openai" }, async (context) => {
      context.server.script(bare("high"));
      await expect(sendTurn(context, { model: M, reasoningEffort: "high" })).rejects.toMatchObject({ status: 400 });
      expect(context.server.chatBodies()).toHaveLength(1);
    });
  });

  it("passes a refused value that is not on the ladder to the caller rather than reasoning less", async () => {
    await withEndpoint({ profile: "openai", refuse: { reasoningEffort: ["xhigh"] } }, async (context) => {
      await expect(sendTurn(context, { model: M, reasoningEffort: "xhigh" })).rejects.toMatchObject({ status: 400 });
      expect(context.server.chatBodies()).toHaveLength(1);
      expect(exportCapabilitiesIn(context.state).endpoints).toEqual([]);
    });
  });

  it("does not let one model's refusal stop another model on the same endpoint being asked", async () => {
    await withEndpoint({ profile: "openai", refuse: { models: { "gpt-4o": { reasoningEffort: true } } } }, async (context) => {
      context.server.script(turn({ content: "a" }), turn({ content: "b" }));
      await sendTurn(context, { model: "gpt-4o", reasoningEffort: "high" });
      await sendTurn(context, { model: "gpt-5", reasoningEffort: "high" });
      const bodies = context.server.chatBodies();
      expect(bodies).toHaveLength(3);
      expect(bodies[2]).toMatchObject({ model: "gpt-5", reasoning_effort: "high" });
    });
  });
});

describe("negotiate: what goes to the caller", () => {
  const cases: Array<{ what: string; refuse: EndpointOptions["refuse"]; config: ModelParams; wants?: Wants; profile?: ProfileName; droppable?: string[] }> = [
    { what: "a ceiling above the model's", refuse: { maxOutputTokens: 16384 }, config: { model: M, maxTokens: 100000 } },
    { what: "a temperature out of range", refuse: { temperatureMax: 2 }, config: { model: M, temperature: 3 } },
    { what: "a schema the server finds invalid", refuse: { invalidSchema: true }, config: { model: M }, wants: { format: true } },
    { what: "a refused field nobody said was droppable", refuse: { fields: ["min_p"] }, config: { model: M, extraBody: { min_p: 0.1 } }, droppable: [] },
    {
      what: "tools refused outright (llama.cpp without --jinja, a 500)",
      refuse: { tools: true },
      config: { model: M },
      wants: { tools: true },
      profile: "llama.cpp",
    },
    { what: "tools refused outright (OpenRouter, a 404)", refuse: { tools: true }, config: { model: M }, wants: { tools: true }, profile: "openrouter" },
  ];
  for (const entry of cases) {
    it(`passes ${entry.what} on, unlatched, after one request`, async () => {
      await withEndpoint({ profile: entry.profile ?? "openai", refuse: entry.refuse }, async (context) => {
        const attempt = sendTurn(context, entry.config, entry.wants, entry.droppable ? { droppable: entry.droppable } : {});
        const error = await attempt.catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(Error);
        expect(NegotiationError.is(error)).toBe(false);
        expect(context.server.chatBodies()).toHaveLength(1);
        expect(exportCapabilitiesIn(context.state).endpoints).toEqual([]);
      });
    });
  }

  it("changes nothing model-level without the model option", async () => {
    await withEndpoint({ profile: "openai", refuse: { temperature: true } }, async (context) => {
      const attempt = negotiate(context.supports, (_supports, produced) =>
        streamTurn(context.client, { model: M, messages: [{ role: "user", content: "hi" }], temperature: 0.2 }, { produced }),
      );
      await expect(attempt).rejects.toMatchObject({ status: 400 });
      expect(context.server.chatBodies()).toHaveLength(1);
    });
  });

  it("drops a nested name at its top-level field, with a notice naming it", async () => {
    await withEndpoint({ profile: "openai" }, async (context) => {
      context.server.script(
        {
          kind: "error",
          status: 400,
          body: {
            error: {
              message: "Unknown parameter: 'chat_template_kwargs.enable_thinking'.",
              type: "invalid_request_error",
              param: "chat_template_kwargs.enable_thinking",
              code: "unknown_parameter",
            },
          },
        },
        turn({ content: "ok" }),
      );
      await sendTurn(context, { model: M, extraBody: { chat_template_kwargs: { enable_thinking: false } } });
      const bodies = context.server.chatBodies();
      expect(bodies[0]).toHaveProperty("chat_template_kwargs");
      expect(bodies[1]).not.toHaveProperty("chat_template_kwargs");
      expect(context.notices.join(" ")).toContain("chat_template_kwargs.enable_thinking");
    });
  });

  it("ends in a NegotiationError when the refusal repeats after its latch", async () => {
    await withEndpoint({ profile: "openai", refuse: { streamOptions: true, fields: ["stream_options"] } }, async (context) => {
      // A send that ignores the records it is handed.
      const attempt = negotiate(context.supports, (_supports, produced) =>
        streamTurn(context.client, { model: M, messages: [{ role: "user", content: "hi" }], stream_options: { include_usage: true } }, { produced }),
      );
      const error = await attempt.catch((caught: unknown) => caught);
      expect(NegotiationError.is(error)).toBe(true);
      expect((error as NegotiationError).attempts).toBe(2);
      expect(context.server.chatBodies()).toHaveLength(2);
    });
  });

  it("re-sends a request built before another one latched the same refusal, instead of giving up", async () => {
    await withEndpoint({ profile: "openai", refuse: { streamOptions: true } }, async (context) => {
      const config = { model: M };
      context.server.script(turn({ content: "one" }), turn({ content: "two" }));
      // Both bodies are built with stream_options before either refusal comes back.
      const [first, second] = await Promise.allSettled([sendTurn(context, config), sendTurn(context, config)]);
      expect(first.status).toBe("fulfilled");
      expect(second.status).toBe("fulfilled");
      const bodies = context.server.chatBodies();
      expect(bodies).toHaveLength(4);
      expect(bodies.slice(0, 2).every((body) => "stream_options" in (body as object))).toBe(true);
      expect(bodies.slice(2).some((body) => "stream_options" in (body as object))).toBe(false);
      expect(context.supports.usageInStream).toBe(false);
    });
  });

  it("still ends in a NegotiationError when a raced refusal comes back a second time", async () => {
    await withEndpoint({ profile: "openai", refuse: { streamOptions: true } }, async (context) => {
      context.supports.usageInStream = false;
      // A send that ignores the records: the latch was off before it ever sent.
      const attempt = negotiate(context.supports, (_supports, produced) =>
        streamTurn(context.client, { model: M, messages: [{ role: "user", content: "hi" }], stream_options: { include_usage: true } }, { produced }),
      );
      const error = await attempt.catch((caught: unknown) => caught);
      expect(NegotiationError.is(error)).toBe(true);
      expect(context.server.chatBodies()).toHaveLength(2);
    });
  });

  it("answers a refusal naming no field with at most one re-send per droppable field, each with a notice, then the caller's error", async () => {
    await withEndpoint(
      { profile: "openai", respond: () => ({ kind: "error", status: 400, body: { error: { message: "Invalid request", type: "invalid_request_error" } } }) },
      async (context) => {
        const error = await sendTurn(
          context,
          { model: M, temperature: 0.2, extraBody: { min_p: 0.1, top_k: 20 } },
          {},
          { droppable: ["min_p", "top_k"] },
        ).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(Error);
        const bodies = context.server.chatBodies();
        expect(bodies).toHaveLength(3);
        expect(bodies.map((body) => ["min_p", "top_k"].filter((field) => field in body))).toEqual([["min_p", "top_k"], ["top_k"], []]);
        // temperature was never marked droppable, so every request still carries it.
        expect(bodies.every((body) => body.temperature === 0.2)).toBe(true);
        expect(context.notices.filter((notice) => notice.includes("without naming a field"))).toHaveLength(2);
      },
    );
  });

  it("ends in a NegotiationError when the refusal names a droppable field the request did not send", async () => {
    await withEndpoint({ profile: "openai" }, async (context) => {
      context.server.script({
        kind: "error",
        status: 400,
        body: { error: { message: "Unrecognized request argument supplied: top_k", type: "invalid_request_error" } },
      });
      const error = await sendTurn(context, { model: M, extraBody: { min_p: 0.1 } }, {}, { droppable: ["min_p", "top_k"] }).catch((caught: unknown) => caught);
      expect(NegotiationError.is(error)).toBe(true);
      expect(String((error as Error).message)).toMatch(/did not send/);
      expect(context.server.chatBodies()).toHaveLength(1);
    });
  });

  it("stops within a bounded number of requests without the body to check", async () => {
    await withEndpoint(
      { profile: "openai", respond: () => ({ kind: "error", status: 400, body: { error: { message: "Unrecognized request argument supplied: top_k" } } }) },
      async (context) => {
        const error = await negotiate(
          context.supports,
          (_supports, produced) => streamTurn(context.client, { model: M, messages: [{ role: "user", content: "Hi." }] }, { produced }),
          {
            model: M,
            droppable: ["top_k"],
          },
        ).catch((caught: unknown) => caught);
        expect(NegotiationError.is(error)).toBe(true);
        expect(context.server.chatBodies().length).toBeLessThanOrEqual(2);
      },
    );
  });

  const shapes: Array<{ name: string; status: number; body: unknown }> = [
    { name: "an HTML page", status: 502, body: "<html><body><h1>502 Bad Gateway</h1></body></html>" },
    { name: "an empty body", status: 400, body: "" },
    { name: "a bare string", status: 400, body: "bad request" },
    { name: "a nested error.error", status: 400, body: { error: { error: { message: "Unrecognized request argument supplied: mystery" } } } },
    { name: "a string error", status: 400, body: { error: "Unknown parameter: 'mystery'." } },
    { name: "JSON that is not an object", status: 400, body: "[1,2,3]" },
  ];
  for (const shape of shapes) {
    it(`ends in a clear error on ${shape.name}, after one request`, async () => {
      await withEndpoint({ profile: "openai" }, async (context) => {
        context.server.script({ kind: "error", status: shape.status, body: shape.body });
        const error = await sendTurn(context, { model: M }).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(Error);
        expect((error as Error).message.length).toBeGreaterThan(0);
        expect(context.server.chatBodies()).toHaveLength(1);
      });
    });
  }

  it("re-sends nothing once the model has started answering", async () => {
    await withEndpoint({ profile: "openai" }, async (context) => {
      context.server.script({
        kind: "stream",
        chunks: [
          { id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "Hel" } }] },
          { error: { message: "Unrecognized request argument supplied: min_p", type: "invalid_request_error" } },
        ],
        done: false,
      });
      const error = await sendTurn(context, { model: M, extraBody: { min_p: 0.1 } }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Error);
      expect(context.server.chatBodies()).toHaveLength(1);
      expect(exportCapabilitiesIn(context.state).endpoints).toEqual([]);
    });
  });
});

describe("negotiate: bad arguments", () => {
  it("says what it needs rather than crashing on a missing record or callback", async () => {
    await expect(negotiate(undefined as never, async () => "x")).rejects.toThrow(/capabilitiesFor/);
    await expect(negotiate(freshEndpointCapabilities(), undefined as never)).rejects.toThrow(/send callback/);
  });

  it("works on an endpoint record a caller built by hand", async () => {
    const supports = { strictSchemas: true, usageInStream: true } as EndpointCapabilities;
    const seen = await negotiate(supports, async (_supports, _produced, model) => model, { model: "m" });
    expect(seen).toMatchObject({ legacyTokenLimit: true });
    expect(supports.models.get("m")).toBe(seen);
    expect(Object.keys(supports)).toEqual(["strictSchemas", "usageInStream"]);
  });
});
