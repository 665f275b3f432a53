import fc from "fast-check";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import * as zodCore from "zod/v4/core";
import { capabilitiesForIn, modelCapabilitiesForIn } from "../../src/wire/capabilities.js";
import type { Summariser } from "../../src/run/compaction.js";
import type { ContentPart, Endpoint, ResolvedTask } from "../../src/shapes/config.js";
import { FinishReason } from "../../src/shapes/config.js";
import { clearState, createState, type RuntimeState } from "../../src/state/state.js";
import { relaxSchema, sanitizeSchema } from "../../src/text/schema-compat.js";
import { ask, askIn, askJson, askJsonIn, askReplyIn, parseJson, summariserIn, taskCall, type SideTaskInput } from "../../src/turn/side-task.js";
import { exportCapabilitiesIn } from "../../src/wire/snapshot.js";
import { grammarServerOf } from "../../src/wire/capabilities-server.js";
import { PROFILE_NAMES, PROFILES, startEndpoint, turn, type EndpointOptions, type EndpointServer, type ProfileName } from "../support/endpoint.js";

interface Context {
  server: EndpointServer;
  state: RuntimeState;
  endpoint: Endpoint;
  notices: string[];
  onNotice: (message: string) => void;
}

async function withEndpoint(options: EndpointOptions, run: (context: Context) => Promise<void>): Promise<void> {
  const server = await startEndpoint(options);
  const state = createState();
  const notices: string[] = [];
  try {
    await run({ server, state, endpoint: { baseUrl: server.baseUrl }, notices, onNotice: (message) => notices.push(message) });
  } finally {
    clearState(state);
    await server.close();
  }
}

const MODEL = "loopback-model";

const PRESELECT_SCHEMA = {
  type: "object",
  properties: { tools: { type: "array", items: { type: "string" } } },
  required: ["tools"],
};

/** A pattern llama.cpp's converter refuses (unanchored), which the relaxed rewrite moves into the description. */
const PATTERN_SCHEMA = {
  type: "object",
  properties: { code: { type: "string", pattern: "[A-Z]{3}" }, note: { type: "string" } },
  required: ["code"],
};

function formatOf(body: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const format = body?.response_format;
  return typeof format === "object" && format !== null ? (format as Record<string, unknown>) : undefined;
}

function systemOf(body: Record<string, unknown> | undefined): string {
  const messages = body?.messages as Array<{ role: string; content: unknown }> | undefined;
  const system = messages?.find((message) => message.role === "system");
  return typeof system?.content === "string" ? system.content : "";
}

/** The grammar-constrained server a family's listing names, if any (llama.cpp, vLLM, LM Studio). */
function grammarServer(profile: ProfileName): string | undefined {
  return grammarServerOf([PROFILES[profile].modelEntry(MODEL, 4096)]);
}

