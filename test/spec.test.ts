import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_MAX_TOOL_ITERATIONS,
  exportSpec,
  findSpecSecrets,
  MAX_SERVER_ARGS,
  parseSpec,
  resolveAgentSpec,
  SecretSign,
  SPEC_VERSION,
  type AgentSpec,
} from "../src/spec.js";
import { SECRET_SHAPES, SPEC_SHAPES } from "./support/adversarial.js";

/** Parses a document that must be accepted, failing the test with its errors otherwise. */
function accept(value: unknown, options?: Parameters<typeof parseSpec>[1]): { spec: AgentSpec; warnings: string[] } {
  const result = parseSpec(value, options);
  expect(result.errors).toEqual([]);
  expect(result.spec).toBeDefined();
  return { spec: result.spec as AgentSpec, warnings: result.warnings };
}

function doc(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { spec: SPEC_VERSION, ...fields };
}

describe("parseSpec: the version token", () => {
  it.each([["agent-core/1"], ["agent-core/1.0"], ["agent-core/1.7"]])("accepts %s, since only the major is checked", (token) => {
    expect(accept({ spec: token }).spec.spec).toBe(token);
  });

  it.each([
    ["missing", {}],
    ["null", { spec: null }],
    ["another major", { spec: "agent-core/2" }],
    ["a number", { spec: 1 }],
    ["another format", { spec: "other-agent/1" }],
    ["no major", { spec: "agent-core" }],
    ["a major with a leading zero", { spec: "agent-core/01" }],
    ["a minor with a leading zero", { spec: "agent-core/1.01" }],
  ])("refuses a token that is %s", (_label, value) => {
    const result = parseSpec(value);
    expect(result.spec).toBeUndefined();
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatch(/^spec: /);
  });
});

describe("parseSpec: the version token's refusal", () => {
  it("says what a token looks like when it cannot read one", () => {
    expect(parseSpec({ spec: "agent-core/01" }).errors).toEqual([
      'spec: "agent-core/01" is not a "agent-core/<major>" or "agent-core/<major>.<minor>" token (whole numbers without a leading zero, as in "agent-core/1")',
    ]);
  });
});

describe("parseSpec: refuses only the four document-level faults", () => {
  it.each([
    ["an array", []],
    ["a string", "agent-core/1"],
    ["null", null],
    ["a number", 42],
    ["undefined", undefined],
  ])("refuses a document that is %s, not an object", (_label, value) => {
    const result = parseSpec(value);
    expect(result.spec).toBeUndefined();
    expect(result.errors).toEqual([expect.stringMatching(/must be a JSON object/)]);
  });

  it.each([
    ["requires an unknown feature", { requires: ["telepathy"] }, "requires[0]"],
    ["requires a non-name", { requires: [7] }, "requires[0]"],
    ["requires the bundle without { bundle: true }", { requires: ["bundle"] }, "requires[0]"],
    ["has requires of the wrong kind", { requires: "prompt" }, "requires"],
    ["has model as an array", { model: [] }, "model"],
    ["has prompt as an object", { prompt: { id: "a" } }, "prompt"],
    ["has tools as a string", { tools: "all" }, "tools"],
    ["has tools.servers as a string", { tools: { servers: "all" } }, "tools.servers"],
    ["has hooks as an object", { hooks: {} }, "hooks"],
    ["has tasks as an array", { tasks: [] }, "tasks"],
    ["has bundle as an array", { bundle: [] }, "bundle"],
  ])("refuses a document that %s", (_label, fields, path) => {
    const result = parseSpec(doc(fields));
    expect(result.spec).toBeUndefined();
    expect(result.errors).toEqual([expect.stringMatching(new RegExp(`^${path.replace(/[[\].]/g, "\\$&")}: `))]);
  });

  it("refuses bundle.mcpServers of the wrong kind only when reading the bundle", () => {
    expect(parseSpec(doc({ bundle: { mcpServers: "x" } }), { bundle: true }).errors).toEqual([expect.stringMatching(/^bundle\.mcpServers: /)]);
    expect(parseSpec(doc({ bundle: { mcpServers: "x" } })).errors).toEqual([]);
  });

  it("accepts the features it understands, and those a host adds", () => {
    accept(doc({ requires: ["prompt", "tools", "hooks", "tasks"] }));
    accept(doc({ requires: ["bundle"] }), { bundle: true });
    accept(doc({ requires: ["memory"] }), { features: ["memory"] });
  });

  it.each([
    ["an unknown top-level field", { colour: "blue" }, "colour"],
    ["an unknown model field", { model: { name: "m", colour: 1 } }, "model.colour"],
    ["a string where a number goes", { model: { temperature: "0.2" } }, "model.temperature"],
    ["a number where a string goes", { model: { name: 7 } }, "model.name"],
    ["an unknown discovery mode", { tools: { discovery: "lazy" } }, "tools.discovery"],
    ["a prompt entry that is a string", { prompt: ["be brief"] }, "prompt[0]"],
    ["a prompt entry with no id", { prompt: [{ text: "x" }] }, "prompt[0]"],
    ["a prompt entry with no text", { prompt: [{ id: "x" }] }, "prompt[0]"],
    ["a task that is not an object", { tasks: { title: "small" } }, "tasks.title"],
    ["extraBody as an array", { model: { extraBody: [1] } }, "model.extraBody"],
    ["a non-string server name", { tools: { servers: ["fs", 3] } }, "tools.servers[1]"],
  ])("keeps the document and drops %s with a warning", (_label, fields, path) => {
    const { warnings } = accept(doc(fields));
    expect(warnings).toEqual([expect.stringContaining(`${path}: `)]);
  });

  it("drops a hook with an unknown event or none, but keeps one that only switches an inherited hook off", () => {
    const { spec, warnings } = accept(
      doc({
        hooks: [
          { id: "a", event: "whenever" },
          { id: "b", server: "m", tool: "t" },
          { id: "c", enabled: false },
        ],
      }),
    );
    expect(spec.hooks).toEqual([{ id: "c", enabled: false }]);
    expect(warnings).toEqual([
      expect.stringMatching(/^hooks\[0\]\.event: "whenever" is not one of sessionStart, /),
      expect.stringMatching(/^hooks\[0\]: names no event/),
      expect.stringMatching(/^hooks\[1\]: names no event/),
    ]);
  });

  it("reports every problem at once", () => {
    const result = parseSpec({
      spec: "agent-core/9",
      requires: ["telepathy", "prompt", "x-ray"],
      model: "gpt",
      tools: { servers: {}, maxIterations: -1 },
      prompt: [{ id: "a", text: 1 }],
    });
    expect(result.spec).toBeUndefined();
    expect(result.errors).toHaveLength(5);
    expect(result.warnings).toEqual([
      expect.stringContaining("prompt[0].text"),
      expect.stringContaining("prompt[0]: has no text"),
      expect.stringContaining("tools.maxIterations"),
    ]);
  });
});

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

