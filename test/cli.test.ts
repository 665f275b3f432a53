import { execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getClientIn } from "../src/wire/client.js";
import { capabilitiesForIn } from "../src/wire/capabilities.js";
import { buildBody } from "../src/wire/request-body.js";
import { runTurnIn } from "../src/turn/run-turn.js";
import { importCapabilitiesIn } from "../src/wire/snapshot.js";
import { clearState, createState } from "../src/state/state.js";
import { AgentCoreError, createRuntime, defaultRuntime } from "../src/index.js";
import { CliFailure, readFailure, wordsOf } from "../src/cli/errors.js";
import { main as runMain, type CliIo } from "../src/cli/main.js";
import { demoModel, runDemo } from "../src/cli/demo.js";
import fc from "fast-check";
import { evaluateArithmetic, ArithmeticError, listFiles } from "../src/cli/demo-tools.js";
import { probeEndpoint, type ProbeStatus } from "../src/cli/probe.js";
import { disagreements } from "./support/probe-agreement.js";
import {
  refusal,
  startEndpoint,
  turn,
  type EndpointOptions,
  type EndpointServer,
  type ProfileName,
  type RecordedRequest,
  type RefusalConfig,
  type Scripted,
} from "./support/endpoint.js";

const root = resolve(import.meta.dirname, "..");

/** Runs the command in-process; the simulated model streams without pauses, since nobody watches. */
const main = (argv: string[], streams: CliIo) => runMain(argv, streams, { demo: (options) => runDemo({ ...options, delayMs: 0 }), probe: probeEndpoint });

/** A stream that keeps what is written, and says whether it is a terminal. */
function sink(isTTY = false): { write(text: string): boolean; isTTY: boolean; text(): string } {
  let written = "";
  return {
    isTTY,
    write(text: string) {
      written += text;
      return true;
    },
    text: () => written,
  };
}

function io(env: Record<string, string | undefined> = {}, signal?: AbortSignal): CliIo & { out: ReturnType<typeof sink>; err: ReturnType<typeof sink> } {
  const out = sink();
  const err = sink();
  return { stdout: out, stderr: err, env, out, err, ...(signal ? { signal } : {}) };
}

/** A scripted model for the probe: a call where tools are declared, JSON where a schema is asked, "ok" otherwise. */
function probeModel(callsAsText = false): (request: RecordedRequest) => Scripted {
  return (request) => {
    const body = request.body as Record<string, unknown>;
    if (Array.isArray(body.tools) && body.tools.length > 0) {
      return callsAsText
        ? turn({ content: '<tool_call>\n{"name": "record_word", "arguments": {"word": "ok"}}\n</tool_call>' })
        : turn({ toolCalls: [{ name: "record_word", arguments: { word: "ok" } }] });
    }
    if (body.response_format) return turn({ content: '{"word":"ok"}' });
    return turn({ content: "ok" });
  };
}

