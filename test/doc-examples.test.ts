/**
 * Every TypeScript example in README.md and docs/*.md compiles as written, and the ones that talk
 * to a chat endpoint run as written.
 *
 * What counts as an example: every fenced block whose language is `ts` or `typescript`. Each is
 * written, as its own ES module, to a temporary folder and type-checked with the TypeScript
 * compiler under the repository's settings plus `strict` and `exactOptionalPropertyTypes`, with
 * the package's own specifiers (`@cubicecho/agent-core` and every subpath in package.json
 * "exports") mapped to the entry files in src/. A block is a whole program: it imports and
 * declares everything it uses. Shapes, JSON, shell lines and other pieces that are not programs
 * take another fence language (`jsonc`, `text`, `sh`).
 *
 * Opting out: a line `<!-- example: not a program — <reason> -->` right above a `ts` fence keeps
 * that block from being checked; the reason is required. No block opts out today.
 *
 * Which blocks run: those that read their endpoint from AGENT_CORE_BASE_URL or start the loopback
 * endpoint themselves and import neither `./mcp` nor `./redis`, each as its own process
 * (`node --import tsx`, in the temporary folder) with AGENT_CORE_BASE_URL pointing at a loopback
 * endpoint that plays the model: it calls a tool the block declares (CALLS), once, then answers.
 * What each prints is held to SAYS. Today: the README's quick start, whole run, turn by hand and
 * loopback test; agent-spec.md's first (reading an agent.json this test lays down); approval.md's
 * pause and its resume (which reads the run.json the pause wrote, so the order matters);
 * observability.md's (console exporters) and preselection.md's. Type-checked only: the MCP blocks
 * (a filesystem server on ./notes, a remote search server, a client on port 3001; test/mcp and
 * examples/mcp.ts run MCP servers), replicas.md's (a Redis server; test/redis runs one), the
 * README's capabilities import (a probe's snapshot file) and agent-spec.md's secrets scan (no
 * endpoint).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEndpoint, turn, type EndpointServer, type RecordedRequest } from "./support/endpoint.js";

const root = resolve(import.meta.dirname, "..");
const OPT_OUT = /^<!--\s*example:\s*not a program\s*[—-]\s*(.*?)\s*-->$/;

/** One fenced example: where it is, its code, and the reason it opts out, if it does. */
interface Block {
  /** The Markdown file, relative to the repository root. */
  file: string;
  /** The 1-based line of the opening fence. */
  line: number;
  code: string;
  optOut?: string;
}

/** Every `ts`/`typescript` block of a Markdown file, with the opt-out marker read above it. */
function blocksOf(file: string): Block[] {
  const lines = readFileSync(resolve(root, file), "utf8").split("\n");
  const blocks: Block[] = [];
  for (let at = 0; at < lines.length; at += 1) {
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[at]!);
    if (!fence) continue;
    const [, indent, marks, language] = fence;
    let end = at + 1;
    while (end < lines.length && !lines[end]!.trimStart().startsWith(marks!)) end += 1;
    if (language === "ts" || language === "typescript") {
      const code = lines
        .slice(at + 1, end)
        .map((line) => (line.startsWith(indent!) ? line.slice(indent!.length) : line))
        .join("\n");
      const marker = OPT_OUT.exec(lines[at - 1]?.trim() ?? "");
      blocks.push({ file, line: at + 1, code, ...(marker ? { optOut: marker[1]! } : {}) });
    }
    at = end;
  }
  return blocks;
}

