import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { messageOf, PROFILE_NAMES, PROFILES, refusalWording, turn, type ProfileName } from "../support/endpoint.js";
import { endpointsClosedAfterEach, json } from "../support/endpoint-client.js";

const start = endpointsClosedAfterEach();

describe("routes", () => {
  it("lists models the OpenAI way by default", async () => {
    const server = await start();
    const body = await json(await fetch(`${server.baseUrl}/models`));
    expect(body).toEqual({ object: "list", data: [{ id: "loopback-model", object: "model", created: 1_700_000_000, owned_by: "system" }] });
  });

  it("puts each family's window where that family puts it", async () => {
    const window = 16_384;
    const listing = async (profile: ProfileName) => {
      const server = await start({ profile, contextWindow: window, models: [{ id: "m" }] });
      return json(await fetch(`${server.baseUrl}/models`));
    };
    expect((await listing("vllm")).data[0].max_model_len).toBe(window);
    expect((await listing("openrouter")).data[0].context_length).toBe(window);
    const llama = (await listing("llama.cpp")).data[0];
    expect(llama.meta.n_ctx_train).toBeGreaterThan(window);
    expect(JSON.stringify((await listing("lmstudio")).data[0])).not.toMatch(/context/);
    expect(JSON.stringify((await listing("ollama")).data[0])).not.toMatch(/context|n_ctx|max_model_len/);
    expect(JSON.stringify((await listing("openai")).data[0])).not.toMatch(/context|n_ctx|max_model_len/);
  });

  it("serves llama.cpp's /props with the served window and 404s the LM Studio route", async () => {
    const server = await start({ profile: "llama.cpp", contextWindow: 8192 });
    const props = await json(await fetch(`${server.origin}/props`));
    expect(props.default_generation_settings.n_ctx).toBe(8192);
    const missing = await fetch(`${server.origin}/api/v0/models`);
    expect(missing.status).toBe(404);
    expect(await json(missing)).toEqual({ error: { code: 404, message: "File Not Found", type: "not_found_error" } });
  });

  it("lists llama.cpp models with meta null while loading, and answers /props null with 404", async () => {
    const server = await start({ profile: "llama.cpp", listingWhileLoading: true, props: null });
    expect((await json(await fetch(`${server.baseUrl}/models`))).data[0].meta).toBeNull();
    expect((await fetch(`${server.origin}/props`)).status).toBe(404);
  });

  it("serves LM Studio's /api/v0/models with the loaded window and answers unknown routes 200", async () => {
    const server = await start({ profile: "lmstudio", contextWindow: 4096, models: [{ id: "qwen" }] });
    const native = await json(await fetch(`${server.origin}/api/v0/models`));
    expect(native.data[0]).toMatchObject({ id: "qwen", loaded_context_length: 4096, state: "loaded" });
    const props = await fetch(`${server.origin}/props`);
    expect(props.status).toBe(200);
    expect(await json(props)).toEqual({ error: "Unexpected endpoint or method. (GET /props)" });
  });

  it("answers Ollama's unknown routes with gin's plain 404", async () => {
    const server = await start({ profile: "ollama" });
    for (const path of ["/props", "/api/v0/models"]) {
      const response = await fetch(`${server.origin}${path}`);
      expect(response.status).toBe(404);
      expect(await response.text()).toBe("404 page not found");
    }
  });

  it("answers each family's unknown route in its own shape", async () => {
    const expected: Record<ProfileName, number> = { openai: 404, "llama.cpp": 404, vllm: 404, lmstudio: 200, ollama: 404, openrouter: 404, deepseek: 404 };
    for (const profile of PROFILE_NAMES) {
      const server = await start({ profile });
      const response = await fetch(`${server.origin}/nowhere`);
      expect(response.status, profile).toBe(expected[profile]);
      expect(messageOf(await response.text()), profile).not.toBe("");
    }
  });

  it("merges given listing fields over the family's defaults", async () => {
    const server = await start({
      profile: "vllm",
      models: [
        { id: "a", max_model_len: 999 },
        { id: "b", extra: true },
      ],
    });
    const data = (await json(await fetch(`${server.baseUrl}/models`))).data;
    expect(data.map((m: any) => [m.id, m.max_model_len, m.extra])).toEqual([
      ["a", 999, undefined],
      ["b", 32_768, true],
    ]);
  });
});

describe("the openai SDK against the endpoint", () => {
  for (const profile of PROFILE_NAMES) {
    it(`reads a ${profile} stream and a ${profile} refusal`, async () => {
      const server = await start({ profile, refuse: { fields: ["min_p"] } });
      const client = new OpenAI({ baseURL: server.baseUrl, apiKey: "k", maxRetries: 0 });
      server.script(turn({ content: "hello there", toolCalls: [{ name: "f", arguments: { a: 1 } }] }));
      const stream = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true });
      let content = "";
      let args = "";
      for await (const chunk of stream) {
        content += chunk.choices[0]?.delta.content ?? "";
        args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? "";
      }
      expect([content, args]).toEqual(["hello there", '{"a":1}']);
      const refused = await client.chat.completions
        .create({ model: "m", messages: [{ role: "user", content: "hi" }], min_p: 0.1 } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.APIError);
      expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(refusalWording(PROFILES[profile], "unknownField").status);
    });
  }
});
