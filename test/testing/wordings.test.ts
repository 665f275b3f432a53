import { describe, expect, it } from "vitest";
import {
  messageOf,
  PROFILE_NAMES,
  PROFILES,
  REFUSAL_KINDS,
  refusal,
  refusalWording,
  WORDING_SAMPLES,
  SAMPLE_ONLY_KINDS,
  type ProfileName,
} from "../support/endpoint.js";
import { endpointsClosedAfterEach, messages, post, events } from "../support/endpoint-client.js";

const start = endpointsClosedAfterEach();

describe("refusal wordings", () => {
  it("gives every family a status, a message and a source for every refusal kind", () => {
    for (const profile of PROFILE_NAMES) {
      for (const kind of REFUSAL_KINDS) {
        const wording = refusalWording(PROFILES[profile], kind);
        expect(wording.source.length, `${profile} ${kind}`).toBeGreaterThan(10);
        expect(messageOf(wording.body({ model: "m" })).length, `${profile} ${kind}`).toBeGreaterThan(3);
        expect([200, 400, 404, 413, 429, 500, 503]).toContain(wording.status);
      }
    }
  });

  it("keeps the exact wordings the specification quotes", () => {
    const message = (profile: ProfileName, kind: (typeof REFUSAL_KINDS)[number], detail: object = {}) =>
      messageOf(refusalWording(PROFILES[profile], kind).body({ model: "gpt-4o", ...detail }));
    expect(message("openai", "reasoningEffort", { value: "none" })).toBe(
      "Unsupported value: 'reasoning_effort' does not support 'none' with this model. Supported values are: 'minimal', 'low', 'medium', and 'high'.",
    );
    expect(message("openai", "unknownField", { field: "min_p" })).toBe("Unrecognized request argument supplied: min_p");
    expect(message("openai", "unknownParameter", { field: "min_p" })).toBe("Unknown parameter: 'min_p'.");
    expect(message("llama.cpp", "tools")).toBe("tools param requires --jinja flag");
    expect(message("llama.cpp", "contextOverflow")).toContain("exceeds the available context size");
    expect(message("vllm", "contextOverflow", { promptTokens: 9000, window: 8192 })).toContain("maximum context length");
    expect(message("openrouter", "tools")).toContain("No endpoints found that support tool use");
    expect(message("openai", "rateLimitTokens")).toMatch(/^Request too large for gpt-4o .* on tokens per min \(TPM\)/);
    expect(refusalWording(PROFILES["llama.cpp"], "loading").body({ model: "m" })).toEqual({
      error: { code: 503, message: "Loading model", type: "unavailable_error" },
    });
    expect(refusalWording(PROFILES["llama.cpp"], "tools").status).toBe(500);
    expect(refusalWording(PROFILES.openrouter, "tools").status).toBe(404);
    expect(refusalWording(PROFILES.openai, "requestTooLarge").status).toBe(413);
    expect(refusalWording(PROFILES.openai, "rateLimitTokens").status).toBe(429);
  });

  it("keeps every extra real-world sample readable, with a kind and a public source", () => {
    expect(WORDING_SAMPLES.length).toBeGreaterThan(15);
    for (const sample of WORDING_SAMPLES) {
      expect([...REFUSAL_KINDS, ...SAMPLE_ONLY_KINDS]).toContain(sample.kind);
      expect(["overflow", "loading", "transient", "none"]).toContain(sample.expected);
      expect(messageOf(sample.body).length, sample.source).toBeGreaterThan(10);
      // A public thread, a provider's own documentation page, or a repository path.
      expect(sample.source).toMatch(/^(https:\/\/[a-z.-]+\.[a-z]+\/|[a-z-]+\/[a-z.-]+ )/);
    }
    for (const profile of PROFILE_NAMES) {
      for (const kind of REFUSAL_KINDS) {
        const wording = PROFILES[profile].refusals[kind];
        if (wording && !wording.invented) expect(wording.source, `${profile} ${kind}`).toMatch(/https:\/\/github\.com\/|\.(cpp|hpp|py|go)\b/);
      }
    }
  });

  it("marks a stand-in wording as invented and keeps the family's body shape", () => {
    const stand = refusalWording(PROFILES.lmstudio, "maxTokens");
    expect(stand.invented).toBe(true);
    expect(typeof (stand.body({ model: "m" }) as { error: unknown }).error).toBe("string");
    expect(refusalWording(PROFILES.openai, "maxTokens").invented).toBeUndefined();
  });

  it("builds an error Scripted for refusal(), and a 200 stream for an overflow inside one", async () => {
    const answer = refusal("openai", "unknownField", "min_p");
    expect(answer).toMatchObject({ kind: "error", status: 400, refusal: "unknownField" });
    const server = await start({ profile: "llama.cpp" });
    server.script(refusal("llama.cpp", "overflowInStream", { promptTokens: 9000, window: 8192 }));
    const response = await post(server, { model: "m", stream: true, messages });
    expect(response.status).toBe(200);
    const list = await events(response);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ error: { code: 400, type: "exceed_context_size_error", n_prompt_tokens: 9000, n_ctx: 8192 } });
  });
});