const documents = [
  "README.md",
  ...readdirSync(resolve(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
].sort();
const blocks = documents.flatMap(blocksOf);
const checked = blocks.filter((block) => block.optOut === undefined);
const label = (block: Block): string => `${block.file}:${block.line}`;
const moduleName = (block: Block): string => `${block.file.replace(/\.md$/, "").replace(/[^\w]+/g, "-")}-${block.line}.ts`;
/** A block runs when it reads its endpoint from the environment or starts the loopback endpoint, and needs no other server. */
const runs = (block: Block): boolean =>
  /process\.env\.AGENT_CORE_BASE_URL|startEndpoint\(/.test(block.code) && !/from "@cubicecho\/agent-core\/(mcp|redis)"/.test(block.code);

/** The package's specifiers, read from package.json "exports", mapped to the entry files in src/. */
function packagePaths(): Record<string, string[]> {
  const pkg = JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")) as { name: string; exports: Record<string, unknown> };
  const paths: Record<string, string[]> = {};
  for (const subpath of Object.keys(pkg.exports)) {
    if (subpath === "./package.json") continue;
    const entry = subpath === "." ? "index" : subpath.slice(2);
    paths[subpath === "." ? pkg.name : `${pkg.name}/${entry}`] = [resolve(root, "src", `${entry}.ts`)];
  }
  return paths;
}

let folder = "";

beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), "agent-core-doc-examples-"));
  // The folder is a host's project: an ES module package with the repository's installed
  // dependencies and a tsconfig that tsx reads for the package's specifiers when a block runs.
  writeFileSync(join(folder, "package.json"), JSON.stringify({ type: "module" }));
  symlinkSync(resolve(root, "node_modules"), join(folder, "node_modules"), "dir");
  writeFileSync(
    join(folder, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", target: "ES2023", paths: packagePaths() } }),
  );
  for (const block of checked) writeFileSync(join(folder, moduleName(block)), block.code);
  // The one file a running block reads that a host would have made: the agent document.
  writeFileSync(join(folder, "agent.json"), JSON.stringify({ spec: "agent-core/1", name: "Notes", prompt: [{ id: "persona", text: "You keep notes." }] }));
});

afterAll(() => {
  if (folder) rmSync(folder, { recursive: true, force: true });
});

describe("the README's and docs' TypeScript examples", () => {
  it("are found in the README and in the docs, and every opt-out gives a reason", () => {
    expect(blocks.filter((block) => block.file === "README.md").length).toBeGreaterThanOrEqual(5);
    expect(blocks.filter((block) => block.file.startsWith("docs/")).length).toBeGreaterThanOrEqual(10);
    for (const block of blocks) if (block.optOut !== undefined) expect(block.optOut, label(block)).not.toBe("");
    expect(blocks.filter((block) => block.optOut !== undefined).map(label)).toEqual([]);
  });

  it("type-check with 0 errors under strict and exactOptionalPropertyTypes, each as its own module", () => {
    expect(diagnostics().filter((said) => !said.startsWith(BROKEN.file))).toEqual([]);
  }, 120_000);

  it("name the file and line of a block that does not compile", () => {
    // The fence is on line 40, so the block's fifth line is the file's 45th.
    const [only, ...more] = diagnostics().filter((said) => said.startsWith(BROKEN.file));
    expect(more).toEqual([]);
    expect(only).toMatch(/^the-check-itself\.md:45: Type '"lazy"' is not assignable to type /);
  }, 120_000);
});

/** A block with one mistake on its fifth line, checked beside the real ones to show the check reports it. */
const BROKEN: Block = {
  file: "the-check-itself.md",
  line: 40,
  code: [
    'import { runAgentLoop } from "@cubicecho/agent-core";',
    "",
    "await runAgentLoop({",
    '  config: { baseUrl: "http://127.0.0.1:8080/v1", apiKey: process.env.OPENAI_API_KEY, model: "m",',
    '    toolDiscovery: "lazy" },',
    '  messages: [{ role: "user", content: "Hi" }],',
    "});",
  ].join("\n"),
};

let said: string[] | undefined;