describe.each(PROFILE_NAMES)("askJson against %s", (profile) => {
  if (grammarServer(profile) === undefined)
    it("sends the schema as a strict json_schema response_format, also in the system prompt, and returns the parsed answer", async () => {
      await withEndpoint({ profile }, async ({ server, state, endpoint, onNotice, notices }) => {
        server.script(turn({ content: '{"tools":["read_file","grep"]}' }));
        const picked = await askJsonIn<{ tools: string[] }>(state, endpoint, MODEL, "Pick the tools.", "Find TODOs", PRESELECT_SCHEMA, {
          name: "preselection",
          onNotice,
        });
        expect(picked).toEqual({ tools: ["read_file", "grep"] });
        const [body] = server.chatBodies();
        expect(formatOf(body)).toEqual({
          type: "json_schema",
          json_schema: { name: "preselection", schema: sanitizeSchema(PRESELECT_SCHEMA), strict: true },
        });
        expect(systemOf(body)).toContain("Pick the tools.");
        expect(systemOf(body)).toContain(JSON.stringify(PRESELECT_SCHEMA));
        expect(body?.stream).toBeUndefined();
        expect(body?.tools).toBeUndefined();
        expect(notices).toEqual([]);
      });
    });

  if (grammarServer(profile) !== undefined)
    it("sends a grammar-constrained server the relaxed schema from the first request, as its listing says it is one", async () => {
      await withEndpoint({ profile }, async ({ server, state, endpoint, onNotice, notices }) => {
        server.script(turn({ content: '{"tools":["read_file","grep"]}' }), turn({ content: '{"code":"ABC"}' }));
        const picked = await askJsonIn<{ tools: string[] }>(state, endpoint, MODEL, "Pick the tools.", "Find TODOs", PRESELECT_SCHEMA, {
          name: "preselection",
          onNotice,
        });
        expect(picked).toEqual({ tools: ["read_file", "grep"] });
        expect(server.requests.map((request) => `${request.method} ${request.path}`)).toEqual(["GET /v1/models", "POST /v1/chat/completions"]);
        expect(formatOf(server.chatBodies()[0])).toEqual({ type: "json_schema", json_schema: { name: "preselection", schema: relaxSchema(PRESELECT_SCHEMA) } });
        expect(notices).toEqual([]);
        // A vLLM listing also says the server reads reasoning back as `reasoning`.
        const field = profile === "vllm" ? { reasoningField: "reasoning" } : {};
        expect(exportCapabilitiesIn(state).endpoints).toEqual([{ baseUrl: server.baseUrl, key: "", strictSchemas: false, grammarConstrained: true, ...field }]);
        // The listing is read once per endpoint: the next call goes straight to the chat request.
        expect(await askJsonIn(state, endpoint, MODEL, "", "code?", PATTERN_SCHEMA)).toEqual({ code: "ABC" });
        expect(server.requests.filter((request) => request.path === "/v1/models")).toHaveLength(1);
        expect(formatOf(server.chatBodies()[1])?.json_schema).toEqual({ name: "answer", schema: relaxSchema(PATTERN_SCHEMA) });
      });
    });

  if (grammarServer(profile) === undefined)
    it("re-sends with the relaxed schema when the endpoint could not build a grammar", async () => {
      await withEndpoint({ profile, refuse: { schemaGrammar: ["pattern"] } }, async ({ server, state, endpoint, onNotice, notices }) => {
        server.script(turn({ content: '{"code":"ABC"}' }), turn({ content: '{"code":"XYZ"}' }));
        expect(await askJsonIn(state, endpoint, MODEL, "", "code?", PATTERN_SCHEMA, { onNotice })).toEqual({ code: "ABC" });
        const [refused, relaxed] = server.chatBodies();
        expect(formatOf(refused)?.json_schema).toEqual({ name: "answer", schema: sanitizeSchema(PATTERN_SCHEMA), strict: true });
        expect(formatOf(relaxed)?.json_schema).toEqual({ name: "answer", schema: relaxSchema(PATTERN_SCHEMA) });
        expect(server.chatRequests()[0]?.refused).toBe("schemaGrammar");
        expect(notices.join("\n")).toMatch(/relaxed/);
        // The endpoint latch holds: the next call goes relaxed first time.
        expect(await askJsonIn(state, endpoint, MODEL, "", "code?", PATTERN_SCHEMA)).toEqual({ code: "XYZ" });
        expect(server.chatBodies()).toHaveLength(3);
        expect(formatOf(server.chatBodies()[2])?.json_schema).toEqual({ name: "answer", schema: relaxSchema(PATTERN_SCHEMA) });
      });
    });

  it("latches structuredOutput off when the model refuses response_format, and describes the shape in the prompt alone after", async () => {
    await withEndpoint({ profile, refuse: { responseFormat: true } }, async ({ server, state, endpoint, onNotice, notices }) => {
      server.script(turn({ content: '{"tools":["a"]}' }), turn({ content: 'Here you go: {"tools":["b"]}' }));
      expect(await askJsonIn(state, endpoint, MODEL, "Pick.", "x", PRESELECT_SCHEMA, { onNotice })).toEqual({ tools: ["a"] });
      expect(await askJsonIn(state, endpoint, MODEL, "Pick.", "y", PRESELECT_SCHEMA, { onNotice })).toEqual({ tools: ["b"] });
      const bodies = server.chatBodies();
      expect(bodies).toHaveLength(3);
      expect(formatOf(bodies[0])).toBeDefined();
      expect(formatOf(bodies[1])).toBeUndefined();
      expect(formatOf(bodies[2])).toBeUndefined();
      // Asked in words: the schema still rides on the system prompt.
      expect(systemOf(bodies[2])).toContain(JSON.stringify(PRESELECT_SCHEMA));
      expect(notices.join("\n")).toMatch(/response_format/);
      const snapshot = exportCapabilitiesIn(state);
      const models = snapshot.endpoints.flatMap((entry) => Object.entries(entry.models ?? {}));
      expect(models).toContainEqual([MODEL, expect.objectContaining({ structuredOutput: false })]);
    });
  });

  it("does not latch a schema the server calls invalid: the call is undefined with the server's words", async () => {
    await withEndpoint({ profile, refuse: { invalidSchema: true } }, async ({ server, state, endpoint, onNotice, notices }) => {
      expect(await askJsonIn(state, endpoint, MODEL, "", "x", PRESELECT_SCHEMA, { name: "pick", onNotice })).toBeUndefined();
      expect(await askJsonIn(state, endpoint, MODEL, "", "x", PRESELECT_SCHEMA, { name: "pick" })).toBeUndefined();
      const bodies = server.chatBodies();
      expect(bodies).toHaveLength(2);
      expect(formatOf(bodies[1])).toBeDefined();
      expect(modelCapabilitiesForIn(state, server.baseUrl, undefined, MODEL).structuredOutput).toBe(true);
      expect(notices.join("\n")).toMatch(/schema/i);
    });
  });

  it("parses JSON wrapped in prose and a fence, with the slips a local model makes", async () => {
    await withEndpoint({ profile }, async ({ server, state, endpoint }) => {
      server.script(
        turn({ content: "<think>They want files.</think>Sure! Here it is:\n```json\n{'tools': ['read_file',], done: True, skip: None}\n```\nAnything else?" }),
      );
      expect(await askJsonIn(state, endpoint, MODEL, "", "x", PRESELECT_SCHEMA)).toEqual({ tools: ["read_file"], done: true, skip: null });
    });
  });

  it("answers undefined, with a notice, for a reply that stops before its JSON is complete", async () => {
    await withEndpoint({ profile }, async ({ server, state, endpoint, onNotice, notices }) => {
      server.script(turn({ content: '{"tools": [{"name": "read_file"}, {"name": "gr', finishReason: "length" }));
      expect(await askJsonIn(state, endpoint, MODEL, "", "x", PRESELECT_SCHEMA, { onNotice })).toBeUndefined();
      expect(notices.join("\n")).toMatch(/token ceiling/);
    });
  });
});