describe("the demo", () => {
  it("streams an answer, each tool call and result, the negotiated min_p notice, the cut-off answer continued and the metrics table", async () => {
    const streams = io();
    const code = await main(["demo", "--folder", root], streams);
    const output = streams.out.text();
    expect(code).toBe(0);
    expect(output).toMatch(/! notice .*min_p/);
    expect(output).toMatch(/thinking: The user wants/);
    expect(output).toMatch(/→ tool call list_files\(\{"path":"\."\}\)/);
    expect(output).toMatch(/← result list_files: CHANGELOG\.md, /);
    expect(output).toMatch(/→ tool call calculate\(\{"expression":"\(\d+ \* 2\.5\) \+ 4"\}\)/);
    expect(output).toMatch(/← result calculate: \d+/);
    expect(output).toMatch(/answer: The project folder holds \d+ entries/);
    expect(output).toMatch(/strict proxy in front of llama\.cpp/);
    expect(output).toMatch(/\n! notice The reply was cut off at the 64-token ceiling \(maxTokens\)\.\nanswer, continued: \S/);
    expect(output).toMatch(/finish stop, over 2 requests\n/);
    const joined = /answer, joined: (.*)\n/.exec(output)?.[1] ?? "";
    expect(joined).toMatch(
      /^The project folder holds (\d+) entries \(\d+ folders and \d+ files\), and \1 × 2\.5 \+ 4 = [\d.]+\. .* come straight from the tools\.$/,
    );
    const streamed = /answer: (.*)\n/.exec(output)?.[1] ?? "";
    const continued = /answer, continued:(.*)\n/.exec(output)?.[1] ?? "";
    expect(streamed + continued).toBe(joined);
    expect(output).toMatch(/notices +3\n/);
    expect(output).toMatch(/Continued the cut-off answer by prefilling it \(1 more request\)/);
    expect(output).toMatch(/run metrics\n {2}turns +3\n/);
    expect(output).toMatch(/cached prompt tokens +\d+/);
    expect(output).toMatch(/outcome +answered/);
    expect(output).not.toMatch(/\u001b\[/);
    expect(streams.err.text()).toBe("");
  });

  it("stops when aborted mid-run, answering 130 and closing what it started", async () => {
    const controller = new AbortController();
    const streams = io({}, controller.signal);
    const write = streams.out.write.bind(streams.out);
    streams.stdout = {
      write(text: string) {
        if (text.includes("thinking: ")) controller.abort(new Error("the test stopped it"));
        return write(text);
      },
    };
    expect(await main(["demo", "--folder", root], streams)).toBe(130);
    expect(streams.err.text()).toBe("agent-core: Stopped before it finished.\n");
  });

  it("runs the same demo against an endpoint given by URL, with the key from the named variable", async () => {
    await withServer({ profile: "vllm", models: [{ id: "served-model" }], respond: demoModel(0) }, async (server) => {
      const streams = io({ DEMO_KEY: "sk-demo" });
      const code = await main(["demo", "--base-url", server.baseUrl, "--model", "served-model", "--api-key-env", "DEMO_KEY", "--folder", root], streams);
      expect(code).toBe(0);
      expect(streams.out.text()).toMatch(/Running against .*, model served-model\./);
      expect(streams.out.text()).toMatch(/answer: The project folder holds/);
      expect(streams.out.text()).not.toMatch(/answer, continued/);
      expect(server.chatRequests().every((request) => request.headers.authorization === "Bearer sk-demo")).toBe(true);
    });
  });

  it("learns in the runtime it is given and leaves that runtime for its owner to reset", async () => {
    await withServer({ profile: "llama.cpp", models: [{ id: "served-model" }], refuse: { fields: ["min_p"] }, respond: demoModel(0) }, async (server) => {
      const runtime = createRuntime();
      try {
        await runDemo({ baseUrl: server.baseUrl, model: "served-model", folder: root, stdout: sink(), color: false, runtime, delayMs: 0 });
        const learned = runtime.exportCapabilities().endpoints.find((entry) => entry.baseUrl === server.baseUrl);
        expect(learned?.models?.["served-model"]?.droppedFields).toEqual(["min_p"]);
        expect(defaultRuntime.exportCapabilities().endpoints.some((entry) => entry.baseUrl === server.baseUrl)).toBe(false);
      } finally {
        runtime.reset();
      }
    });
  });

  it("dims the thinking only where colour is allowed", async () => {
    const streams = io({ FORCE_COLOR: "1" });
    expect(await main(["demo", "--folder", root], streams)).toBe(0);
    expect(streams.out.text()).toMatch(/\u001b\[2mthinking: \u001b\[22m/);
  });
});

describe("the command line", () => {
  it("shows help for the command and for each subcommand, with the exit codes", async () => {
    for (const args of [[], ["--help"], ["help", "probe"], ["demo", "--help"], ["probe", "-h"]]) {
      const streams = io();
      expect(await main(args, streams)).toBe(0);
      expect(streams.out.text()).toMatch(/^Usage: agent-core/);
      expect(streams.out.text()).toMatch(/130 +stopped with Ctrl-C/);
    }
  });

  it("exits 2 with one line naming the help for a command line it cannot read", async () => {
    const cases = [
      ["frob"],
      ["probe"],
      ["probe", "ftp://x/v1"],
      ["probe", "http://x/v1", "http://y/v1"],
      ["probe", "http://x/v1", "--timeout", "soon"],
      ["probe", "http://x/v1", "--frob"],
      ["demo", "--base-url", "http://127.0.0.1:1/v1"],
      ["demo", "--model", "m"],
      ["probe", "http://x/v1", "--api-key-env", "NOT_SET_ANYWHERE"],
    ];
    for (const args of cases) {
      const streams = io();
      expect(await main(args, streams), args.join(" ")).toBe(2);
      expect(streams.err.text()).toMatch(/^agent-core: [^\n]*--help"\)\.\n$/);
    }
  });

  it("prints the version it is given", async () => {
    const streams = { ...io(), version: "1.2.3" };
    expect(await main(["--version"], streams)).toBe(0);
    expect(streams.out.text()).toBe("1.2.3\n");
  });
});

describe("reading a failure", () => {
  it("raises the command's failures as errors of the package's one family", () => {
    const failure = new CliFailure("unreachable", "Nothing answered.", new Error("ECONNREFUSED"));
    expect(AgentCoreError.is(failure)).toBe(true);
    expect(CliFailure.is(failure)).toBe(true);
    expect([failure.name, failure.exitCode, failure.message, (failure.cause as Error).message]).toEqual(["CliFailure", 3, "Nothing answered.", "ECONNREFUSED"]);
    const arithmetic = new ArithmeticError("Division by zero.");
    expect(AgentCoreError.is(arithmetic) && ArithmeticError.is(arithmetic)).toBe(true);
  });

  it("finds the HTTP status and the server's words down a wrapped error's cause chain", () => {
    const sdk = Object.assign(new Error("401 Incorrect API key provided"), { status: 401 });
    const wrapped = new Error("", { cause: sdk });
    const failure = readFailure(wrapped, "http://127.0.0.1:1/v1");
    expect(failure.kind).toBe("unauthorized");
    expect(failure.message).toMatch(/^http:\/\/127\.0\.0\.1:1\/v1 refused the key \(HTTP 401\): Incorrect API key provided\. /);
  });

  it("reads fetch's refusal of a port down the cause chain as unreachable (exit 3), as a probe of port 6000 throws it", () => {
    const thrown = new TypeError("fetch failed", { cause: new Error("bad port") });
    const failure = readFailure(thrown, "http://127.0.0.1:6000/v1");
    expect(failure.kind).toBe("unreachable");
    expect(failure.exitCode).toBe(3);
    expect(failure.message).toMatch(/^Could not reach http:\/\/127\.0\.0\.1:6000\/v1: fetch refuses to connect to that port/);
  });

  it("reads a plain error body's words where no Error carries them", () => {
    expect(wordsOf({ body: { detail: [{ msg: "  field required  " }] } })).toBe("field required");
    expect(wordsOf({ error: "model not loaded", status: 503 })).toBe("model not loaded");
    expect(readFailure({ statusCode: 404, error: { message: "The model `x` does not exist" } }, "u", "x").kind).toBe("unknownModel");
  });

  it("says no reason was given for an error that carries no words, and never throws reading one", () => {
    expect(readFailure(Object.assign(new Error(""), { status: 500 }), "u").message).toBe("u answered HTTP 500: no reason given");
    const cycle = Object.assign(new Error(""), { status: 502 });
    cycle.cause = cycle;
    expect(readFailure(cycle, "u").message).toBe("u answered HTTP 502: no reason given");
    const hostile = Object.defineProperty({ status: 500 }, "message", {
      get() {
        throw new Error("a getter that throws");
      },
    });
    expect(wordsOf(hostile)).toBe("");
    expect(readFailure(hostile, "u").kind).toBe("failed");
  });
});

describe("the demo's tools", () => {
  it("evaluates arithmetic with precedence, powers and parentheses", () => {
    expect(evaluateArithmetic("(16 * 2.5) + 4")).toBe(44);
    expect(evaluateArithmetic("2 ^ 3 ^ 2")).toBe(512);
    expect(evaluateArithmetic("-3 + 10 % 4 / 2")).toBe(-2);
  });

  it("agrees with integer arithmetic and fails only with ArithmeticError on any text", () => {
    const number = fc.integer({ min: -50, max: 50 });
    const op = fc.constantFrom("+", "-", "*");
    const apply = (x: number, how: string, y: number): number => (how === "+" ? x + y : how === "-" ? x - y : x * y);
    const show = (n: number): string => (n < 0 ? `(${n})` : String(n));
    fc.assert(
      fc.property(number, op, number, op, number, (a, op1, b, op2, c) => {
        // Multiplication binds tighter; otherwise the operators go left to right.
        const expected = op2 === "*" && op1 !== "*" ? apply(a, op1, b * c) : apply(apply(a, op1, b), op2, c);
        expect(evaluateArithmetic(`${show(a)} ${op1} ${show(b)} ${op2} ${show(c)}`)).toBe(expected);
      }),
      { numRuns: 200 },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (text) => {
        try {
          expect(Number.isFinite(evaluateArithmetic(text))).toBe(true);
        } catch (error) {
          expect(error).toBeInstanceOf(ArithmeticError);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("refuses anything that is not arithmetic instead of evaluating it", () => {
    for (const text of ["process.exit(1)", "1 +", "(1", "1 / 0", "2 ** 3", ""]) expect(() => evaluateArithmetic(text)).toThrow(ArithmeticError);
  });

  it("will not list a folder outside its root", async () => {
    await expect(listFiles(join(root, "src"), "..")).rejects.toThrow(/outside the project folder/);
    expect(await listFiles(root, ".")).toMatch(/^src\/$/m);
  });
});

interface ProfileCase {
  refuse: RefusalConfig;
  callsAsText?: boolean;
  expected: Partial<Record<string, ProbeStatus>>;
  window: RegExp;
}

const everything = {
  usageInStream: "supported",
  maxTokens: "supported",
  temperature: "supported",
  reasoningEffort: "supported",
  grammar: "unknown",
  strictSchemas: "supported",
  toolCalls: "supported",
  jsonSchema: "supported",
  prefill: "supported",
} as const;

const CASES: Record<ProfileName, ProfileCase> = {
  // A reasoning model: max_completion_tokens, its own temperature, no "none" effort.
  openai: {
    refuse: { maxTokens: true, temperature: true, reasoningEffort: ["none"] },
    expected: { window: "unknown", ...everything, maxTokens: "refused", temperature: "refused" },
    window: /unknown/,
  },
  // An older build with a thinking model, which will not carry on a prefilled answer; its listing
  // says it holds answers to a grammar, so strict is not what it is sent.
  "llama.cpp": {
    refuse: { prefill: true },
    expected: { window: "supported", ...everything, grammar: "supported", strictSchemas: "ignored", prefill: "refused" },
    window: /meta\.n_ctx/,
  },
  vllm: {
    refuse: { streamOptions: true },
    expected: { window: "supported", ...everything, usageInStream: "refused", grammar: "supported", strictSchemas: "ignored" },
    window: /max_model_len/,
  },
  lmstudio: {
    refuse: {},
    expected: { window: "supported", ...everything, usageInStream: "ignored", grammar: "supported", strictSchemas: "ignored" },
    window: /\/api\/v0\/models/,
  },
  ollama: {
    refuse: {},
    callsAsText: true,
    expected: { window: "supported", ...everything, toolCalls: "as text" },
    window: /the server's own \/api\/ps \(context_length\)/,
  },
  openrouter: {
    refuse: { tools: true },
    expected: { window: "supported", ...everything, strictSchemas: "unknown", toolCalls: "refused" },
    window: /context_length/,
  },
  // A chat model (not in thinking mode), whose listing names no window.
  deepseek: { refuse: {}, expected: { window: "unknown", ...everything }, window: /unknown/ },
};

async function withServer<T>(options: EndpointOptions, body: (server: EndpointServer) => Promise<T>): Promise<T> {
  const server = await startEndpoint(options);
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}

describe("the probe", () => {
  for (const [profile, spec] of Object.entries(CASES) as Array<[ProfileName, ProfileCase]>) {
    it(`reports exactly what a ${profile} endpoint supports, with every request counted`, async () => {
      await withServer({ profile, refuse: spec.refuse, respond: probeModel(spec.callsAsText) }, async (server) => {
        const progress: string[] = [];
        const report = await probeEndpoint({ baseUrl: server.baseUrl, onProgress: (line) => progress.push(line) });
        const statuses = Object.fromEntries(report.findings.map((finding) => [finding.capability, finding.status]));
        expect(statuses).toEqual(spec.expected);
        expect(report.window.source).toMatch(spec.window);
        for (const finding of report.findings) if (finding.status === "refused") expect(finding.words, finding.capability).toBeTruthy();
        expect(disagreements(report)).toEqual([]);
        expect(report.requests.length).toBe(server.requests.length);
        expect(progress.length).toBe(6);
        expect(report.model).toBe("loopback-model");
      });
    });
  }

  it("quotes the server's own words for a refusal", async () => {
    await withServer({ profile: "openai", refuse: { maxTokens: true }, respond: probeModel() }, async (server) => {
      const report = await probeEndpoint({ baseUrl: server.baseUrl });
      const row = report.findings.find((finding) => finding.capability === "maxTokens");
      expect(row?.words).toBe("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.");
    });
  });

  it("writes a snapshot that makes a fresh runtime's first request the learned one", async () => {
    await withServer(
      { profile: "openai", refuse: { maxTokens: true, temperature: true, reasoningEffort: ["none"], streamOptions: true }, respond: probeModel() },
      async (server) => {
        const report = await probeEndpoint({ baseUrl: server.baseUrl });
        const fresh = createState();
        try {
          expect(importCapabilitiesIn(fresh, JSON.parse(JSON.stringify(report.snapshot))).ignored).toEqual([]);
          const before = server.chatRequests().length;
          const config = { model: "loopback-model", maxTokens: 200, temperature: 0.3, reasoningEffort: "none" };
          const supports = capabilitiesForIn(fresh, server.baseUrl);
          await runTurnIn(
            fresh,
            getClientIn(fresh, { baseUrl: server.baseUrl }),
            supports,
            (current, model) => buildBody(config, current, model, [{ role: "user", content: "hi" }]),
            {
              model: "loopback-model",
            },
          );
          const sent = server.chatRequests().slice(before);
          expect(sent).toHaveLength(1);
          expect(sent[0]?.refused).toBeUndefined();
          const body = sent[0]?.body as Record<string, unknown>;
          expect(body.max_completion_tokens).toBe(200);
          expect(body).not.toHaveProperty("max_tokens");
          expect(body).not.toHaveProperty("temperature");
          expect(body).not.toHaveProperty("stream_options");
          expect(body.reasoning_effort).toBe("minimal");
        } finally {
          clearState(fresh);
        }
      },
    );
  });

  it("prints the table, what it spent, and writes the snapshot file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agent-core-probe-"));
    try {
      await withServer({ profile: "vllm", refuse: { streamOptions: true }, respond: probeModel() }, async (server) => {
        const file = join(dir, "capabilities.json");
        const streams = io();
        expect(await main(["probe", server.baseUrl, "--snapshot", file], streams)).toBe(0);
        const output = streams.out.text();
        expect(output).toMatch(/usage in the stream +refused/);
        expect(output).toMatch(/the server said: /);
        expect(output).toMatch(/Spent \d+ requests \(\d+ GET, \d+ POST\)/);
        expect(streams.err.text().trim().split("\n")).toHaveLength(6);
        const stored = JSON.parse(await readFile(file, "utf8")) as { endpoints: Array<{ usageInStream?: boolean }> };
        expect(stored.endpoints[0]?.usageInStream).toBe(false);
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("fingerprints the key under the salt --key-salt-env names, so a host with that keySalt takes the keyed entry", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agent-core-probe-"));
    try {
      await withServer({ profile: "vllm", refuse: { streamOptions: true }, respond: probeModel() }, async (server) => {
        const file = join(dir, "capabilities.json");
        const env = { PROBE_KEY: "sk-probe-key", PROBE_SALT: "the host's salt" };
        const streams = io(env);
        expect(await main(["probe", server.baseUrl, "--api-key-env", "PROBE_KEY", "--key-salt-env", "PROBE_SALT", "--snapshot", file], streams)).toBe(0);
        expect(streams.out.text()).not.toContain("--key-salt-env");
        const stored = JSON.parse(await readFile(file, "utf8")) as { endpoints: Array<{ key: string }> };
        expect(stored.endpoints[0]?.key).toMatch(/^hmac:/);
        const host = createRuntime({ keySalt: "the host's salt" });
        expect(host.importCapabilities(stored).ignored).toEqual([]);
        expect(host.capabilitiesFor(server.baseUrl, "sk-probe-key").usageInStream).toBe(false);

        const unsalted = io({ PROBE_KEY: "sk-probe-key" });
        expect(await main(["probe", server.baseUrl, "--api-key-env", "PROBE_KEY", "--snapshot", file], unsalted)).toBe(0);
        expect(unsalted.out.text()).toContain("pass --key-salt-env");
        expect(await main(["probe", server.baseUrl, "--key-salt-env", "NOT_SET_ANYWHERE"], io())).toBe(2);
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("ends with the server's words when the first chat request fails outright", async () => {
    await withServer({ profile: "llama.cpp" }, async (server) => {
      const streams = io();
      expect(await main(["probe", server.baseUrl], streams)).toBe(1);
      expect(streams.err.text()).toMatch(/agent-core: .* answered HTTP 500: the loopback endpoint has no response scripted/);
      expect(streams.out.text()).toBe("");
    });
  });

  it("marks a capability unknown, not supported, when its request fails without a refusal", async () => {
    const respond = (request: RecordedRequest): Scripted =>
      Array.isArray((request.body as { tools?: unknown }).tools)
        ? { kind: "error", status: 503, body: { error: { message: "upstream overloaded", type: "server_error" } } }
        : turn({ content: "ok" });
    await withServer({ profile: "openai", respond }, async (server) => {
      const report = await probeEndpoint({ baseUrl: server.baseUrl });
      const rows = report.findings.filter((finding) => finding.capability === "strictSchemas" || finding.capability === "toolCalls");
      expect(rows.map((row) => [row.status, row.words])).toEqual([
        ["unknown", "upstream overloaded"],
        ["unknown", "upstream overloaded"],
      ]);
    });
  });

  it("reports reasoning effort as ignored when the lowest rung is taken and the model reasons anyway", async () => {
    const thinking = (request: RecordedRequest): Scripted => {
      const scripted = probeModel()(request) as Extract<Scripted, { kind: "stream" }>;
      return turn({ ...scripted.turn, reasoning: "Let me think about it." });
    };
    await withServer({ profile: "llama.cpp", respond: thinking }, async (server) => {
      const report = await probeEndpoint({ baseUrl: server.baseUrl });
      const row = report.findings.find((finding) => finding.capability === "reasoningEffort");
      expect(row).toMatchObject({
        status: "ignored",
        detail: expect.stringMatching(/^reasoning_effort none was taken, yet 22 characters of reasoning still came/),
      });
      expect(server.chatBodies()[0]?.reasoning_effort).toBe("none");
      expect(disagreements(report)).toEqual([]);
    });
  });

  it("reads every row off the records the snapshot is written from, so a latch a later probe flips is in both", async () => {
    // The tools probe takes strict: true; the json_schema probe's strict schema is then refused as a grammar it cannot build.
    const grammarless = (request: RecordedRequest): Scripted => {
      const format = (request.body as { response_format?: { json_schema?: { strict?: boolean } } }).response_format;
      if (format?.json_schema?.strict === true) return refusal("llama.cpp", "schemaGrammar", { value: '{"additionalProperties":false}' }) as Scripted;
      return probeModel()(request);
    };
    await withServer({ profile: "ollama", respond: grammarless }, async (server) => {
      const report = await probeEndpoint({ baseUrl: server.baseUrl });
      const strict = report.findings.find((finding) => finding.capability === "strictSchemas");
      expect(strict).toMatchObject({ status: "refused", words: expect.stringContaining("JSON schema conversion failed") });
      expect(report.snapshot.endpoints[0]?.strictSchemas).toBe(false);
      expect(disagreements(report)).toEqual([]);
    });
  });

  it("reports a sampler that cannot hold a reply to a schema as json_schema refused, not strict schemas, in the table and the snapshot", async () => {
    // What llama-server answers every json_schema request under --reasoning-format none with a thinking template.
    const failed: Scripted = {
      kind: "error",
      status: 400,
      body: { error: { code: 400, message: "Failed to initialize samplers: std::exception", type: "invalid_request_error" } },
    };
    const sampler = (request: RecordedRequest): Scripted => ((request.body as { response_format?: unknown }).response_format ? failed : probeModel()(request));
    await withServer({ profile: "llama.cpp", respond: sampler }, async (server) => {
      const report = await probeEndpoint({ baseUrl: server.baseUrl });
      const statuses = Object.fromEntries(report.findings.map((finding) => [finding.capability, finding.status]));
      expect(statuses).toMatchObject({ grammar: "supported", strictSchemas: "ignored", jsonSchema: "refused" });
      expect(report.findings.find((finding) => finding.capability === "jsonSchema")?.words).toBe("Failed to initialize samplers: std::exception");
      expect(report.snapshot.endpoints[0]).toMatchObject({ grammarConstrained: true, models: { "loopback-model": { structuredOutput: false } } });
      expect(disagreements(report)).toEqual([]);
    });
  });

  it("learns in the runtime it is given, leaving it for the caller to reset", async () => {
    await withServer({ profile: "llama.cpp", respond: probeModel() }, async (server) => {
      const runtime = createRuntime();
      try {
        const report = await probeEndpoint({ baseUrl: server.baseUrl, runtime });
        expect(runtime.exportCapabilities()).toEqual(report.snapshot);
        expect(runtime.capabilitiesFor(server.baseUrl).grammarConstrained).toBe(true);
      } finally {
        runtime.reset();
      }
    });
  });

  it("prints the report as JSON with --json", async () => {
    await withServer({ profile: "llama.cpp", respond: probeModel() }, async (server) => {
      const streams = io();
      expect(await main(["probe", server.baseUrl, "--json"], streams)).toBe(0);
      const report = JSON.parse(streams.out.text()) as { window: { tokens: number }; snapshot: { version: number } };
      expect(report.window.tokens).toBe(32768);
      expect(report.snapshot.version).toBe(1);
    });
  });
});

describe("the built agent-core binary", () => {
  const dir = join(root, "node_modules", ".cache", `agent-core-cli-test-${process.pid}`);
  const bin = join(dir, "cli.mjs");

  // Each of these starts a real node process, which a loaded machine can take seconds to do.
  beforeAll(async () => {
    await build({
      entryPoints: [join(root, "src/cli.ts")],
      outfile: bin,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node22",
      packages: "external",
      banner: { js: "#!/usr/bin/env node" },
      logLevel: "silent",
    });
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((done) => {
      execFile(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH ?? "", ...env }, timeout: 50_000 }, (error, stdout, stderr) => {
        done({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr });
      });
    });
  }

  function expectOneLine(stderr: string, pattern: RegExp): void {
    const lines = stderr
      .trim()
      .split("\n")
      .filter((line) => !line.endsWith("…"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
    expect(stderr).not.toMatch(/\n\s+at /);
  }

  it("shows help with the exit codes", async () => {
    const result = await run(["--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: agent-core <command>/);
    expect(result.stdout).toMatch(/130 +stopped with Ctrl-C/);
  });

  it("exits 2 with one line for a command line it cannot read", async () => {
    const result = await run(["probe", "not a url"]);
    expect(result.code).toBe(2);
    expectOneLine(result.stderr, /^agent-core: "not a url" is not a URL.*--help/);
  });

  it("exits 3 for a URL nothing answers at", async () => {
    const port = await new Promise<number>((done) => {
      const server = createServer();
      server.listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => done(typeof address === "object" && address ? address.port : 1));
      });
    });
    const result = await run(["probe", `http://127.0.0.1:${port}/v1`]);
    expect(result.code).toBe(3);
    expectOneLine(result.stderr, /Could not reach .*connection was refused/);
  });

  it("exits 4 when the key is refused, and sends the key the named variable holds", async () => {
    // OpenAI's 401 body, as quoted in https://github.com/chatanywhere/GPT_API_free/issues/62
    const denied: Scripted = {
      kind: "error",
      status: 401,
      body: {
        error: {
          message: "Incorrect API key provided: sk-wrong. You can find your API key at https://platform.openai.com/account/api-keys.",
          type: "invalid_request_error",
          param: null,
          code: "invalid_api_key",
        },
      },
    };
    await withServer({ routes: { "GET /v1/models": denied } }, async (server) => {
      const result = await run(["probe", server.baseUrl, "--api-key-env", "PROBE_KEY"], { PROBE_KEY: "sk-wrong" });
      expect(result.code).toBe(4);
      expectOneLine(result.stderr, /refused the key \(HTTP 401\): Incorrect API key provided.*The key in PROBE_KEY was sent and refused/);
      expect(result.stderr).not.toContain("Pass --api-key-env");
      expect(server.requests[0]?.headers.authorization).toBe("Bearer sk-wrong");
    });
  });

  it("exits 5 for a server that answers with an HTML page", async () => {
    const page: Scripted = { kind: "error", status: 200, body: "<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1></body></html>" };
    await withServer({ routes: { "GET /models": page } }, async (server) => {
      const result = await run(["probe", server.origin]);
      expect(result.code).toBe(5);
      expectOneLine(result.stderr, /HTML page .*not an OpenAI-compatible API/);
    });
  });

  it("exits 6 for a model the server does not know, naming the ones it lists", async () => {
    // OpenAI's 404 body, as quoted in https://github.com/rd-1-2022/ai-openai-helloworld/issues/9
    const respond = (request: RecordedRequest): Scripted => {
      const model = (request.body as { model?: string }).model;
      if (model === "loopback-model") return turn({ content: "ok" });
      return {
        kind: "error",
        status: 404,
        body: {
          error: {
            message: `The model \`${model}\` does not exist or you do not have access to it.`,
            type: "invalid_request_error",
            param: null,
            code: "model_not_found",
          },
        },
      };
    };
    await withServer({ respond }, async (server) => {
      const result = await run(["probe", server.baseUrl, "--model", "gpt-nope"]);
      expect(result.code).toBe(6);
      expectOneLine(result.stderr, /does not know the model "gpt-nope".*It lists: loopback-model\./);
      const verbose = io();
      expect(await main(["probe", server.baseUrl, "--model", "gpt-nope", "--verbose"], verbose)).toBe(6);
      expect(verbose.err.text()).toMatch(/\n\s+at /);
    });
  });

  it("runs the demo end to end", async () => {
    const result = await run(["demo"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/answer: /);
    expect(result.stdout).toMatch(/run metrics/);
  }, 60_000);

  it("stops on Ctrl-C mid-run with exit code 130, one line and nothing left running", async () => {
    const child = spawn(process.execPath, [bin, "demo"], { env: { PATH: process.env.PATH ?? "" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (part: Buffer) => (stderr += part.toString()));
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
    try {
      await new Promise<void>((done) => {
        child.stdout.on("data", (part: Buffer) => {
          stdout += part.toString();
          if (stdout.includes("thinking: ")) done();
        });
      });
      child.kill("SIGINT");
      expect(await exited).toBe(130);
      expectOneLine(stderr, /Stopped by Ctrl-C/);
      expect(stdout).not.toMatch(/run metrics/);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  }, 60_000);
});

describe("a base URL's password", () => {
  it("is hidden in every URL the command line prints", async () => {
    const { redactUrls } = await import("../src/cli/redact.js");
    expect(redactUrls("at http://me:pw-secret@host:8080/v1 and https://other/v1")).toBe("at http://me:***@host:8080/v1 and https://other/v1");
    expect(redactUrls("http://only-user@host/v1")).toBe("http://only-user@host/v1");
    expect(redactUrls(`x${"://a:".repeat(20_000)}@`)).not.toContain("a:@");
  });

  it("never reaches stderr or stdout when a probe is given a URL with userinfo", async () => {
    const streams = io();
    await main(["probe", "http://me:pw-secret@127.0.0.1:9/v1", "--model", "m"], streams);
    expect(`${streams.out.text()}${streams.err.text()}`).not.toContain("pw-secret");
    expect(streams.err.text()).toMatch(/agent-core: /);
  });
});