/** Type-checks every block and the broken one in one program: each error as `file:line: message`. */
function diagnostics(): string[] {
  if (said) return said;
  const read = ts.readConfigFile(resolve(root, "tsconfig.json"), (path) => ts.sys.readFile(path));
  const base = ts.parseJsonConfigFileContent(read.config, ts.sys, root).options;
  const options: ts.CompilerOptions = {
    ...base,
    strict: true,
    exactOptionalPropertyTypes: true,
    // An example may show a value it does not go on to use.
    noUnusedLocals: false,
    noUnusedParameters: false,
    noEmit: true,
    paths: packagePaths(),
    typeRoots: [resolve(root, "node_modules/@types")],
  };
  delete options.baseUrl;
  const all = [...checked, BROKEN];
  writeFileSync(join(folder, moduleName(BROKEN)), BROKEN.code);
  const files = all.map((block) => join(folder, moduleName(block)));
  const program = ts.createProgram({ rootNames: files, options });
  said = all.flatMap((block, index) => {
    const source = program.getSourceFile(files[index]!)!;
    return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((error) => {
      const at = error.start === undefined ? 0 : source.getLineAndCharacterOfPosition(error.start).line;
      return `${block.file}:${block.line + 1 + at}: ${ts.flattenDiagnosticMessageText(error.messageText, "\n")}`;
    });
  });
  return said;
}

/** The played model: calls a tool the request declares (once per user turn), then answers. */
function play(request: RecordedRequest) {
  const body = request.body as { messages?: Array<{ role: string }>; tools?: Array<{ function: { name: string } }> };
  const messages = body.messages ?? [];
  const called = messages.slice(messages.map((message) => message.role).lastIndexOf("user")).some((message) => message.role === "assistant");
  const tool = body.tools?.map((declared) => declared.function.name).find((name) => name in CALLS);
  if (tool && !called) return turn({ toolCalls: [{ name: tool, arguments: CALLS[tool]! }] });
  return turn({ content: PLAYED });
}

/** What the played model answers once it has called a tool, or where it calls none. */
const PLAYED = "Done: the loopback endpoint played the model.";

/** The arguments the played model calls each example's tool with. */
const CALLS: Record<string, Record<string, unknown>> = {
  get_weather: { city: "Lisbon" },
  send_email: { to: "team@example.com", subject: "Minutes", body: "Attached." },
  brave_web_search: { query: "headlines" },
};

describe.runIf(checked.some(runs))("the examples that talk to an endpoint", () => {
  let server: EndpointServer;
  beforeAll(async () => {
    server = await startEndpoint({ profile: "llama.cpp", respond: play });
  });
  afterAll(async () => {
    await server.close();
  });

  it("are as many per file as listed here", () => {
    const counted: Record<string, number> = {};
    for (const block of checked.filter(runs)) counted[block.file] = (counted[block.file] ?? 0) + 1;
    expect(counted).toEqual(Object.fromEntries(Object.entries(SAYS).map(([file, said]) => [file, said.length])));
  });

  const running = checked.filter(runs).map((block, _, all) => [label(block), block, all.filter((other) => other.file === block.file).indexOf(block)] as const);
  it.each(running)(
    "%s runs as written",
    async (_, block, nth) => {
      const { AGENT_CORE_BASE_URL: _url, AGENT_CORE_MODEL: _model, OPENAI_API_KEY: _key, ...inherited } = process.env;
      const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", moduleName(block)], {
        cwd: folder,
        env: {
          ...inherited,
          PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
          AGENT_CORE_BASE_URL: server.baseUrl,
          AGENT_CORE_MODEL: "loopback-model",
        },
        timeout: 30_000,
      });
      expect(stdout, label(block)).toContain(SAYS[block.file]?.[nth] ?? "(nothing listed in SAYS)");
    },
    40_000,
  );
});

/**
 * What each running block prints, per file in order: the played model's answer, or what the block
 * shows of it (the held call, the turn's calls, the span of the tool call, the learned ranking).
 */
const SAYS: Record<string, string[]> = {
  "README.md": [PLAYED, PLAYED, 'get_weather({"city":"Lisbon"})', "Three files."],
  "docs/agent-spec.md": [PLAYED],
  "docs/approval.md": ["Waiting for a person: [", `answered ${PLAYED}`],
  "docs/observability.md": ["name: 'execute_tool get_weather'"],
  "docs/preselection.md": ["[ 'brave_web_search' ]"],
};