describe("parseSpec: the bundle", () => {
  const bundle = {
    mcpServers: [{ name: "fs", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/data"], env: { DEBUG: "1" } }],
  };

  it("drops bundle.mcpServers with a warning unless asked for", () => {
    const { spec, warnings } = accept(doc({ bundle }));
    expect(spec.bundle).toBeUndefined();
    expect(warnings).toEqual([expect.stringMatching(/^bundle: .*\{ bundle: true \}/)]);
  });

  it("reads bundle.mcpServers under { bundle: true }, env and headers included", () => {
    expect(accept(doc({ bundle }), { bundle: true }).spec.bundle).toEqual(bundle);
  });

  it("reads a pasted .mcp.json object keyed by name as the same list", () => {
    const { spec } = accept(
      doc({
        bundle: { mcpServers: { fs: { command: "npx", args: ["x"] }, web: { type: "http", url: "https://mcp.example.com", headers: { "X-Api-Key": "k" } } } },
      }),
      { bundle: true },
    );
    expect(spec.bundle?.mcpServers).toEqual([
      { name: "fs", command: "npx", args: ["x"] },
      { name: "web", type: "http", url: "https://mcp.example.com", headers: { "X-Api-Key": "k" } },
    ]);
  });

  it("drops a server with no name, or with neither command nor url", () => {
    const { spec, warnings } = accept(doc({ bundle: { mcpServers: [{ command: "x" }, { name: "y" }, { name: "z", url: "http://h" }] } }), {
      bundle: true,
    });
    expect(spec.bundle?.mcpServers).toEqual([{ name: "z", url: "http://h" }]);
    expect(warnings).toHaveLength(2);
  });
});

describe("resolveAgentSpec", () => {
  it("maps a document onto the flat config the loop takes", () => {
    const { spec } = accept(
      doc({
        model: {
          name: "qwen3",
          baseUrl: "http://127.0.0.1:8080/v1",
          temperature: 0.6,
          maxTokens: 2048,
          reasoningEffort: "low",
          extraBody: { top_k: 20 },
          contextLength: 32768,
          requestTimeoutSeconds: 600,
          firstTokenSeconds: 120,
          maxRetries: 2,
          loadingTimeoutSeconds: 300,
        },
        tools: { servers: ["fs"], discovery: "ondemand", maxIterations: 8, toolSelectModel: "small" },
      }),
    );
    expect(resolveAgentSpec([spec])).toEqual({
      baseUrl: "http://127.0.0.1:8080/v1",
      apiKey: "",
      model: "qwen3",
      temperature: 0.6,
      maxTokens: 2048,
      reasoningEffort: "low",
      extraBody: { top_k: 20 },
      contextLength: 32768,
      requestTimeoutSeconds: 600,
      firstTokenSeconds: 120,
      maxRetries: 2,
      loadingTimeoutSeconds: 300,
      servers: ["fs"],
      toolDiscovery: "ondemand",
      maxToolIterations: 8,
      toolSelectModel: "small",
      system: "",
      hooks: [],
      tasks: {},
      requires: [],
    });
  });

  it('yields apiKey "" even when a layer built in code carries one', () => {
    const layer = { spec: SPEC_VERSION, model: { name: "m", apiKey: "sk-live" } } as unknown as AgentSpec;
    expect(resolveAgentSpec([layer]).apiKey).toBe("");
    expect(resolveAgentSpec([]).apiKey).toBe("");
  });

  it("fills only the fields the loop cannot go without when no layer states them", () => {
    expect(resolveAgentSpec([])).toEqual({
      baseUrl: "",
      apiKey: "",
      model: "",
      maxToolIterations: DEFAULT_MAX_TOOL_ITERATIONS,
      system: "",
      hooks: [],
      tasks: {},
      requires: [],
    });
  });

  it("lets an absent field inherit from the weaker layer", () => {
    const base: AgentSpec = { spec: SPEC_VERSION, model: { name: "big", temperature: 0.7, maxTokens: 4096 } };
    const top: AgentSpec = { spec: SPEC_VERSION, model: { temperature: 0.2 } };
    expect(resolveAgentSpec([base, top])).toMatchObject({ model: "big", temperature: 0.2, maxTokens: 4096 });
  });

  it("lets null inherit, as absent does", () => {
    const base: AgentSpec = { spec: SPEC_VERSION, model: { maxTokens: 4096 } };
    const top = { spec: SPEC_VERSION, model: { maxTokens: null } } as unknown as AgentSpec;
    expect(resolveAgentSpec([base, top]).maxTokens).toBe(4096);
  });

  it.each([
    ["maxTokens 0", { maxTokens: 0 }, "maxTokens", 0],
    ["maxTokens -1", { maxTokens: -1 }, "maxTokens", -1],
    ["temperature 0", { temperature: 0 }, "temperature", 0],
    ['baseUrl ""', { baseUrl: "" }, "baseUrl", ""],
    ["extraBody {}", { extraBody: {} }, "extraBody", {}],
  ])("takes %s as a value, not as inherit", (_label, model, key, value) => {
    const base: AgentSpec = { spec: SPEC_VERSION, model: { maxTokens: 100, temperature: 1, baseUrl: "http://a/v1", extraBody: { top_k: 5 } } };
    expect(resolveAgentSpec([base, { spec: SPEC_VERSION, model }])[key as "maxTokens"]).toEqual(value);
  });

  it("drops a bundled server whose args pass MAX_SERVER_ARGS, refused by their length alone", () => {
    const server = (args: string[]) => ({ spec: SPEC_VERSION, requires: ["bundle"], bundle: { mcpServers: [{ name: "s", command: "x", args }] } });
    const within = parseSpec(server(Array.from({ length: MAX_SERVER_ARGS }, () => "-v")), { bundle: true });
    expect(within.spec?.bundle?.mcpServers?.[0]?.args).toHaveLength(MAX_SERVER_ARGS);
    const past = parseSpec(server(Array.from({ length: MAX_SERVER_ARGS + 1 }, () => "-v")), { bundle: true });
    expect(past.spec?.bundle).toEqual({ mcpServers: [] });
    expect(past.warnings).toEqual([
      `bundle.mcpServers[0].args: holds ${MAX_SERVER_ARGS + 1} entries, more than the ${MAX_SERVER_ARGS} a server's args may; dropped`,
      "bundle.mcpServers[0]: cannot be run with the arguments it was given; dropped",
    ]);
  });

  it("drops a repeated server name with one warning per name, at its first repeat, however often it repeats", () => {
    const { spec, warnings } = parseSpec({ spec: SPEC_VERSION, tools: { servers: ["fs", "web", "fs", "fs", "web", "mail", "fs"] } });
    expect(spec?.tools?.servers).toEqual(["fs", "web", "mail"]);
    expect(warnings).toEqual(['tools.servers[2]: repeats "fs" (and 2 later entries); dropped', 'tools.servers[4]: repeats "web"; dropped']);
  });

  it("keeps tools.servers tri-state: absent is every server, [] none, a list exactly those", () => {
    expect(resolveAgentSpec([{ spec: SPEC_VERSION }]).servers).toBeUndefined();
    expect(resolveAgentSpec([{ spec: SPEC_VERSION, tools: { servers: [] } }]).servers).toEqual([]);
    expect(resolveAgentSpec([{ spec: SPEC_VERSION, tools: { servers: ["fs", "web"] } }]).servers).toEqual(["fs", "web"]);
  });

  it("replaces tools.servers whole rather than unioning, so [] narrows a wider list", () => {
    const wide: AgentSpec = { spec: SPEC_VERSION, tools: { servers: ["fs", "web"] } };
    expect(resolveAgentSpec([wide, { spec: SPEC_VERSION, tools: { servers: [] } }]).servers).toEqual([]);
    expect(resolveAgentSpec([wide, { spec: SPEC_VERSION, tools: { servers: ["mail"] } }]).servers).toEqual(["mail"]);
    expect(resolveAgentSpec([wide, { spec: SPEC_VERSION, tools: { maxIterations: 3 } }]).servers).toEqual(["fs", "web"]);
  });

  it("replaces extraBody whole, so a weaker layer's sampler field does not leak in", () => {
    const base: AgentSpec = { spec: SPEC_VERSION, model: { extraBody: { min_p: 0.1, top_k: 40 } } };
    const top: AgentSpec = { spec: SPEC_VERSION, model: { extraBody: { top_k: 20 } } };
    expect(resolveAgentSpec([base, top]).extraBody).toEqual({ top_k: 20 });
  });

  it("stacks prompt entries with different ids and replaces the same id where it stood", () => {
    const base: AgentSpec = {
      spec: SPEC_VERSION,
      prompt: [
        { id: "persona", text: "You are terse." },
        { id: "rules", text: "Cite sources." },
      ],
    };
    const top: AgentSpec = {
      spec: SPEC_VERSION,
      prompt: [
        { id: "persona", text: "You are warm." },
        { id: "extra", text: "Use metric." },
      ],
    };
    expect(resolveAgentSpec([base, top]).system).toBe("You are warm.\n\nCite sources.\n\nUse metric.");
  });

  it("lets an entry with empty text silence an inherited one", () => {
    const base: AgentSpec = {
      spec: SPEC_VERSION,
      prompt: [
        { id: "a", text: "A" },
        { id: "b", text: "B" },
      ],
    };
    expect(resolveAgentSpec([base, { spec: SPEC_VERSION, prompt: [{ id: "a", text: "" }] }]).system).toBe("B");
  });

  it("stacks hooks by id, replaces the same id, and leaves out one switched off", () => {
    const base: AgentSpec = {
      spec: SPEC_VERSION,
      hooks: [
        { id: "recall", event: "beforeTurn", server: "memory", tool: "recall" },
        { id: "log", event: "afterTurn", server: "audit", tool: "write" },
      ],
    };
    const top: AgentSpec = {
      spec: SPEC_VERSION,
      hooks: [
        { id: "recall", event: "beforeTurn", server: "memory", tool: "recall", maxTokens: 500 },
        { id: "log", enabled: false },
        { id: "greet", event: "sessionStart", server: "crm", tool: "lookup" },
      ],
    };
    expect(resolveAgentSpec([base, top]).hooks).toEqual([
      { id: "recall", event: "beforeTurn", server: "memory", tool: "recall", maxTokens: 500 },
      { id: "greet", event: "sessionStart", server: "crm", tool: "lookup" },
    ]);
  });

  it("stacks tasks by key and replaces the same key whole, holding only what a layer stated", () => {
    const base: AgentSpec = { spec: SPEC_VERSION, tasks: { title: { model: "small", temperature: 0.5 }, compaction: { model: "mid" } } };
    const top: AgentSpec = { spec: SPEC_VERSION, model: { temperature: 1, extraBody: { top_k: 5 } }, tasks: { title: { maxTokens: 0 } } };
    expect(resolveAgentSpec([base, top]).tasks).toEqual({ title: { maxTokens: 0 }, compaction: { model: "mid" } });
  });

  it("never lends a task the agent's temperature or extraBody", () => {
    const spec: AgentSpec = { spec: SPEC_VERSION, model: { temperature: 1, extraBody: { min_p: 0.1 } }, tasks: { title: {} } };
    expect(resolveAgentSpec([spec]).tasks.title).toEqual({});
  });

  it("keeps toolSelectModel as the flattened spelling beside tasks.toolSelect", () => {
    const spec: AgentSpec = {
      spec: SPEC_VERSION,
      tools: { toolSelectModel: "qwen3-0.6b" },
      tasks: { toolSelect: { model: "tiny", baseUrl: "http://127.0.0.1:8081/v1", maxTokens: 256, reasoningEffort: "off" } },
    };
    const resolved = resolveAgentSpec([spec]);
    expect(resolved.toolSelectModel).toBe("qwen3-0.6b");
    expect(resolved.tasks.toolSelect).toEqual({ model: "tiny", baseUrl: "http://127.0.0.1:8081/v1", maxTokens: 256, reasoningEffort: "off" });
    expect(resolved.tasks.toolSelect?.apiKey).toBeUndefined();
  });

  it("merges bundled servers by name and gathers every layer's requires", () => {
    const base: AgentSpec = {
      spec: SPEC_VERSION,
      requires: ["hooks"],
      bundle: {
        mcpServers: [
          { name: "fs", command: "a" },
          { name: "web", url: "http://w" },
        ],
      },
    };
    const top: AgentSpec = { spec: SPEC_VERSION, requires: ["bundle", "hooks"], bundle: { mcpServers: [{ name: "fs", command: "b" }] } };
    const resolved = resolveAgentSpec([base, top]);
    expect(resolved.mcpServers).toEqual([
      { name: "fs", command: "b" },
      { name: "web", url: "http://w" },
    ]);
    expect(resolved.requires).toEqual(["hooks", "bundle"]);
  });

  it("does not share objects with its layers", () => {
    const spec: AgentSpec = { spec: SPEC_VERSION, model: { extraBody: { stop: ["a"] } }, tools: { servers: ["fs"] } };
    const resolved = resolveAgentSpec([spec]);
    (resolved.extraBody?.stop as string[]).push("b");
    resolved.servers?.push("web");
    expect(spec).toEqual({ spec: SPEC_VERSION, model: { extraBody: { stop: ["a"] } }, tools: { servers: ["fs"] } });
  });

  it("takes the strongest layer's name and description", () => {
    expect(
      resolveAgentSpec([
        { spec: SPEC_VERSION, name: "a", description: "d" },
        { spec: SPEC_VERSION, name: "b" },
      ]),
    ).toMatchObject({
      name: "b",
      description: "d",
    });
  });
});

const secretful = {
  spec: SPEC_VERSION,
  bundle: {
    mcpServers: [
      {
        name: "github",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-github", "--api-key", "abc123def", "--token=xyz"],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_0123456789abcdefghijABCDEFGHIJ012345" },
      },
      { name: "remote", url: "https://bob:hunter2@mcp.example.com/sse?token=abc", headers: { Authorization: "Bearer sk-abcdefghijklmnopqrstuvwx" } },
    ],
  },
};

describe("exportSpec", () => {
  it("strips every bundled server's env and headers", () => {
    const { spec } = accept(secretful, { bundle: true });
    const out = exportSpec(spec);
    for (const server of out.bundle?.mcpServers ?? []) {
      expect(server).not.toHaveProperty("env");
      expect(server).not.toHaveProperty("headers");
    }
  });

  it("leaves a document that re-parses with no errors and no warnings", () => {
    const { spec } = accept(secretful, { bundle: true });
    expect(parseSpec(exportSpec(spec), { bundle: true })).toEqual({ spec: exportSpec(spec), errors: [], warnings: [] });
  });

  it("keeps a credential in args or url, since a cut server is a different server", () => {
    const { spec } = accept(secretful, { bundle: true });
    const out = exportSpec(spec);
    expect(out.bundle?.mcpServers?.[0]?.args).toContain("abc123def");
    expect(out.bundle?.mcpServers?.[1]?.url).toBe("https://bob:hunter2@mcp.example.com/sse?token=abc");
  });

  it("does not change the spec it was given", () => {
    const { spec } = accept(secretful, { bundle: true });
    const before = JSON.stringify(spec);
    exportSpec(spec);
    expect(JSON.stringify(spec)).toBe(before);
  });

  it("writes a valid token and leaves out what a spec built in code got wrong", () => {
    const odd = { model: "gpt", prompt: [{ id: "a", text: "x" }] } as unknown as AgentSpec;
    const out = exportSpec(odd);
    expect(out).toEqual({ spec: SPEC_VERSION, prompt: [{ id: "a", text: "x" }] });
    expect(parseSpec(out).errors).toEqual([]);
  });
});

describe("findSpecSecrets", () => {
  it("names each place in a pasted .mcp.json and why, never the value", () => {
    const hints = findSpecSecrets(secretful);
    expect(hints).toEqual([
      { path: "bundle.mcpServers[0].args[3]", server: "github", sign: SecretSign.Flag },
      { path: "bundle.mcpServers[0].args[4]", server: "github", sign: SecretSign.Flag },
      { path: "bundle.mcpServers[0].env.GITHUB_PERSONAL_ACCESS_TOKEN", server: "github", sign: SecretSign.Field },
      { path: "bundle.mcpServers[1].url", server: "remote", sign: SecretSign.Userinfo },
      { path: "bundle.mcpServers[1].headers.Authorization", server: "remote", sign: SecretSign.Field },
    ]);
    expect(JSON.stringify(hints)).not.toMatch(/abc123|xyz|ghp_|hunter2|sk-/);
  });

  it.each([
    ["userinfo in a url", { url: "https://user:pw@h.example.com/mcp" }, "url", SecretSign.Userinfo],
    ["a lone user in a url", { url: "https://ghp_token@h.example.com/mcp" }, "url", SecretSign.Userinfo],
    ["a ?token= query", { url: "https://h.example.com/mcp?token=abc" }, "url", SecretSign.Query],
    ["an &api_key= query", { url: "https://h.example.com/mcp?v=2&api_key=abc" }, "url", SecretSign.Query],
    ["the value after --api-key", { command: "x", args: ["--api-key", "abc"] }, "args[1]", SecretSign.Flag],
    ["a --password=value", { command: "x", args: ["--password=abc"] }, "args[0]", SecretSign.Flag],
    ["an sk- key", { command: "x", args: ["sk-proj-0123456789abcdefghij"] }, "args[0]", SecretSign.Value],
    ["a ghp_ token", { command: "x", args: ["ghp_0123456789abcdefghijABCDEFGHIJ0123"] }, "args[0]", SecretSign.Value],
    ["a long high-entropy run", { command: "x", args: ["a9F3kQ7zL2mX8pR4tV6wY1bN5cH0jD"] }, "args[0]", SecretSign.Value],
    ["a JWT", { command: "x", args: ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig"] }, "args[0]", SecretSign.Value],
    ["a credential-named env var", { command: "x", env: { OPENAI_API_KEY: "abc" } }, "env.OPENAI_API_KEY", SecretSign.Field],
    ["an odd header name", { url: "http://h", headers: { "X-Api-Key": "abc" } }, 'headers["X-Api-Key"]', SecretSign.Field],
  ])("reports %s", (_label, server, where, sign) => {
    const document = { spec: SPEC_VERSION, bundle: { mcpServers: [{ name: "s", ...server }] } };
    expect(findSpecSecrets(document)).toEqual([{ path: `bundle.mcpServers[0].${where}`, server: "s", sign }]);
  });

  it.each([
    ["a ${VAR} env value", { command: "x", env: { GITHUB_TOKEN: "${GITHUB_TOKEN}" } }],
    ["a Bearer ${VAR} header", { url: "http://h", headers: { Authorization: "Bearer ${TOKEN}" } }],
    ["a ${VAR} after a flag", { command: "x", args: ["--api-key", "${API_KEY}"] }],
    ["a ${VAR} in a query", { url: "https://h/mcp?token=${TOKEN}" }],
    ["${VAR} userinfo", { url: "https://${USER}:${PASS}@h/mcp" }],
    ["a flag followed by another flag", { command: "x", args: ["--no-auth", "--port", "8080"] }],
    ["ordinary args", { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/projects"] }],
    ["a UUID-free, short id", { command: "x", args: ["--id", "1234"] }],
  ])("does not report %s", (_label, server) => {
    expect(findSpecSecrets({ spec: SPEC_VERSION, bundle: { mcpServers: [{ name: "s", ...server }] } })).toEqual([]);
  });

  it("names a flag whose last word is key, and misses a short secret nothing names: a guess both ways", () => {
    const hints = findSpecSecrets({
      bundle: { mcpServers: [{ name: "s", command: "x", args: ["--keyboard", "us", "--sort-key", "date", "-p", "hunter2", "hunter2"] }] },
    });
    expect(hints).toEqual([{ path: "bundle.mcpServers[0].args[3]", server: "s", sign: SecretSign.Flag }]);
  });

  describe("on a table of places that do and do not hold a credential", () => {
    const uuid = "123e4567-e89b-12d3-a456-426614174000";
    /** [label, the server's fields, each place holding a credential and its sign]. */
    const holding: Array<[string, Record<string, unknown>, Record<string, SecretSign>]> = [
      ["the value after --api-key", { command: "x", args: ["--api-key", "abc123"] }, { "args[1]": SecretSign.Flag }],
      ["a --password=value", { command: "x", args: ["--password=abc123"] }, { "args[0]": SecretSign.Flag }],
      ["the value after --pass", { command: "x", args: ["--pass", "hunter2"] }, { "args[1]": SecretSign.Flag }],
      ["the value after --authtoken", { command: "x", args: ["--authtoken", "abc123"] }, { "args[1]": SecretSign.Flag }],
      ["the value after --client-secret=", { command: "x", args: ["--client-secret=abc123"] }, { "args[0]": SecretSign.Flag }],
      ["an sk- key among args", { command: "x", args: ["sk-proj-0123456789abcdefghij"] }, { "args[0]": SecretSign.Value }],
      ["a JWT among args", { command: "x", args: ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig"] }, { "args[0]": SecretSign.Value }],
      ["a credential-named env var", { command: "x", env: { OPENAI_API_KEY: "abc" } }, { "env.OPENAI_API_KEY": SecretSign.Field }],
      ["a credential-named header", { url: "http://h", headers: { "X-Api-Key": "abc" } }, { 'headers["X-Api-Key"]': SecretSign.Field }],
      ["userinfo in a url", { url: "https://user:pw@h.example.com/mcp" }, { url: SecretSign.Userinfo }],
      [
        "userinfo in a database url after a flag",
        { command: "x", args: ["--db-url", "postgres://u:pw@db.example.com/app"] },
        { "args[1]": SecretSign.Userinfo },
      ],
      [
        "userinfo in a database url in env",
        { command: "x", env: { DATABASE_URL: "postgres://u:pw@db.example.com/app" } },
        { "env.DATABASE_URL": SecretSign.Userinfo },
      ],
      ["a ?token= query", { url: "https://h.example.com/mcp?token=abc" }, { url: SecretSign.Query }],
      ["a ?jwt= query", { url: "https://h.example.com/mcp?jwt=abc123" }, { url: SecretSign.Query }],
      ["an #access_token= fragment", { url: "https://h.example.com/mcp#access_token=abc123&state=x" }, { url: SecretSign.Query }],
      [
        "a key-shaped query value under a neutral name",
        { url: "https://h.example.com/mcp?k=ghp_0123456789abcdefghijABCDEFGHIJ0123" },
        { url: SecretSign.Query },
      ],
      [
        "a key-shaped segment of a url's path",
        { url: "https://hooks.example.com/services/T024BE7LD/B0123456/aZ3kQ9xLm2Pq7Rt5Vw8Yb1Nc" },
        { url: SecretSign.Value },
      ],
      ["a bot token in a url's path", { url: "https://api.example.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/getMe" }, { url: SecretSign.Value }],
      ["an sk- key in a url's path", { url: "https://h.example.com/mcp/sk-proj-0123456789abcdefghij" }, { url: SecretSign.Value }],
      ["a header line after --header", { command: "x", args: ["--header", "Authorization: Bearer abc123"] }, { "args[1]": SecretSign.Header }],
      ["a header line after -H", { command: "x", args: ["-H", "X-Api-Key: abc123"] }, { "args[1]": SecretSign.Header }],
      ["a header line in --header=", { command: "x", args: ["--header=Authorization: Bearer abc123"] }, { "args[0]": SecretSign.Header }],
      ["a cookie header line", { command: "x", args: ["--header", "Cookie: session=abc123"] }, { "args[1]": SecretSign.Header }],
      ["a header line inside command", { command: "curl -H 'Authorization: Bearer abc123' https://h.example.com" }, { command: SecretSign.Header }],
      ["a header line in a quoted command word", { command: "server --header 'X-Api-Key: abc123'" }, { command: SecretSign.Header }],
      ["a credential assignment inside command", { command: "API_KEY=abc123 node server.js" }, { command: SecretSign.Field }],
      ["-e NAME=value inside command", { command: "docker run -e GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ0123 image" }, { command: SecretSign.Field }],
      ["--api-key inside command", { command: "npx server --api-key abc123" }, { command: SecretSign.Flag }],
      ["--token= inside command", { command: "npx server --token=abc123" }, { command: SecretSign.Flag }],
      ["userinfo in a url inside command", { command: "server https://u:pw@h.example.com/mcp" }, { command: SecretSign.Userinfo }],
      ["a UUID in an env var of a neutral name", { command: "x", env: { MAPS_LICENSE: uuid } }, { "env.MAPS_LICENSE": SecretSign.Value }],
      ["a UUID in a header of a neutral name", { url: "http://h", headers: { "X-License": uuid } }, { 'headers["X-License"]': SecretSign.Value }],
      ["a UUID as a positional arg", { command: "x", args: [uuid] }, { "args[0]": SecretSign.Value }],
      ["a UUID after --license", { command: "x", args: ["--license", uuid] }, { "args[1]": SecretSign.Value }],
    ];
    /** [label, the server's fields]: places that hold no credential. */
    const clean: Array<[string, Record<string, unknown>]> = [
      ["the value after --keyboard", { command: "x", args: ["--keyboard", "us"] }],
      ["the value after --max-tokens", { command: "x", args: ["--max-tokens", "100"] }],
      ["the value after --tokenizer", { command: "x", args: ["--tokenizer", "gpt2"] }],
      ["the value after --auth-type", { command: "x", args: ["--auth-type", "oauth"] }],
      ["the value after --passthrough", { command: "x", args: ["--passthrough", "stdio"] }],
      ["the value after --bearer-format", { command: "x", args: ["--bearer-format", "jwt"] }],
      ["the path after --keyfile", { command: "x", args: ["--keyfile", "/etc/ssl/server.pem"] }],
      ["the path after --api-key-file", { command: "x", args: ["--api-key-file", "/run/secrets/key"] }],
      ["a flag followed by another flag", { command: "x", args: ["--no-auth", "--port", "8080"] }],
      ["an Accept header line", { command: "x", args: ["--header", "Accept: application/json"] }],
      ["a request id header line", { command: "x", args: ["--header", "X-Request-Id: 123"] }],
      ["a header line holding a ${VAR}", { command: "x", args: ["-H", "Authorization: Bearer ${TOKEN}"] }],
      ["an ordinary url path", { url: "https://h.example.com/repos/octocat/hello-world/issues" }],
      ["a commit hash in a url's path", { url: "https://raw.example.com/o/r/a94a8fe5ccb19ba61c4c0873d391e987982fbbd3/README.md" }],
      ["a UUID in a url's path", { url: `https://h.example.com/projects/${uuid}/mcp` }],
      ["a plain fragment", { url: "https://h.example.com/mcp#section-2" }],
      ["an ordinary query", { url: "https://h.example.com/mcp?format=json&page=2" }],
      ["a query naming a key's format", { url: "https://h.example.com/mcp?key-format=pem" }],
      ["a ${VAR} in a query", { url: "https://h.example.com/mcp?token=${TOKEN}" }],
      ["an ordinary command", { command: "npx -y @modelcontextprotocol/server-filesystem /home/me/projects" }],
      ["a command with flags", { command: "node server.js --port 8080 --verbose --max-tokens 500" }],
      ["a command with --keyboard-layout", { command: "npx tsx server.ts --keyboard-layout us" }],
      ["a command naming an env var without a value", { command: "docker run -i --rm -e GITHUB_TOKEN ghcr.io/github/github-mcp-server" }],
      ["a command assigning a ${VAR}", { command: "API_KEY=${API_KEY} node server.js" }],
      ["a UUID in an env var named as an id", { command: "x", env: { PROJECT_ID: uuid } }],
      ["a UUID after --project-id", { command: "x", args: ["--project-id", uuid] }],
      ["a UUID after --id", { command: "x", args: ["--id", uuid] }],
      ["a UUID in --workspace=", { command: "x", args: [`--workspace=${uuid}`] }],
      ["a model name", { command: "x", args: ["--model", "claude-3-5-sonnet-20241022"] }],
      ["a short id", { command: "x", args: ["--id", "1234"] }],
      ["an ordinary env var", { command: "x", env: { LOG_LEVEL: "debug" } }],
    ];
    const places = (server: Record<string, unknown>): Record<string, SecretSign> =>
      Object.fromEntries(
        findSpecSecrets({ spec: SPEC_VERSION, bundle: { mcpServers: [{ name: "s", ...server }] } }).map((hint) => [
          hint.path.replace("bundle.mcpServers[0].", ""),
          hint.sign,
        ]),
      );

    it.each(holding)("finds %s", (_label, server, where) => {
      expect(places(server)).toEqual(where);
    });

    it.each(clean)("reports nothing for %s", (_label, server) => {
      expect(places(server)).toEqual({});
    });
  });

  it("reads places outside the bundle too, with an empty server", () => {
    expect(findSpecSecrets({ spec: SPEC_VERSION, model: { apiKey: "x", baseUrl: "http://u:p@h/v1" } })).toEqual([
      { path: "model.apiKey", server: "", sign: SecretSign.Field },
      { path: "model.baseUrl", server: "", sign: SecretSign.Userinfo },
    ]);
  });

  it("names a server of the object form by its key", () => {
    expect(findSpecSecrets({ bundle: { mcpServers: { gh: { command: "x", env: { TOKEN: "t" } } } } })).toEqual([
      { path: "bundle.mcpServers.gh.env.TOKEN", server: "gh", sign: SecretSign.Field },
    ]);
  });

  it("reads any value without throwing, cycles included", () => {
    const cyclic: Record<string, unknown> = { token: "t" };
    cyclic.self = cyclic;
    expect(findSpecSecrets(cyclic)).toEqual([{ path: "token", server: "", sign: SecretSign.Field }]);
    for (const value of [null, undefined, 1, "sk-0123456789abcdefghijklmn", [], () => 1]) expect(() => findSpecSecrets(value)).not.toThrow();
  });
});

describe("adversarial shapes, as the bench times them", () => {
  const size = fc.integer({ min: 1, max: 6_000 });
  type Expected = { warnings: number; read?: (spec: AgentSpec) => void; secrets?: Array<[string, SecretSign]> };
  const serverCount = (spec: AgentSpec) => spec.tools?.servers?.length ?? 0;

  /** Per document shape, what parseSpec documents for it (warnings, what it keeps) and what findSpecSecrets names. */
  const documents: Record<string, (document: Record<string, unknown>) => Expected> = {
    "an upper-case field name": () => ({ warnings: 1, read: (spec) => expect(spec.model).toEqual({}) }),
    "a camelCase field name": () => ({ warnings: 1, read: (spec) => expect(spec.model).toEqual({}) }),
    "a ${ run in a base URL": () => ({ warnings: 1, read: (spec) => expect(spec.model).toEqual({}), secrets: [["model.baseUrl", SecretSign.Userinfo]] }),
    "a ${ run in extraBody": (document) => ({ warnings: 0, read: (spec) => expect(spec.model).toEqual((document as { model: unknown }).model) }),
    "distinct tools.servers": (document) => ({ warnings: 0, read: (spec) => expect(spec.tools).toEqual(document.tools) }),
    "repeated tools.servers": (document) => {
      const servers = (document.tools as { servers: string[] }).servers;
      return { warnings: servers.length > 1 ? 1 : 0, read: (spec) => expect(serverCount(spec)).toBe(1) };
    },
    "many prompt entries": (document) => ({ warnings: 0, read: (spec) => expect(spec.prompt).toEqual(document.prompt) }),
    "many requires entries": () => ({ warnings: 0, read: (spec) => expect(spec.requires).toEqual(["tools"]) }),
    "credential-named keys in extraBody": (document) => {
      const keys = Object.keys((document.model as { extraBody: object }).extraBody);
      return {
        warnings: keys.length,
        read: (spec) => expect(spec.model).toEqual({ extraBody: {} }),
        secrets: keys.map((key) => [`model.extraBody.${key}`, SecretSign.Field]),
      };
    },
    "a long query string in a task URL": (document) => ({ warnings: 0, read: (spec) => expect(spec.tasks).toEqual(document.tasks) }),
    "bundled servers with flag-dense args": (document) => {
      const [server] = (document.bundle as { mcpServers: { args: string[] }[] }).mcpServers;
      // Past MAX_SERVER_ARGS the list is refused by its length, and the server with it.
      if (server!.args.length > MAX_SERVER_ARGS) return { warnings: 2, read: (spec) => expect(spec.bundle).toEqual({ mcpServers: [] }) };
      return { warnings: 0, read: (spec) => expect(spec.bundle).toEqual(document.bundle) };
    },
  };

  it.each(SPEC_SHAPES.map((shape) => [shape.name, shape] as const))("reads, exports and scans %s as documented at any size", (_name, shape) => {
    fc.assert(
      fc.property(size, (bytes) => {
        const document = shape.build(bytes);
        const expected = (documents[shape.name] as (document: Record<string, unknown>) => Expected)(document);
        const { spec, errors, warnings } = parseSpec(document, { bundle: true });
        expect(errors).toEqual([]);
        expect(warnings).toHaveLength(expected.warnings);
        expected.read?.(spec as AgentSpec);
        expect(parseSpec(exportSpec(spec as AgentSpec), { bundle: true })).toMatchObject({ errors: [], warnings: [] });
        expect(findSpecSecrets(document).map((hint) => [hint.path, hint.sign])).toEqual(expected.secrets ?? []);
      }),
      { numRuns: 20 },
    );
  });

  /** A key is at least 20 characters long. */
  const keyShaped = (document: Record<string, unknown>): Array<[string, SecretSign]> =>
    (document.value as string).length >= 20 ? [["value", SecretSign.Value]] : [];
  /** Per value shape beyond the documents, the places findSpecSecrets names in it. */
  const values: Record<string, (document: Record<string, unknown>) => Array<[string, SecretSign]>> = {
    "a key-prefixed long string": keyShaped,
    "a high-entropy long string": keyShaped,
    "a URL with a long path": () => [],
    "a URL with a long fragment": () => [],
    "a command with many words": () => [],
    "header-shaped args": () => [],
    "deeply nested arrays": () => [],
  };

  it.each(SECRET_SHAPES.filter((shape) => shape.name in values).map((shape) => [shape.name, shape] as const))(
    "names in %s only what the signs say, at any size",
    (name, shape) => {
      fc.assert(
        fc.property(size, (bytes) => {
          const document = shape.build(bytes);
          expect(findSpecSecrets(document).map((hint) => [hint.path, hint.sign])).toEqual(
            (values[name] as (document: Record<string, unknown>) => unknown)(document),
          );
        }),
        { numRuns: 20 },
      );
    },
  );
});

describe("robustness", () => {
  function nested(depth: number, make: (inner: unknown) => unknown): unknown {
    let value: unknown = "leaf";
    for (let level = 0; level < depth; level += 1) value = make(value);
    return value;
  }

  it.each([
    ["objects in extraBody", { model: { extraBody: nested(100_000, (inner) => ({ a: inner })) } }],
    ["arrays in extraBody", { model: { extraBody: { a: nested(100_000, (inner) => [inner]) } } }],
    ["arrays as a prompt entry", { prompt: [nested(100_000, (inner) => [inner])] }],
    ["objects in a hook's arguments", { hooks: [{ id: "h", event: "afterTurn", arguments: nested(100_000, (inner) => ({ a: inner })) }] }],
  ])("reads %s nested 100,000 deep without throwing, dropping what is too deep", (_label, fields) => {
    const value = doc(fields);
    const result = parseSpec(value);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toHaveLength(1);
    expect(() => findSpecSecrets(value)).not.toThrow();
    expect(() => exportSpec(result.spec as AgentSpec)).not.toThrow();
    expect(() => resolveAgentSpec([result.spec as AgentSpec])).not.toThrow();
  });

  it("reads a document with 100,000 prompt entries", () => {
    const prompt = Array.from({ length: 100_000 }, (_, index) => ({ id: `p${index}`, text: "x" }));
    const { spec } = accept(doc({ prompt }));
    expect(resolveAgentSpec([spec]).system.length).toBe(100_000 * 3 - 2);
  });

  it("drops non-JSON values and cycles with a warning", () => {
    const extraBody: Record<string, unknown> = { f: () => 1, n: Number.NaN, d: new Date(0), b: 10n, ok: 1 };
    extraBody.self = extraBody;
    const { spec, warnings } = accept(doc({ model: { extraBody } }));
    expect(spec.model?.extraBody).toEqual({ ok: 1 });
    expect(warnings).toHaveLength(5);
  });

  it("never throws on arbitrary JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const result = parseSpec(value);
        expect(Array.isArray(result.errors)).toBe(true);
        findSpecSecrets(value);
      }),
      { numRuns: 300 },
    );
  });

  it("never throws on arbitrary documents with the right token", () => {
    const section = fc.oneof(fc.jsonValue(), fc.dictionary(fc.string(), fc.jsonValue()), fc.array(fc.jsonValue()));
    const key = fc.constantFrom("model", "prompt", "tools", "hooks", "tasks", "bundle", "requires", "name", "apiKey", "other");
    fc.assert(
      fc.property(fc.dictionary(key, section), fc.boolean(), (fields, bundle) => {
        const result = parseSpec(doc(fields), { bundle });
        if (result.spec) {
          resolveAgentSpec([result.spec]);
          expect(parseSpec(exportSpec(result.spec), { bundle }).errors).toEqual([]);
        }
      }),
      { numRuns: 300 },
    );
  });
});

/** Valid documents, generated field by field. */
const number = (min: number, max: number, integer = false) => (integer ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true }));
const text = fc.string({ maxLength: 12 });
const id = fc.string({ minLength: 1, maxLength: 6 });
const extraBody = fc.dictionary(
  fc.constantFrom("top_k", "min_p", "id_slot", "cache_prompt", "stop"),
  fc.oneof(fc.integer({ min: -1, max: 100 }), fc.boolean(), fc.array(text)),
);
const task = fc.record(
  {
    model: text,
    baseUrl: fc.constantFrom("", "http://127.0.0.1:8081/v1"),
    maxTokens: number(0, 4096, true),
    temperature: number(0, 2),
    reasoningEffort: fc.constantFrom("off", "low", "high"),
    extraBody,
  },
  { requiredKeys: [] },
);
const server = fc.record(
  {
    name: id,
    command: fc.constantFrom("npx", "uvx"),
    args: fc.array(fc.oneof(text, fc.constantFrom("--api-key", "--token=abc", "sk-0123456789abcdefghijkl"))),
    env: fc.dictionary(fc.constantFrom("TOKEN", "GITHUB_TOKEN", "DEBUG", "API_KEY"), fc.oneof(text, fc.constant("ghp_0123456789abcdefghijABCDEFGHIJ0123"))),
    headers: fc.dictionary(fc.constantFrom("Authorization", "X-Api-Key", "Accept"), text),
  },
  { requiredKeys: ["name", "command"] },
);
const agentSpec = fc.record(
  {
    spec: fc.constantFrom("agent-core/1", "agent-core/1.3"),
    name: text,
    model: fc.record(
      {
        name: text,
        baseUrl: fc.constantFrom("", "http://127.0.0.1:8080/v1", "${BASE_URL}"),
        temperature: number(0, 2),
        maxTokens: number(0, 100_000, true),
        reasoningEffort: fc.constantFrom("off", "low", "medium", "high"),
        extraBody,
        contextLength: number(1, 1_000_000, true),
        requestTimeoutSeconds: number(0, 3600),
        firstTokenSeconds: number(0, 3600),
        maxRetries: number(0, 10, true),
        loadingTimeoutSeconds: number(0, 3600),
      },
      { requiredKeys: [] },
    ),
    prompt: fc.uniqueArray(fc.record({ id, text }), { selector: (entry) => entry.id, maxLength: 5 }),
    tools: fc.record(
      {
        servers: fc.uniqueArray(id, { maxLength: 4 }),
        discovery: fc.constantFrom("eager", "ondemand", "proxy"),
        maxIterations: number(0, 50, true),
        toolSelectModel: text,
      },
      { requiredKeys: [] },
    ),
    hooks: fc.uniqueArray(
      fc.record(
        { id, event: fc.constantFrom("sessionStart", "beforeTurn", "afterTurn"), server: text, tool: text, maxTokens: number(0, 2000, true) },
        { requiredKeys: ["id", "event"] },
      ),
      { selector: (hook) => hook.id, maxLength: 4 },
    ),
    tasks: fc.dictionary(fc.constantFrom("title", "toolSelect", "compaction", "summary"), task),
    bundle: fc.record({ mcpServers: fc.uniqueArray(server, { selector: (entry) => entry.name, maxLength: 3 }) }),
  },
  { requiredKeys: ["spec"] },
) as fc.Arbitrary<AgentSpec>;

describe("properties of valid documents", () => {
  it("parses a valid document to itself, with no errors and no warnings", () => {
    fc.assert(
      fc.property(agentSpec, (spec) => {
        expect(parseSpec(spec, { bundle: true })).toEqual({ spec, errors: [], warnings: [] });
      }),
      { numRuns: 200 },
    );
  });

  it("resolves a single layer to exactly the fields it states", () => {
    fc.assert(
      fc.property(agentSpec, (spec) => {
        const resolved = resolveAgentSpec([spec]);
        const model = spec.model ?? {};
        expect(resolved.model).toBe(model.name ?? "");
        expect(resolved.baseUrl).toBe(model.baseUrl ?? "");
        expect(resolved.apiKey).toBe("");
        for (const key of [
          "temperature",
          "maxTokens",
          "reasoningEffort",
          "extraBody",
          "contextLength",
          "requestTimeoutSeconds",
          "firstTokenSeconds",
          "maxRetries",
          "loadingTimeoutSeconds",
        ] as const) {
          expect(resolved[key]).toEqual(model[key]);
        }
        expect(resolved.servers).toEqual(spec.tools?.servers);
        expect(resolved.toolDiscovery).toEqual(spec.tools?.discovery);
        expect(resolved.maxToolIterations).toBe(spec.tools?.maxIterations ?? DEFAULT_MAX_TOOL_ITERATIONS);
        expect(resolved.toolSelectModel).toEqual(spec.tools?.toolSelectModel);
        expect(resolved.system).toBe(
          (spec.prompt ?? [])
            .map((entry) => entry.text)
            .filter((entry) => entry !== "")
            .join("\n\n"),
        );
        expect(resolved.hooks).toEqual(spec.hooks ?? []);
        expect(resolved.tasks).toEqual(spec.tasks ?? {});
        expect(resolved.mcpServers).toEqual(spec.bundle?.mcpServers);
        expect(resolved.name).toEqual(spec.name);
      }),
      { numRuns: 200 },
    );
  });

  it("exports a document that re-parses with no errors and holds no credential in env or headers", () => {
    fc.assert(
      fc.property(agentSpec, (spec) => {
        const out = exportSpec(spec);
        expect(parseSpec(out, { bundle: true }).errors).toEqual([]);
        expect(findSpecSecrets(out).filter((hint) => /\.(env|headers)\b/.test(hint.path))).toEqual([]);
        expect(findSpecSecrets(out).filter((hint) => !hint.path.startsWith("bundle."))).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it("lets the stronger of two layers win every field it states", () => {
    fc.assert(
      fc.property(agentSpec, agentSpec, (weak, strong) => {
        const resolved = resolveAgentSpec([weak, strong]);
        if (strong.model?.temperature !== undefined) expect(resolved.temperature).toBe(strong.model.temperature);
        else expect(resolved.temperature).toBe(weak.model?.temperature);
        if (strong.tools?.servers !== undefined) expect(resolved.servers).toEqual(strong.tools.servers);
        for (const [key, value] of Object.entries(strong.tasks ?? {})) expect(resolved.tasks[key]).toEqual(value);
      }),
      { numRuns: 200 },
    );
  });
});

describe("the ./spec entry", () => {
  const src = fileURLToPath(new URL("../src/", import.meta.url));
  const importsOf = (file: string) =>
    [...readFileSync(`${src}${file}`, "utf8").matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?from\s+"([^"]+)"/gms)].map((match) => ({
      typeOnly: match[1] !== undefined,
      from: match[2] as string,
    }));
  const helpers = readdirSync(`${src}spec`).filter((file) => file.endsWith(".ts"));

  it("imports nothing from the package but types, its own helpers and the pure lists of shapes/", () => {
    for (const { typeOnly, from } of importsOf("spec.ts")) {
      expect(typeOnly || /^\.\/spec\/[a-z-]+\.js$/.test(from), from).toBe(true);
    }
    for (const file of helpers) {
      for (const { typeOnly, from } of importsOf(`spec/${file}`)) {
        expect(typeOnly || /^\.\/[a-z-]+\.js$/.test(from) || /^\.\.\/shapes\/[a-z-]+\.js$/.test(from), `${file}: ${from}`).toBe(true);
      }
    }
  });

  it("is imported by nothing else in src", () => {
    const files = readdirSync(src, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts") && file !== "spec.ts");
    for (const file of files) {
      const text = readFileSync(`${src}${file}`, "utf8");
      expect(text, file).not.toMatch(/from\s+"(?:\.\.?\/)+spec\.js"/);
      if (!file.startsWith("spec/")) expect(text, file).not.toMatch(/from\s+"[^"]*spec\/(?:read|values|secrets)\.js"/);
    }
  });
});