describe("askJson when even the relaxed schema cannot be compiled", () => {
  it("asks in words for that one request, without latching structured output off", async () => {
    await withEndpoint(
      { profile: "llama.cpp", refuse: { schemaGrammar: ["pattern", "description"] } },
      async ({ server, state, endpoint, onNotice, notices }) => {
        server.script(turn({ content: '{"code":"ABC"}' }));
        expect(await askJsonIn(state, endpoint, MODEL, "", "code?", PATTERN_SCHEMA, { onNotice })).toEqual({ code: "ABC" });
        const bodies = server.chatBodies();
        // llama.cpp is known to be grammar-constrained from its listing, so the first request is already the relaxed one.
        expect(bodies.map((body) => formatOf(body) !== undefined)).toEqual([true, false]);
        expect(formatOf(bodies[0])?.json_schema).toEqual({ name: "answer", schema: relaxSchema(PATTERN_SCHEMA) });
        expect(systemOf(bodies[1])).toContain(JSON.stringify(PATTERN_SCHEMA));
        expect(notices.join("\n")).toMatch(/in words/);
        expect(modelCapabilitiesForIn(state, server.baseUrl, undefined, MODEL).structuredOutput).toBe(true);
      },
    );
  });

  it("asks in words after a strict refusal and a relaxed one on a server not known to be grammar-constrained", async () => {
    await withEndpoint({ profile: "ollama", refuse: { schemaGrammar: ["pattern", "description"] } }, async ({ server, state, endpoint, onNotice, notices }) => {
      server.script(turn({ content: '{"code":"ABC"}' }));
      expect(await askJsonIn(state, endpoint, MODEL, "", "code?", PATTERN_SCHEMA, { onNotice })).toEqual({ code: "ABC" });
      const bodies = server.chatBodies();
      expect(bodies.map((body) => formatOf(body) !== undefined)).toEqual([true, true, false]);
      expect(systemOf(bodies[2])).toContain(JSON.stringify(PATTERN_SCHEMA));
      expect(notices.join("\n")).toMatch(/in words/);
      expect(modelCapabilitiesForIn(state, server.baseUrl, undefined, MODEL).structuredOutput).toBe(true);
    });
  });
});

