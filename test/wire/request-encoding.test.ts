import { describe, expect, it } from "vitest";
import fc from "fast-check";
import OpenAI, { AzureOpenAI } from "openai";
import type { ToolDefinition } from "../../src/shapes/config.js";
import { clearState, createState } from "../../src/state/state.js";
import { getClientIn } from "../../src/wire/client.js";
import { encodeStreamedBody, postsDirectly } from "../../src/wire/request-encoding.js";
import { streamTurn } from "../../src/wire/stream.js";
import { declareToolsIn } from "../../src/wire/tools-cache.js";
import { startEndpoint, turn } from "../support/endpoint.js";
import "../support/fast-check-seed.js";

const tool = (name: string, description = `Does ${name}.`): ToolDefinition => ({
  type: "function",
  function: { name, description, parameters: { type: "object", properties: { path: { type: "string", description: 'A path, "quoted" and \\ escaped' } } } },
});

const messages = [{ role: "user" as const, content: "Read a." }];

describe("encodeStreamedBody", () => {
  it("writes what JSON.stringify writes for the body with stream: true, the declared tools last", () => {
    const state = createState();
    const tools = declareToolsIn(state, [tool("read"), tool("write")], true).tools;
    const body = { model: "m", messages, tools, stream_options: { include_usage: true }, temperature: 0.2, skipped: undefined };
    const written = encodeStreamedBody(body);
    expect(written).toBeDefined();
    expect(JSON.parse(written!)).toEqual(JSON.parse(JSON.stringify({ ...body, stream: true })));
    expect(written!.endsWith(`"tools":${JSON.stringify(tools)}}`)).toBe(true);
    clearState(state);
  });

  it("leaves to the SDK a body without tools, or with any tool the runtime did not declare", () => {
    const state = createState();
    const [declared] = declareToolsIn(state, [tool("read")], true).tools;
    expect(encodeStreamedBody({ model: "m", messages })).toBeUndefined();
    expect(encodeStreamedBody({ model: "m", messages, tools: [] })).toBeUndefined();
    expect(encodeStreamedBody({ model: "m", messages, tools: [declared, tool("host's own")] })).toBeUndefined();
    expect(encodeStreamedBody({ model: "m", messages, tools: [{ ...declared! }] })).toBeUndefined();
    clearState(state);
  });

  it("keeps the written text out of what a host reads: JSON, spreading and key listings", () => {
    const state = createState();
    const [declared] = declareToolsIn(state, [tool("read")], true).tools;
    expect(Object.keys(declared!)).toEqual(["type", "function"]);
    expect(Object.getOwnPropertySymbols({ ...declared })).toEqual([]);
    expect(JSON.stringify(declared)).not.toContain("declaredJson");
    clearState(state);
  });

  it("parses to the plainly written body for any extra fields and tools", () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), json, { maxKeys: 6 }),
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 5 }),
        (extra, names) => {
          const state = createState();
          try {
            const tools = declareToolsIn(
              state,
              names.map((name) => tool(name)),
              true,
            ).tools;
            const { tools: _dropped, ...rest } = extra;
            const body = { ...rest, model: "m", messages, tools };
            expect(JSON.parse(encodeStreamedBody(body)!)).toEqual(JSON.parse(JSON.stringify({ ...body, stream: true })));
          } finally {
            clearState(state);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("postsDirectly", () => {
  it("is true for the SDK's own client and false where a host wrapped or replaced create", () => {
    const state = createState();
    expect(postsDirectly(getClientIn(state, { baseUrl: "http://127.0.0.1:9/v1" }))).toBe(true);
    const replaced = new OpenAI({ apiKey: "k", baseURL: "http://127.0.0.1:9/v1" });
    const original = replaced.chat.completions.create.bind(replaced.chat.completions);
    replaced.chat.completions.create = ((...args: Parameters<typeof original>) => original(...args)) as typeof original;
    expect(postsDirectly(replaced)).toBe(false);
    const plain = new OpenAI({ apiKey: "k", baseURL: "http://127.0.0.1:9/v1" });
    const traced = new Proxy(plain, {
      get(target, key, receiver) {
        if (key !== "chat") return Reflect.get(target, key, receiver);
        const completions = new Proxy(target.chat.completions, {
          get: (inner, name, innerReceiver) =>
            name === "create" ? (...args: unknown[]) => (inner.create as (...a: unknown[]) => unknown)(...args) : Reflect.get(inner, name, innerReceiver),
        });
        return { completions };
      },
    });
    expect(postsDirectly(traced)).toBe(false);
    // Azure's client puts the deployment into the path from the body as an object.
    expect(postsDirectly(new AzureOpenAI({ apiKey: "k", endpoint: "http://127.0.0.1:9", apiVersion: "2024-10-21" }))).toBe(false);
    clearState(state);
  });
});

describe("streamTurn's request", () => {
  it("sends the written body to the server as JSON, the same request the SDK would have made", async () => {
    const server = await startEndpoint({ profile: "openai" });
    const state = createState();
    try {
      const client = getClientIn(state, { baseUrl: server.baseUrl, apiKey: "sk-test" });
      const tools = declareToolsIn(state, [tool("read")], true).tools;
      server.script(turn({ content: "written" }), turn({ content: "by the SDK" }));
      expect((await streamTurn(client, { model: "m", messages, tools })).content).toBe("written");
      expect((await streamTurn(client, { model: "m", messages, tools: [tool("read")] })).content).toBe("by the SDK");
      const [direct, bySdk] = server.chatRequests();
      expect(direct!.body).toEqual({ model: "m", messages, tools: JSON.parse(JSON.stringify(tools)), stream: true });
      // Written here, the tools come last; written by the SDK, where the body had them.
      expect(Object.keys(direct!.body as object)).toEqual(["model", "messages", "stream", "tools"]);
      expect(Object.keys(bySdk!.body as object)).toEqual(["model", "messages", "tools", "stream"]);
      for (const request of [direct!, bySdk!]) {
        expect(request.headers["content-type"]).toBe("application/json");
        expect(request.headers.authorization).toBe("Bearer sk-test");
      }
    } finally {
      clearState(state);
      await server.close();
    }
  });

  it("goes through a host's wrapped create, so a tracer still sees every request", async () => {
    const server = await startEndpoint({ profile: "openai" });
    const state = createState();
    try {
      const client = new OpenAI({ apiKey: "k", baseURL: server.baseUrl });
      const original = client.chat.completions.create.bind(client.chat.completions);
      let seen = 0;
      client.chat.completions.create = ((...args: Parameters<typeof original>) => {
        seen++;
        return original(...args);
      }) as typeof original;
      server.script(turn({ content: "traced" }));
      const tools = declareToolsIn(state, [tool("read")], true).tools;
      expect((await streamTurn(client, { model: "m", messages, tools })).content).toBe("traced");
      expect(seen).toBe(1);
    } finally {
      clearState(state);
      await server.close();
    }
  });
});
