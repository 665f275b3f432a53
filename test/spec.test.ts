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
import { accept, doc, secretful } from "./support/spec-documents.js";

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
      if (!file.startsWith("spec/")) expect(text, file).not.toMatch(/from\s+"[^"]*spec\/(?:read|read-fields|values|secrets)\.js"/);
    }
  });
});