describe("askJson with a zod schema", () => {
  const Pick = z.object({ tools: z.array(z.string()), note: z.string().optional() });

  it("converts it with zod's own toJSONSchema, and returns the answer checked and typed by it", async () => {
    expect(z.toJSONSchema).toBe(zodCore.toJSONSchema);
    await withEndpoint({}, async ({ server, state, endpoint }) => {
      server.script(turn({ content: '{"tools":["a"],"note":null}' }));
      const picked = await askJsonIn<z.output<typeof Pick>>(state, endpoint, MODEL, "", "x", Pick);
      expect(picked).toEqual({ tools: ["a"] });
      const { $schema: _ignored, ...converted } = z.toJSONSchema(Pick, { io: "input" });
      expect(formatOf(server.chatBodies()[0])?.json_schema).toEqual({ name: "answer", schema: sanitizeSchema(converted), strict: true });
    });
  });

  it("answers undefined with a notice when the JSON does not match the zod schema", async () => {
    await withEndpoint({}, async ({ server, state, endpoint, onNotice, notices }) => {
      server.script(turn({ content: '{"tools":"read_file"}' }));
      expect(await askJsonIn(state, endpoint, MODEL, "", "x", Pick, { onNotice })).toBeUndefined();
      expect(notices.join("\n")).toMatch(/does not match the schema \(tools:/);
    });
  });

  it("types the answer by the zod schema, and by the type argument for a JSON Schema", () => {
    const endpoint = { baseUrl: "http://127.0.0.1:9/v1" };
    const withZod = () => askJson(endpoint, MODEL, "", "x", Pick);
    expectTypeOf(withZod).returns.resolves.toEqualTypeOf<{ tools: string[]; note?: string | undefined } | undefined>();
    const withJson = () => askJson<{ tools: string[] }>(endpoint, MODEL, "", "x", PRESELECT_SCHEMA, { name: "preselection" });
    expectTypeOf(withJson).returns.resolves.toEqualTypeOf<{ tools: string[] } | undefined>();
  });

  it("refuses a zod 3 shaped schema with a notice and sends nothing", async () => {
    await withEndpoint({}, async ({ server, state, endpoint, onNotice, notices }) => {
      const older = { _def: {}, safeParse: () => ({ success: true }) };
      expect(await askJsonIn(state, endpoint, MODEL, "", "x", older as never, { onNotice })).toBeUndefined();
      expect(server.chatBodies()).toHaveLength(0);
      expect(notices.join("\n")).toMatch(/zod 3/);
    });
  });

  it("sends the schema as written, not strict, with strict: false", async () => {
    await withEndpoint({}, async ({ server, state, endpoint }) => {
      server.script(turn({ content: '{"code":"ABC"}' }));
      await askJsonIn(state, endpoint, MODEL, "", "x", PATTERN_SCHEMA, { strict: false });
      expect(formatOf(server.chatBodies()[0])?.json_schema).toEqual({ name: "answer", schema: relaxSchema(PATTERN_SCHEMA) });
    });
  });
});

describe("ask and askReply", () => {
  it("sends a side task's defaults: 0.3, a 512 ceiling, the no-thinking hints, no stream and no tools", async () => {
    await withEndpoint({ profile: "llama.cpp" }, async ({ server, state, endpoint }) => {
      server.script(turn({ content: "<think>Short title.</think>\n\nFixing the build" }));
      expect(await askIn(state, endpoint, MODEL, "Name this chat.", "my build is broken")).toBe("Fixing the build");
      const [body] = server.chatBodies();
      expect(body).toEqual({
        model: MODEL,
        messages: [
          { role: "system", content: "Name this chat." },
          { role: "user", content: "my build is broken" },
        ],
        max_tokens: 512,
        temperature: 0.3,
        chat_template_kwargs: { enable_thinking: false },
      });
    });
  });

  it("sends a reasoning effort level in place of the no-thinking hints", async () => {
    await withEndpoint({}, async ({ server, state, endpoint }) => {
      server.script(turn({ content: "ok" }));
      await askIn(state, endpoint, MODEL, "", "hi", { reasoningEffort: "low" });
      const [body] = server.chatBodies();
      expect(body?.reasoning_effort).toBe("low");
      expect(body?.chat_template_kwargs).toBeUndefined();
    });
  });

  it("sends the effort effortFor answers, stepping up past a rung the model refused and remembering it", async () => {
    await withEndpoint(
      { profile: "openai", refuse: { reasoningEffort: ["minimal"], supportedEfforts: ["low", "medium", "high"] } },
      async ({ server, state, endpoint }) => {
        server.script(turn({ content: "one" }), turn({ content: "two" }));
        expect(await askIn(state, endpoint, MODEL, "", "hi", { reasoningEffort: "minimal" })).toBe("one");
        expect(await askIn(state, endpoint, MODEL, "", "hi", { reasoningEffort: "minimal" })).toBe("two");
        expect(server.chatBodies().map((body) => body.reasoning_effort)).toEqual(["minimal", "low", "low"]);
      },
    );
  });

  it("still sends the effort to a model that refused it only beside tools, and leaves out what it refused only without them", async () => {
    await withEndpoint(
      { profile: "openai", refuse: { reasoningEffortWithTools: true, withoutTools: ["parallel_tool_calls"] } },
      async ({ server, state, endpoint }) => {
        const model = modelCapabilitiesForIn(state, endpoint.baseUrl, undefined, MODEL);
        model.droppedWithTools = ["reasoning_effort"];
        model.effortWithTools = "none";
        model.droppedWithoutTools = ["parallel_tool_calls"];
        server.script(turn({ content: '{"tools":["grep"]}' }), turn({ content: "A summary." }));
        const extraBody = { parallel_tool_calls: false };
        expect(await askJsonIn(state, endpoint, MODEL, "Pick the tools.", "Find TODOs", PRESELECT_SCHEMA, { reasoningEffort: "high", extraBody })).toEqual({
          tools: ["grep"],
        });
        expect(await summariserIn(state, endpoint, MODEL, { reasoningEffort: "medium", extraBody })([{ role: "user", content: "hi" }], {})).toBe("A summary.");
        const bodies = server.chatBodies();
        expect(bodies.map((body) => body.reasoning_effort)).toEqual(["high", "medium"]);
        for (const body of bodies) expect(body).not.toHaveProperty("parallel_tool_calls");
        expect(server.chatRequests().map((entry) => entry.refused)).toEqual([undefined, undefined]);
      },
    );
  });

  it("keeps the no-thinking hints for reasoningEffort off", async () => {
    await withEndpoint({}, async ({ server, state, endpoint }) => {
      server.script(turn({ content: "ok" }));
      await askIn(state, endpoint, MODEL, "", "hi", { reasoningEffort: "off" });
      expect(server.chatBodies()[0]?.reasoning_effort).toBeUndefined();
      expect(server.chatBodies()[0]?.chat_template_kwargs).toEqual({ enable_thinking: false });
    });
  });

  it("sends no ceiling for maxTokens 0", async () => {
    await withEndpoint({}, async ({ server, state, endpoint }) => {
      server.script(turn({ content: "ok" }));
      await askIn(state, endpoint, MODEL, "", "hi", { maxTokens: 0 });
      const [body] = server.chatBodies();
      expect(body).not.toHaveProperty("max_tokens");
      expect(body).not.toHaveProperty("max_completion_tokens");
    });
  });

  it("merges extraBody after the temperature", async () => {
    await withEndpoint({}, async ({ server, state, endpoint }) => {
      server.script(turn({ content: "ok" }));
      await askIn(state, endpoint, MODEL, "", "hi", { temperature: 0.5, extraBody: { temperature: 0.7, top_k: 20, model: "not-this", messages: [] } });
      const [body] = server.chatBodies();
      expect(body?.temperature).toBe(0.7);
      expect(body?.top_k).toBe(20);
      expect(body?.model).toBe(MODEL);
      expect(body?.messages).toHaveLength(1);
    });
  });

  it("drops an extraBody field the endpoint refuses by name, and remembers it for that model", async () => {
    await withEndpoint({ refuse: { fields: ["min_p"] } }, async ({ server, state, endpoint, onNotice, notices }) => {
      server.script(turn({ content: "one" }), turn({ content: "two" }));
      expect(await askIn(state, endpoint, MODEL, "", "hi", { extraBody: { min_p: 0.05 }, onNotice })).toBe("one");
      expect(await askIn(state, endpoint, MODEL, "", "hi", { extraBody: { min_p: 0.05 } })).toBe("two");
      const bodies = server.chatBodies();
      expect(bodies.map((body) => "min_p" in body)).toEqual([true, false, false]);
      expect(notices.join("\n")).toMatch(/min_p/);
    });
  });

  it("gives askJson and summariser the same extraBody handling: merged after the temperature, a refused field dropped for that model", async () => {
    await withEndpoint({ refuse: { fields: ["min_p"] } }, async ({ server, state, endpoint }) => {
      server.script(turn({ content: '{"tools":[]}' }), turn({ content: "A summary." }));
      const extraBody = { temperature: 0.7, top_k: 20, min_p: 0.05 };
      expect(await askJsonIn(state, endpoint, MODEL, "", "hi", PRESELECT_SCHEMA, { temperature: 0.1, extraBody })).toEqual({ tools: [] });
      expect(await summariserIn(state, endpoint, MODEL, { temperature: 0.1, extraBody })([{ role: "user", content: "hi" }], {})).toBe("A summary.");
      const bodies = server.chatBodies();
      expect(bodies.map((body) => [body.temperature, body.top_k, "min_p" in body])).toEqual([
        [0.7, 20, true],
        [0.7, 20, false],
        [0.7, 20, false],
      ]);
    });
  });

  it("takes every fence the side tasks read out of the answer, <thinking> and <reasoning> included", async () => {
    await withEndpoint({ profile: "openai" }, async ({ server, state, endpoint }) => {
      server.script(turn({ content: "<thinking>A title.</thinking>Fixing" }), turn({ content: "<reasoning>Short.</reasoning> the build" }));
      expect(await askIn(state, endpoint, MODEL, "", "hi")).toBe("Fixing");
      expect(await askIn(state, endpoint, MODEL, "", "hi")).toBe("the build");
    });
  });

  it("drops the no-thinking hints on an endpoint that refuses them by name", async () => {
    await withEndpoint({ profile: "openai", refuse: { fields: ["chat_template_kwargs"], fieldWording: "unknown" } }, async ({ server, state, endpoint }) => {
      server.script(turn({ content: "one" }), turn({ content: "two" }));
      expect(await askIn(state, endpoint, MODEL, "", "hi")).toBe("one");
      expect(await askIn(state, endpoint, MODEL, "", "hi")).toBe("two");
      expect(server.chatBodies().map((body) => "chat_template_kwargs" in body)).toEqual([true, false, false]);
      expect(modelCapabilitiesForIn(state, server.baseUrl, undefined, MODEL).droppedFields).toContain("chat_template_kwargs");
    });
  });

  it("sends the ceiling as max_completion_tokens once the model asks for it", async () => {
    await withEndpoint({ refuse: { maxTokens: true } }, async ({ server, state, endpoint }) => {
      server.script(turn({ content: "ok" }));
      expect(await askIn(state, endpoint, MODEL, "", "hi")).toBe("ok");
      expect(server.chatBodies()[1]?.max_completion_tokens).toBe(512);
    });
  });

  it("passes image parts to the server unchanged", async () => {
    await withEndpoint({ profile: "lmstudio" }, async ({ server, state, endpoint }) => {
      const page: SideTaskInput = [
        { type: "text", text: "Transcribe this page." },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "high" } },
      ];
      server.script(turn({ content: "Page one." }));
      expect(await askIn(state, endpoint, "vision", "You are an OCR engine.", page)).toBe("Page one.");
      const messages = server.chatBodies()[0]?.messages as Array<{ role: string; content: ContentPart[] }>;
      expect(messages[1]).toEqual({ role: "user", content: page });
    });
  });

  it("passes image parts to the server unchanged from askJson too", async () => {
    await withEndpoint({ profile: "vllm" }, async ({ server, state, endpoint }) => {
      const page: SideTaskInput = [
        { type: "text", text: "List the tools on this screenshot." },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
      ];
      server.script(turn({ content: '{"tools":["grep"]}' }));
      expect(await askJsonIn(state, endpoint, "vision", "You read screenshots.", page, PRESELECT_SCHEMA)).toEqual({ tools: ["grep"] });
      const messages = server.chatBodies()[0]?.messages as Array<{ role: string; content: ContentPart[] }>;
      expect(messages[1]).toEqual({ role: "user", content: page });
    });
  });

  it("reports finish_reason length from askReply, and keeps the cut-off text", async () => {
    await withEndpoint({ profile: "vllm" }, async ({ server, state, endpoint }) => {
      server.script(turn({ content: "Page one, line one, line one, line one", finishReason: "length" }));
      const reply = await askReplyIn(state, endpoint, MODEL, "You are an OCR engine.", "page");
      expect(reply).toEqual({ text: "Page one, line one, line one, line one", finishReason: FinishReason.Length });
    });
  });

  it("answers undefined from ask, with a notice, for a reply whose ceiling went on reasoning; askReply shows it as it came", async () => {
    await withEndpoint({ profile: "ollama" }, async ({ server, state, endpoint, onNotice, notices }) => {
      server.script(turn({ reasoning: "Let me think about this at length", content: "", finishReason: "length" }));
      server.script(turn({ reasoning: "Again", content: "", finishReason: "length" }));
      expect(await askIn(state, endpoint, MODEL, "", "x", { onNotice })).toBeUndefined();
      expect(notices[0]).toMatch(/token ceiling before any answer/);
      expect(await askReplyIn(state, endpoint, MODEL, "", "x")).toEqual({ text: "", finishReason: "length" });
    });
  });

  it("names the model's own refusal in askJson's notice", async () => {
    await withEndpoint({}, async ({ server, state, endpoint, onNotice, notices }) => {
      server.script({
        kind: "json",
        body: {
          id: "chatcmpl-1",
          object: "chat.completion",
          created: 0,
          model: MODEL,
          choices: [{ index: 0, message: { role: "assistant", content: null, refusal: "I can't help with that." }, finish_reason: "stop" }],
        },
      });
      expect(await askJsonIn(state, endpoint, MODEL, "", "x", PRESELECT_SCHEMA, { onNotice })).toBeUndefined();
      expect(notices[0]).toMatch(/declined \(I can't help with that\.\)/);
    });
  });

  it("reports an undefined finishReason where the server sent none", async () => {
    await withEndpoint({}, async ({ server, state, endpoint }) => {
      server.script(turn({ content: "done", finishReason: null }));
      expect(await askReplyIn(state, endpoint, MODEL, "", "x")).toEqual({ text: "done", finishReason: undefined });
    });
  });

  it("answers undefined with a notice when the endpoint fails, and when it times out", async () => {
    await withEndpoint({}, async ({ server, state, endpoint, onNotice, notices }) => {
      expect(await askIn(state, endpoint, MODEL, "", "x", { onNotice })).toBeUndefined();
      expect(notices[0]).toMatch(/failed and has no answer: .*no response scripted/);
      server.script({ kind: "stall", beforeHeaders: true });
      expect(await askIn(state, { ...endpoint, requestTimeoutSeconds: 0.2 }, MODEL, "", "x", { onNotice })).toBeUndefined();
      expect(notices[1]).toMatch(/timed out/i);
    });
  });

  it("answers undefined with a notice for an endpoint with no base URL and for input that is neither text nor parts", async () => {
    const state = createState();
    const notices: string[] = [];
    const onNotice = (message: string) => notices.push(message);
    expect(await askIn(state, { baseUrl: "" }, MODEL, "", "x", { onNotice })).toBeUndefined();
    expect(await askIn(state, { baseUrl: "http://127.0.0.1:9/v1" }, MODEL, "", 42 as never, { onNotice })).toBeUndefined();
    expect(notices).toHaveLength(2);
    expect(notices[1]).toMatch(/input/);
    clearState(state);
  });

  it("rejects with the signal's reason when the caller stops it, before or during the request", async () => {
    await withEndpoint({}, async ({ server, state, endpoint }) => {
      const stopped = new Error("stopped by the host");
      const before = AbortSignal.abort(stopped);
      await expect(askIn(state, endpoint, MODEL, "", "x", { signal: before })).rejects.toBe(stopped);
      expect(server.chatBodies()).toHaveLength(0);
      server.script({ kind: "stall", beforeHeaders: true });
      const controller = new AbortController();
      const pending = askJsonIn(state, endpoint, MODEL, "", "x", PRESELECT_SCHEMA, { signal: controller.signal });
      while (server.chatBodies().length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      controller.abort(stopped);
      await expect(pending).rejects.toBe(stopped);
    });
  });

  it("never throws out of a notice sink", async () => {
    await withEndpoint({}, async ({ state, endpoint }) => {
      const answer = await askIn(state, endpoint, MODEL, "", "x", {
        onNotice: () => {
          throw new Error("sink broke");
        },
      });
      expect(answer).toBeUndefined();
    });
  });

  it("uses the default runtime from the top-level function", async () => {
    const server = await startEndpoint();
    try {
      server.script(turn({ content: "hello" }));
      expect(await ask({ baseUrl: server.baseUrl }, MODEL, "", "hi")).toBe("hello");
    } finally {
      await server.close();
    }
  });
});

describe("summariser", () => {
  it("matches compaction's Summariser type", () => {
    expectTypeOf(summariserIn).returns.toMatchTypeOf<Summariser>();
  });

  it("sends the folded messages as a transcript with the earlier summary, at a 1024 ceiling, and returns the summary", async () => {
    await withEndpoint({ profile: "ollama" }, async ({ server, state, endpoint }) => {
      server.script(turn({ content: "<think>hmm</think>The user wants the build fixed; tsc fails in a.ts." }));
      const summarise = summariserIn(state, endpoint, MODEL);
      const summary = await summarise(
        [
          { role: "user", content: "Fix the build" },
          { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "run", arguments: '{"cmd":"tsc"}' } }] },
          { role: "tool", tool_call_id: "c1", content: "a.ts(1,1): error TS2304" },
          {
            role: "user",
            content: [
              { type: "text", text: "see" },
              { type: "image_url", image_url: { url: "data:image/png;base64,AA==" } },
            ],
          },
        ],
        { previous: "Earlier: the user set up the repo." },
      );
      expect(summary).toBe("The user wants the build fixed; tsc fails in a.ts.");
      const [body] = server.chatBodies();
      expect(body?.max_tokens).toBe(1024);
      const user = (body?.messages as Array<{ role: string; content: string }>)[1]?.content ?? "";
      expect(user).toContain("Earlier: the user set up the repo.");
      expect(user).toContain("User: Fix the build");
      expect(user).toContain('Assistant called run({"cmd":"tsc"})');
      expect(user).toContain("Tool result: a.ts(1,1): error TS2304");
      expect(user).toContain("[image]");
      expect(user).not.toContain("base64");
    });
  });

  it("cuts a long message to its start and end", async () => {
    await withEndpoint({}, async ({ server, state, endpoint }) => {
      server.script(turn({ content: "short" }));
      await summariserIn(state, endpoint, MODEL, { maxMessageChars: 300 })([{ role: "tool", tool_call_id: "c", content: `START${"x".repeat(10_000)}END` }], {});
      const user = (server.chatBodies()[0]?.messages as Array<{ content: string }>)[1]?.content ?? "";
      expect(user).toContain("START");
      expect(user).toContain("END");
      expect(user).toMatch(/characters left out/);
      expect(user.length).toBeLessThan(1000);
    });
  });

  it("returns an empty summary, which compaction reads as no fold, when the request fails", async () => {
    await withEndpoint({}, async ({ state, endpoint, onNotice, notices }) => {
      expect(await summariserIn(state, endpoint, MODEL, { onNotice })([{ role: "user", content: "hi" }], {})).toBe("");
      expect(notices).toHaveLength(1);
    });
  });

  it("rejects with the reason of the call's signal", async () => {
    await withEndpoint({}, async ({ state, endpoint }) => {
      const reason = new Error("stop");
      await expect(summariserIn(state, endpoint, MODEL)([{ role: "user", content: "hi" }], { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    });
  });
});

describe("taskCall", () => {
  const agent = { baseUrl: "http://127.0.0.1:8080/v1", apiKey: "agent-key", model: "big", requestTimeoutSeconds: 30, headers: { "x-tenant": "t1" } };

  it("lets what the task states win over the host's options", () => {
    const task: ResolvedTask = { temperature: 0.9, maxTokens: 64, reasoningEffort: "high" };
    const call = taskCall(task, { temperature: 0.1, maxTokens: 2000, reasoningEffort: "low" }, agent);
    expect(call.options).toEqual({ temperature: 0.9, maxTokens: 64, reasoningEffort: "high" });
  });

  it("takes the host's options for what the task leaves out", () => {
    const call = taskCall({ maxTokens: 64 }, { temperature: 0.1, reasoningEffort: "low", name: "title" }, agent);
    expect(call.options).toEqual({ temperature: 0.1, maxTokens: 64, reasoningEffort: "low", name: "title" });
  });

  it("leaves out what neither states, so the side task's own default applies, not the agent's setting", async () => {
    await withEndpoint({}, async ({ server, state }) => {
      const call = taskCall({}, {}, { baseUrl: server.baseUrl, model: MODEL, temperature: 1.0, maxTokens: 8000 } as Endpoint & { model: string });
      expect(call.options).toEqual({});
      expect(call.model).toBe(MODEL);
      server.script(turn({ content: "Title" }));
      await askIn(state, call.endpoint, call.model, "Name this chat.", "hi", call.options);
      expect(server.chatBodies()[0]).toMatchObject({ temperature: 0.3, max_tokens: 512 });
    });
  });

  it("keeps maxTokens 0, which sends no ceiling", async () => {
    await withEndpoint({}, async ({ server, state }) => {
      const call = taskCall({ maxTokens: 0 }, { maxTokens: 300 }, { baseUrl: server.baseUrl });
      expect(call.options.maxTokens).toBe(0);
      server.script(turn({ content: "x" }));
      await askIn(state, call.endpoint, MODEL, "", "hi", call.options);
      expect(server.chatBodies()[0]).not.toHaveProperty("max_tokens");
    });
  });

  it("never carries the agent's own extraBody over to a side task", () => {
    const withSampler = { ...agent, extraBody: { top_k: 99, id_slot: 3 } } as typeof agent & { extraBody: Record<string, unknown> };
    expect(taskCall({}, {}, withSampler).options).not.toHaveProperty("extraBody");
    expect((taskCall({ extraBody: { min_p: 0.1 } }, {}, withSampler).options as { extraBody?: unknown }).extraBody).toEqual({ min_p: 0.1 });
  });

  it("merges the task's extraBody over the host's field by field", () => {
    const call = taskCall({ extraBody: { top_k: 40, min_p: 0.1 } }, { extraBody: { top_k: 20, id_slot: 1 } }, agent);
    expect(call.options.extraBody).toEqual({ top_k: 40, min_p: 0.1, id_slot: 1 });
  });

  it("names the model from the task, then the host, then the agent's endpoint", () => {
    expect(taskCall({ model: "small" }, { model: "host" }, agent).model).toBe("small");
    expect(taskCall({}, { model: "host" }, agent).model).toBe("host");
    expect(taskCall(undefined, {}, agent).model).toBe("big");
    expect(taskCall(undefined, { model: "host" }, agent).options).not.toHaveProperty("model");
  });

  it("sends a task on the agent's endpoint to the agent's URL spelling with the agent's key", () => {
    const call = taskCall({ baseUrl: "HTTP://127.0.0.1:8080/v1/" }, {}, agent);
    expect(call.endpoint).toEqual({ baseUrl: agent.baseUrl, apiKey: "agent-key", requestTimeoutSeconds: 30, headers: { "x-tenant": "t1" } });
    expect(taskCall(undefined, {}, agent).endpoint).toEqual(call.endpoint);
    expect(taskCall({ apiKey: "own" }, {}, agent).endpoint.apiKey).toBe("own");
  });

  it("shares one latch record between the agent and a task on its endpoint", async () => {
    await withEndpoint({ refuse: { responseFormat: true } }, async ({ server, state }) => {
      const main = { baseUrl: server.baseUrl, apiKey: "k1", model: MODEL };
      const call = taskCall({ baseUrl: `${server.baseUrl}/` }, {}, main);
      server.script(turn({ content: '{"tools":[]}' }));
      await askJsonIn(state, call.endpoint, call.model, "", "x", PRESELECT_SCHEMA, call.options);
      expect(capabilitiesForIn(state, main.baseUrl, main.apiKey).models.get(MODEL)?.structuredOutput).toBe(false);
      expect(server.chatRequests()[0]?.headers.authorization).toBe("Bearer k1");
    });
  });

  it("gives a task on another endpoint its own key or none, never the agent's", () => {
    const other = taskCall({ baseUrl: "http://10.0.0.2:8000/v1" }, {}, agent);
    expect(other.endpoint).toEqual({ baseUrl: "http://10.0.0.2:8000/v1", requestTimeoutSeconds: 30 });
    const keyed = taskCall({ baseUrl: "http://10.0.0.2:8000/v1", apiKey: "own" }, {}, agent);
    expect(keyed.endpoint).toEqual({ baseUrl: "http://10.0.0.2:8000/v1", apiKey: "own", requestTimeoutSeconds: 30 });
    expect(taskCall({ baseUrl: "http://10.0.0.2:8000/v1" }).endpoint).toEqual({ baseUrl: "http://10.0.0.2:8000/v1" });
  });

  it("throws a TypeError where there is neither an endpoint nor a task baseUrl", () => {
    expect(() => taskCall({ model: "small" }, {})).toThrow(TypeError);
  });

  it("takes each field from the task where it states one, else from the options, else leaves it out", () => {
    const value = fc.option(fc.oneof(fc.integer({ min: 0, max: 4096 }), fc.double({ min: 0, max: 2, noNaN: true })), { nil: undefined });
    fc.assert(
      fc.property(value, value, value, value, (taskTokens, hostTokens, taskTemperature, hostTemperature) => {
        const task: ResolvedTask = {};
        if (taskTokens !== undefined) task.maxTokens = taskTokens;
        if (taskTemperature !== undefined) task.temperature = taskTemperature;
        const host: { maxTokens?: number; temperature?: number } = {};
        if (hostTokens !== undefined) host.maxTokens = hostTokens;
        if (hostTemperature !== undefined) host.temperature = hostTemperature;
        const { options } = taskCall(task, host, agent);
        const expected: Record<string, number> = {};
        const tokens = taskTokens ?? hostTokens;
        const temperature = taskTemperature ?? hostTemperature;
        if (tokens !== undefined) expected.maxTokens = tokens;
        if (temperature !== undefined) expected.temperature = temperature;
        expect(options).toEqual(expected);
      }),
    );
  });

  it("reads null in a task as absent", () => {
    const task = { temperature: null, maxTokens: null } as unknown as ResolvedTask;
    expect(taskCall(task, { temperature: 0.2 }, agent).options).toEqual({ temperature: 0.2 });
  });
});

describe("parseJson", () => {
  it("finds JSON in prose, in a fence, after a scratchpad, and repairs a local model's slips", () => {
    expect(parseJson('The answer is {"a": 1}.')).toEqual({ a: 1 });
    expect(parseJson("```json\n[1, 2,]\n```")).toEqual([1, 2]);
    expect(parseJson("<thinking>{\"no\": 1}</thinking>{'yes': True}")).toEqual({ yes: true });
    expect(parseJson("{tools: ['a'], // pick\n}")).toEqual({ tools: ["a"] });
    expect(parseJson("42")).toBe(42);
    expect(parseJson("Sure: {'tools': ['read_file',], done: True}")).toEqual({ tools: ["read_file"], done: true });
    expect(parseJson("no json here")).toBeUndefined();
    expect(parseJson("")).toBeUndefined();
    expect(parseJson(undefined as never)).toBeUndefined();
  });

  it("takes no fragment of an answer that was cut off", () => {
    expect(parseJson('{"items": [{"a": 1}, {"a": 2')).toBeUndefined();
    expect(parseJson('Here: {"items": [1, 2]')).toBeUndefined();
  });

  it("never throws, whatever it is given", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        parseJson(text);
      }),
    );
  });

  it("reads back any JSON object written between lines of prose", () => {
    const prose = fc.string().filter((text) => !/[[\]{}"'`<]/.test(text));
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), prose, prose, (value, before, after) => {
        const text = `${before}\n${JSON.stringify(value)}\n${after}`;
        expect(parseJson(text)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it("answers undefined for any cut-off prefix of a JSON object", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1 }), fc.jsonValue(), { minKeys: 1 }).chain((value) => {
          const text = JSON.stringify(value);
          return fc.tuple(fc.constant(text), fc.integer({ min: 1, max: text.length - 1 }));
        }),
        ([text, cut]) => {
          expect(parseJson(text.slice(0, cut))).toBeUndefined();
        },
      ),
    );
  });
});

