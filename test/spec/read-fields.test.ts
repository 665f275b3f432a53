import { describe, expect, it } from "vitest";
import { findSpecSecrets, resolveAgentSpec, SPEC_VERSION } from "../../src/spec.js";
import { accept, doc } from "../support/spec-documents.js";

describe("parseSpec: values", () => {
  it.each([
    ["model.temperature", { model: { temperature: 2.5 } }],
    ["model.temperature", { model: { temperature: -0.1 } }],
    ["model.maxTokens", { model: { maxTokens: -1 } }],
    ["model.maxTokens", { model: { maxTokens: 12.5 } }],
    ["model.contextLength", { model: { contextLength: 0 } }],
    ["model.requestTimeoutSeconds", { model: { requestTimeoutSeconds: -5 } }],
    ["tools.maxIterations", { tools: { maxIterations: 1e300 } }],
    ["tasks.title.temperature", { tasks: { title: { temperature: 9 } } }],
    ["hooks[0].maxTokens", { hooks: [{ id: "h", event: "beforeTurn", maxTokens: -20 }] }],
  ])("drops an out-of-range %s rather than clamping it", (path, fields) => {
    const { spec, warnings } = accept(doc(fields));
    expect(warnings).toEqual([expect.stringMatching(new RegExp(`out of range.*dropped, not clamped`))]);
    expect(warnings[0]?.startsWith(path)).toBe(true);
    expect(JSON.stringify(spec)).not.toMatch(/2\.5|-0\.1|12\.5|1e\+300|"temperature":9|-20|-5|"maxTokens":-1|"contextLength":0/);
  });

  it("falls back to the weaker layer's value when an out-of-range number is dropped", () => {
    const base = accept(doc({ model: { temperature: 0.7 } })).spec;
    const top = accept(doc({ model: { temperature: 3 } })).spec;
    expect(resolveAgentSpec([base, top]).temperature).toBe(0.7);
  });

  it.each([
    ["model.temperature", { model: { temperature: 0 } }, { model: { temperature: 0 } }],
    ["model.maxTokens", { model: { maxTokens: 0 } }, { model: { maxTokens: 0 } }],
    ["model.name", { model: { name: "" } }, { model: { name: "" } }],
    ["tools.servers", { tools: { servers: [] } }, { tools: { servers: [] } }],
    ["tools.toolSelectModel", { tools: { toolSelectModel: "" } }, { tools: { toolSelectModel: "" } }],
    ["extraBody's -1", { model: { extraBody: { id_slot: -1 } } }, { model: { extraBody: { id_slot: -1 } } }],
  ])('keeps %s of 0, -1, "" or [] as a value', (_label, fields, expected) => {
    const { spec, warnings } = accept(doc(fields));
    expect(warnings).toEqual([]);
    expect(spec).toEqual({ spec: SPEC_VERSION, ...expected });
  });

  it("reads null as absent, with no warning, at every level", () => {
    const { spec, warnings } = accept(
      doc({
        name: null,
        model: { name: "m", temperature: null, extraBody: { top_k: null, min_p: 0.05 } },
        tools: null,
        prompt: [null, { id: "a", text: "x" }],
        tasks: { title: null, summary: { maxTokens: null } },
        hooks: null,
      }),
    );
    expect(warnings).toEqual([]);
    expect(spec).toEqual({
      spec: SPEC_VERSION,
      model: { name: "m", extraBody: { min_p: 0.05 } },
      prompt: [{ id: "a", text: "x" }],
      tasks: { summary: {} },
    });
  });

  it("keeps a ${VAR}-shaped string as the literal it is", () => {
    const { spec, warnings } = accept(doc({ model: { name: "${MODEL}", baseUrl: "${BASE_URL}/v1" }, prompt: [{ id: "p", text: "Home is ${HOME}." }] }));
    expect(warnings).toEqual([]);
    expect(spec.model).toEqual({ name: "${MODEL}", baseUrl: "${BASE_URL}/v1" });
    const resolved = resolveAgentSpec([spec]);
    expect(resolved.model).toBe("${MODEL}");
    expect(resolved.system).toBe("Home is ${HOME}.");
  });

  it("keeps any reasoning effort string and every sampler field a model card asks for", () => {
    const { spec } = accept(doc({ model: { reasoningEffort: "high", extraBody: { top_k: 20, min_p: 0, chat_template_kwargs: { enable_thinking: false } } } }));
    expect(spec.model?.extraBody).toEqual({ top_k: 20, min_p: 0, chat_template_kwargs: { enable_thinking: false } });
  });

  it("accepts a hostile key such as __proto__ as data", () => {
    const value = JSON.parse('{"spec":"agent-core/1","tasks":{"__proto__":{"model":"x"}},"model":{"extraBody":{"__proto__":{"polluted":1}}}}');
    const { spec } = accept(value);
    expect(Object.keys(spec.tasks ?? {})).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(resolveAgentSpec([spec]).tasks).toHaveProperty(["__proto__"], { model: "x" });
  });
});

describe("parseSpec: no credential at any depth", () => {
  it.each([
    ["top level", { apiKey: "sk-1" }, "apiKey"],
    ["the model", { model: { apiKey: "sk-1" } }, "model.apiKey"],
    ["the model, snake case", { model: { api_key: "sk-1" } }, "model.api_key"],
    ["a task", { tasks: { title: { apiKey: "sk-1", model: "m" } } }, "tasks.title.apiKey"],
    ["extraBody", { model: { extraBody: { token: "t" } } }, "model.extraBody.token"],
    ["deep inside extraBody", { model: { extraBody: { a: { b: [{ password: "p" }] } } } }, "model.extraBody.a.b[0].password"],
    ["a hook's arguments", { hooks: [{ id: "h", event: "beforeTurn", arguments: { accessToken: "t" } }] }, "hooks[0].arguments.accessToken"],
    ["the tools section", { tools: { key: "k" } }, "tools.key"],
    ["a header-shaped field", { model: { Authorization: "Bearer x" } }, "model.Authorization"],
    ["a ${VAR} reference", { model: { apiKey: "${OPENAI_API_KEY}" } }, "model.apiKey"],
  ])("drops a credential-named field in %s with a warning", (_label, fields, path) => {
    const { spec, warnings } = accept(doc(fields));
    expect(warnings).toEqual([`${path}: is named like a credential, and a document carries none; dropped`]);
    expect(findSpecSecrets(spec)).toEqual([]);
  });

  it.each([
    ["userinfo", "https://user:pass@api.example.com/v1"],
    ["a key in the query", "https://generativelanguage.example.com/v1beta?key=abc123"],
  ])("drops a baseUrl that carries %s", (_label, baseUrl) => {
    const { spec, warnings } = accept(doc({ model: { baseUrl }, tasks: { title: { baseUrl } } }));
    expect(spec.model).toEqual({});
    expect(spec.tasks).toEqual({ title: {} });
    expect(warnings).toHaveLength(2);
    expect(warnings.join("\n")).not.toContain("pass");
  });

  it("keeps fields that only look alike: maxTokens, keyboard, token_limit, AWS_ACCESS_KEY_ID", () => {
    const extraBody = { max_tokens: 5, keyboard: "qwerty", token_limit: 9, AWS_ACCESS_KEY_ID: "id" };
    expect(accept(doc({ model: { maxTokens: 5, extraBody } })).warnings).toEqual([]);
  });

  it("never quotes a dropped credential in a warning", () => {
    const { warnings } = accept(doc({ model: { apiKey: "sk-supersecret", extraBody: { secret: "hunter2" } } }));
    expect(warnings.join("\n")).not.toMatch(/supersecret|hunter2/);
  });
});