describe("the side-task input type", () => {
  it("takes a string or content parts", () => {
    expectTypeOf<string>().toMatchTypeOf<SideTaskInput>();
    expectTypeOf<ContentPart[]>().toMatchTypeOf<SideTaskInput>();
  });
});

describe("askJson against a llama.cpp server that cannot hold a reply to a schema", () => {
  it("latches structured output off on the sampler's failure and asks in words, telling the server's words once", async () => {
    // What llama-server answers every json_schema request under --reasoning-format none with a
    // template that opens <think> (test/fixtures/llama.cpp/reasoning.json, noneJsonSchema).
    const failed = {
      kind: "error" as const,
      status: 400,
      body: { error: { code: 400, message: "Failed to initialize samplers: std::exception", type: "invalid_request_error" } },
    };
    await withEndpoint({ profile: "llama.cpp" }, async ({ server, state, endpoint, onNotice, notices }) => {
      server.script(failed, turn({ content: '{"tools":["a"]}' }), turn({ content: '{"tools":["b"]}' }));
      expect(await askJsonIn(state, endpoint, MODEL, "Pick.", "x", PRESELECT_SCHEMA, { onNotice })).toEqual({ tools: ["a"] });
      expect(await askJsonIn(state, endpoint, MODEL, "Pick.", "y", PRESELECT_SCHEMA, { onNotice })).toEqual({ tools: ["b"] });
      expect(server.chatBodies().map((body) => formatOf(body) !== undefined)).toEqual([true, false, false]);
      expect(notices).toEqual([
        expect.stringMatching(/cannot have its reply held to a json_schema here \(the server said: .*Failed to initialize samplers: std::exception\)/),
      ]);
      const [entry] = exportCapabilitiesIn(state).endpoints;
      expect(entry).toMatchObject({ grammarConstrained: true, models: { [MODEL]: { structuredOutput: false } } });
    });
  });
});
