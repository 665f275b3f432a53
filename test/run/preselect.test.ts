import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CatalogServer } from "../../src/shapes/catalog.js";
import { clearState, createState, type RuntimeState } from "../../src/state/state.js";
import { topTools, type ScoredTool } from "../../src/run/keyword-index.js";
import { isFunctionWord, splitWords, stemWord } from "../../src/run/keyword-index-words.js";
import {
  KEYWORD_DROPOFF,
  KEYWORD_MIN_SCORE,
  PRESELECTED_NOTICE,
  PRESELECT_SCHEMA,
  keywordIndexIn,
  preselect,
  preselectByKeywords,
  preselectByKeywordsIn,
  preselectIn,
  preselectInput,
  preselectSystem,
  preselection,
  type KeywordPreselection,
  type PreselectAsk,
  type PreselectAskOptions,
} from "../../src/run/preselect.js";
import { createUsageMemory } from "../../src/run/usage-memory.js";
import { startEndpoint, turn, type EndpointServer } from "../support/endpoint.js";

const endpoint = { baseUrl: "http://127.0.0.1:9/v1" };

/** A catalogue shaped like a desktop agent's: files, a code host, a calendar, the web. */
function desktopCatalog(): CatalogServer[] {
  return [
    {
      name: "filesystem",
      label: "Local files",
      tools: [
        { name: "read_file", description: "Read the complete contents of a file from the file system." },
        { name: "write_file", description: "Create a new file or overwrite an existing file with new content." },
        { name: "list_directory", description: "Get a detailed listing of all files and directories in a specified path." },
        { name: "move_file", description: "Move or rename files and directories." },
        { name: "search_files", description: "Recursively search for files and directories matching a pattern." },
        { name: "get_file_info", description: "Retrieve detailed metadata about a file or directory." },
      ],
    },
    {
      name: "github",
      label: "GitHub",
      tools: [
        { name: "create_issue", description: "Create a new issue in a GitHub repository." },
        { name: "list_issues", description: "List issues in a GitHub repository with filtering options." },
        { name: "create_pull_request", description: "Create a new pull request in a GitHub repository." },
        { name: "get_file_contents", description: "Get the contents of a file or directory from a GitHub repository." },
        { name: "search_repositories", description: "Search for GitHub repositories." },
        { name: "fork_repository", description: "Fork a GitHub repository to your account or specified organization." },
      ],
    },
    {
      name: "calendar",
      tools: [
        { name: "listEvents", description: "List upcoming events on the user's calendar." },
        { name: "createEvent", description: "Schedule a new event with attendees, a start and an end time." },
        { name: "deleteEvent", description: "Cancel an event and notify its attendees." },
      ],
    },
    {
      name: "web",
      label: "Web",
      tools: [
        { name: "fetch", description: "Fetch a URL from the internet and return its content as markdown." },
        { name: "brave-web-search", description: "Search the web with the Brave Search API." },
        { name: "get-weather-forecast", description: "Get the weather forecast for a city for the next days." },
        { name: "convertCurrency", description: "Convert an amount between currencies at today's exchange rate." },
      ],
    },
  ];
}

function recorder(reply: unknown | (() => unknown)) {
  const calls: { endpoint: unknown; model: string; system: string; input: string; schema: unknown; options: PreselectAskOptions }[] = [];
  const ask: PreselectAsk = async (endpointGiven, model, system, input, schema, options) => {
    calls.push({ endpoint: endpointGiven, model, system, input, schema, options });
    return typeof reply === "function" ? (reply as () => unknown)() : reply;
  };
  return { ask, calls };
}

describe("splitting and function words", () => {
  it("splits names on camelCase, snake_case, kebab-case and acronyms", () => {
    expect(splitWords("getWeatherForecast")).toEqual(["get", "weather", "forecast"]);
    expect(splitWords("create_pull_request")).toEqual(["create", "pull", "request"]);
    expect(splitWords("brave-web-search")).toEqual(["brave", "web", "search"]);
    expect(splitWords("parseHTTPResponse")).toEqual(["parse", "http", "response"]);
    expect(splitWords("/v1/nutrition")).toEqual(["v1", "nutrition"]);
  });

  it("stems plurals and -ing/-ed forms onto the same term", () => {
    expect(stemWord("files")).toBe(stemWord("file"));
    expect(stemWord("repositories")).toBe("repository");
    expect(stemWord("searching")).toBe(stemWord("search"));
    expect(stemWord("scheduled")).toBe("schedul");
    expect(stemWord("status")).toBe("status");
  });

  it("knows the English function words", () => {
    for (const word of ["the", "for", "with", "about", "your"]) expect(isFunctionWord(word)).toBe(true);
    for (const word of ["file", "issue", "weather"]) expect(isFunctionWord(word)).toBe(false);
  });

  it("matches Chinese text by pairs of characters", () => {
    const catalog: CatalogServer[] = [
      {
        name: "bing_cn",
        tools: [
          { name: "bing_search", description: "使用必应搜索指定的关键词，并返回搜索结果列表" },
          { name: "fetch_webpage", description: "根据提供的ID获取对应网页的内容" },
        ],
      },
    ];
    expect(preselectByKeywordsIn(createState(), catalog, "获取网页内容").tools[0]).toBe("fetch_webpage");
  });

  it("finds a camelCase tool by the separate words of a request", () => {
    const { tools } = preselectByKeywordsIn(createState(), desktopCatalog(), "please convert 20 euros into another currency");
    expect(tools[0]).toBe("convertCurrency");
  });

  it("drops function words, so a request made only of them matches nothing", () => {
    const catalog: CatalogServer[] = [
      {
        name: "mail",
        tools: [
          { name: "send", description: "Sends a letter for you" },
          { name: "clock", description: "Tells the time" },
        ],
      },
    ];
    const result = preselectByKeywordsIn(createState(), catalog, "what is it for, and would you do it with me?");
    expect(result.tools).toEqual([]);
    expect(result.confident).toBe(false);
  });
});

describe("preselectByKeywords", () => {
  it("ranks the tool holding the distinctive word above tools sharing a common one", () => {
    const { tools } = preselectByKeywordsIn(createState(), desktopCatalog(), "list the open issues");
    expect(tools[0]).toBe("list_issues");
  });

  it("does not hand the top of the ranking to the longest description", () => {
    const catalog: CatalogServer[] = [
      {
        name: "docs",
        tools: [
          {
            name: "manage_everything",
            description: "List files, list folders, list users, list tags, list events, and list anything else you can list in the workspace.",
          },
          { name: "list_folders", description: "List folders." },
          { name: "list_users", description: "List users." },
          { name: "list_tags", description: "List tags." },
          { name: "archive_invoice", description: "Archive an invoice." },
        ],
      },
    ];
    const { tools } = preselectByKeywordsIn(createState(), catalog, "list my invoices");
    expect(tools[0]).toBe("archive_invoice");
  });

  it("reads the server's label beside the tool's own words", () => {
    const { tools } = preselectByKeywordsIn(createState(), desktopCatalog(), "on GitHub, what is there");
    expect(tools.slice(0, 6).sort()).toEqual(
      desktopCatalog()[1]!
        .tools.map((tool) => tool.name)
        .sort(),
    );
  });

  it("is confident when a distinctive match stands well clear of everything the cap left out", () => {
    const result = preselectByKeywordsIn(createState(), desktopCatalog(), "what is the weather forecast for Lisbon", { max: 3 });
    expect(result.tools[0]).toBe("get-weather-forecast");
    expect(result.confident).toBe(true);
    expect(result.scores[0]!.score).toBeGreaterThanOrEqual(KEYWORD_MIN_SCORE);
  });

  it("is not confident when only a word the catalogue shares matched", () => {
    const result = preselectByKeywordsIn(createState(), desktopCatalog(), "get it", { max: 3 });
    expect(result.tools.length).toBeGreaterThan(0);
    expect(result.confident).toBe(false);
  });

  it("is not confident when a tool just under the cap scores nearly as much as one just over it", () => {
    const catalog: CatalogServer[] = [
      {
        name: "pad",
        tools: [
          { name: "archive_note", description: "Archive a note in the notebook." },
          { name: "pin_note", description: "Pin a note in the notebook." },
          { name: "weather", description: "Current weather." },
          { name: "clock", description: "Current time." },
        ],
      },
    ];
    const tied = preselectByKeywordsIn(createState(), catalog, "notebook note", { max: 1 });
    expect(tied.tools).toHaveLength(1);
    expect(tied.confident).toBe(false);
    const room = preselectByKeywordsIn(createState(), catalog, "notebook note", { max: 2, minScore: 0 });
    expect(room.confident).toBe(true);
  });

  it("is not confident when nothing matched", () => {
    const result = preselectByKeywordsIn(createState(), desktopCatalog(), "Compose a sonnet about autumn leaves");
    expect(result).toEqual({ tools: [], confident: false, scores: [] });
  });

  it("moves the bar with minScore and dropoff", () => {
    const state = createState();
    const request = "what is the weather forecast for Lisbon";
    expect(preselectByKeywordsIn(state, desktopCatalog(), request, { max: 3, minScore: 1000 }).confident).toBe(false);
    const catalog: CatalogServer[] = [
      {
        name: "pad",
        tools: [
          { name: "archive_note", description: "Archive a note in the notebook." },
          { name: "pin_note", description: "Pin a note in the notebook." },
          { name: "weather", description: "Current weather." },
          { name: "clock", description: "Current time." },
        ],
      },
    ];
    expect(preselectByKeywordsIn(state, catalog, "notebook note", { max: 1 }).confident).toBe(false);
    expect(preselectByKeywordsIn(state, catalog, "notebook note", { max: 1, minScore: 0, dropoff: 1 }).confident).toBe(true);
    expect(preselectByKeywordsIn(state, catalog, "notebook note", { max: 2, minScore: 0, dropoff: 0 }).confident).toBe(true);
    expect(preselectByKeywordsIn(state, catalog, "notebook note", { max: 2, minScore: 1000 }).confident).toBe(false);
    expect(KEYWORD_DROPOFF).toBeGreaterThan(0);
  });

  it("holds to the cap, 12 unless given, and names each tool once", () => {
    const many: CatalogServer[] = [
      { name: "one", tools: Array.from({ length: 30 }, (_, index) => ({ name: `report_${index}`, description: "Builds a sales report." })) },
      { name: "two", tools: [{ name: "report_1", description: "Also builds a sales report." }] },
    ];
    const state = createState();
    const byDefault = preselectByKeywordsIn(state, many, "sales report");
    expect(byDefault.tools).toHaveLength(12);
    expect(new Set(byDefault.tools).size).toBe(12);
    expect(byDefault.scores.map((score) => score.name)).toEqual(byDefault.tools);
    expect(preselectByKeywordsIn(state, many, "sales report", { max: 5 }).tools).toHaveLength(5);
    expect(preselectByKeywordsIn(state, many, "sales report", { max: -1 }).tools).toHaveLength(12);
  });

  it("reports each shortlisted tool's server and score, best first", () => {
    const { scores } = preselectByKeywordsIn(createState(), desktopCatalog(), "create a pull request");
    expect(scores[0]).toMatchObject({ name: "create_pull_request", server: "github" });
    for (let i = 1; i < scores.length; i++) expect(scores[i - 1]!.score).toBeGreaterThanOrEqual(scores[i]!.score);
  });

  it("keeps one index per catalogue array and indexes again when a server's tools change", () => {
    const state = createState();
    const catalog = desktopCatalog();
    const first = keywordIndexIn(state, catalog);
    expect(keywordIndexIn(state, catalog)).toBe(first);
    expect(keywordIndexIn(createState(), catalog)).not.toBe(first);
    catalog[2]!.tools.push({ name: "findFreeSlot", description: "Find a free slot in the diary." });
    expect(preselectByKeywordsIn(state, catalog, "find a free slot in my diary").tools[0]).toBe("findFreeSlot");
    catalog.push({ name: "music", tools: [{ name: "play_song", description: "Play a song." }] });
    expect(preselectByKeywordsIn(state, catalog, "play a song").tools[0]).toBe("play_song");
  });

  it("sorts only the head of the ranking, in the same order as a full sort", () => {
    const entry = fc.record({ position: fc.nat(50), score: fc.integer({ min: 0, max: 6 }).map((n) => n / 2), own: fc.constant(0), bestIdf: fc.constant(0) });
    fc.assert(
      fc.property(fc.uniqueArray(entry, { selector: (item) => item.position }), fc.nat(20), (scored: ScoredTool[], count) => {
        const full = [...scored].sort((a, b) => b.score - a.score || a.position - b.position);
        expect(topTools(scored, count)).toEqual(full.slice(0, count));
      }),
      { numRuns: 200 },
    );
  });

  it("uses the default runtime's state from the top-level function", () => {
    expect(preselectByKeywords(desktopCatalog(), "fork the repository").tools[0]).toBe("fork_repository");
  });

  it("never throws on junk and keeps to catalogued names under the cap", () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), fc.option(fc.integer({ min: -3, max: 20 })), (catalog, request, max) => {
        const result = preselectByKeywordsIn(createState(), catalog as CatalogServer[], request as string, max === null ? {} : { max });
        expect(Array.isArray(result.tools)).toBe(true);
        expect(result.tools.length).toBeLessThanOrEqual(max !== null && max >= 1 ? max : 12);
      }),
      { numRuns: 100 },
    );
    const names = new Set(desktopCatalog().flatMap((server) => server.tools.map((tool) => tool.name)));
    fc.assert(
      fc.property(fc.string(), (request) => {
        const result = preselectByKeywordsIn(createState(), desktopCatalog(), request, { max: 4 });
        expect(result.tools.length).toBeLessThanOrEqual(4);
        for (const name of result.tools) expect(names.has(name)).toBe(true);
        if (result.tools.length === 0) expect(result.confident).toBe(false);
      }),
      { numRuns: 100 },
    );
  });
});

describe("preselection", () => {
  const catalog = desktopCatalog();

  it("reads the { tools: [...] } answer and the bare array an older prompt produced", () => {
    expect(preselection({ tools: ["read_file", "fetch"] }, catalog)).toEqual(["read_file", "fetch"]);
    expect(preselection(["read_file", "fetch"], catalog)).toEqual(["read_file", "fetch"]);
  });

  it("reads either form written as text, in prose, a fence or nearly-JSON", () => {
    expect(preselection('{"tools": ["fetch"]}', catalog)).toEqual(["fetch"]);
    expect(preselection('Sure! ```json\n["createEvent", "listEvents"]\n```', catalog)).toEqual(["createEvent", "listEvents"]);
    expect(preselection("{'tools': ['move_file',]}", catalog)).toEqual(["move_file"]);
  });

  it("drops names outside the catalogue, repeats and non-names, and matches case when it picks one tool", () => {
    expect(preselection({ tools: ["read_file", "rm_rf", "READ_FILE", 7, null, { name: "Fetch" }, " write_file "] }, catalog)).toEqual([
      "read_file",
      "fetch",
      "write_file",
    ]);
  });

  it("holds to the cap, 12 unless given", () => {
    const names = catalog.flatMap((server) => server.tools.map((tool) => tool.name));
    expect(preselection(names, catalog)).toHaveLength(12);
    expect(preselection(names, catalog, 2)).toEqual(names.slice(0, 2));
  });

  it("never throws on junk", () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), (reply, junkCatalog) => {
        expect(Array.isArray(preselection(reply, catalog))).toBe(true);
        expect(Array.isArray(preselection(reply, junkCatalog as CatalogServer[]))).toBe(true);
      }),
      { numRuns: 300 },
    );
    expect(preselection("no JSON here", catalog)).toEqual([]);
    expect(preselection({ tools: "fetch" }, catalog)).toEqual(["fetch"]);
  });
});

describe("the prompt", () => {
  it("lists every tool by name under its server, and states the cap", () => {
    const system = preselectSystem(desktopCatalog(), 5);
    for (const server of desktopCatalog()) for (const tool of server.tools) expect(system).toContain(`- ${tool.name}: `);
    expect(system).toContain("## GitHub (github)");
    expect(system).toContain("## calendar");
    expect(system).toContain("at most 5");
    expect(preselectSystem(desktopCatalog())).toContain("at most 12");
  });

  it("keeps each description to one line", () => {
    const system = preselectSystem([{ name: "s", tools: [{ name: "t", description: `first\nsecond ${"x".repeat(400)}` }] }]);
    const line = system.split("\n").find((text) => text.startsWith("- t:"))!;
    expect(line).toContain("first second");
    expect(line.length).toBeLessThan(260);
  });

  it("puts the request in the user turn with the cap lowered to the catalogue's size", () => {
    const input = preselectInput(desktopCatalog(), "Book a meeting with Ana", 40);
    expect(input).toContain("Book a meeting with Ana");
    expect(input).toContain("at most 19 names");
    expect(preselectInput(desktopCatalog(), "x")).toContain("at most 12 names");
  });

  it("asks for { tools: string[] } and names the notice's lead", () => {
    expect(PRESELECT_SCHEMA).toMatchObject({ type: "object", required: ["tools"], properties: { tools: { type: "array", items: { type: "string" } } } });
    expect(PRESELECTED_NOTICE).toBe("Preselected tools:");
  });
});

describe("preselect", () => {
  it("returns nothing and asks nothing for an empty model, words included", async () => {
    const { ask, calls } = recorder({ tools: ["fetch"] });
    expect(await preselectIn(createState(), endpoint, "", desktopCatalog(), "weather forecast for Lisbon", { keywords: true, ask })).toEqual([]);
    expect(calls).toHaveLength(0);
  });

  it("returns a confident keyword shortlist without asking the model", async () => {
    const { ask, calls } = recorder({ tools: ["fetch"] });
    const picked = await preselectIn(createState(), endpoint, "small", desktopCatalog(), "what is the weather forecast for Lisbon", {
      keywords: true,
      max: 3,
      ask,
    });
    expect(picked[0]).toBe("get-weather-forecast");
    expect(calls).toHaveLength(0);
  });

  it("asks the model when the words do not settle it, with the schema, the prompt and the side task's settings", async () => {
    const { ask, calls } = recorder({ tools: ["createEvent", "not_a_tool"] });
    const picked = await preselectIn(createState(), endpoint, "small", desktopCatalog(), "set up a meeting with Ana on Friday", {
      keywords: { minScore: 5 },
      temperature: 0.1,
      reasoningEffort: "low",
      extraBody: { top_k: 20 },
      ask,
    });
    expect(picked).toEqual(["createEvent"]);
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    expect(call.endpoint).toBe(endpoint);
    expect(call.model).toBe("small");
    expect(call.system).toBe(preselectSystem(desktopCatalog()));
    expect(call.input).toBe(preselectInput(desktopCatalog(), "set up a meeting with Ana on Friday"));
    expect(call.schema).toEqual(PRESELECT_SCHEMA);
    expect(call.options).toMatchObject({ name: "preselection", maxTokens: 256, temperature: 0.1, reasoningEffort: "low", extraBody: { top_k: 20 } });
  });

  it("asks the model straight away without keywords, and passes a ceiling of 0 through", async () => {
    const { ask, calls } = recorder(["fetch"]);
    expect(await preselectIn(createState(), endpoint, "small", desktopCatalog(), "what is the weather forecast for Lisbon", { ask, maxTokens: 0 })).toEqual([
      "fetch",
    ]);
    expect(calls[0]!.options.maxTokens).toBe(0);
  });

  it("holds the model's answer to the cap", async () => {
    const names = desktopCatalog().flatMap((server) => server.tools.map((tool) => tool.name));
    const { ask } = recorder({ tools: names });
    expect(await preselectIn(createState(), endpoint, "small", desktopCatalog(), "everything", { ask, max: 4 })).toEqual(names.slice(0, 4));
  });

  it("answers an empty list and a notice when the side task fails, answers nothing or answers junk", async () => {
    const cases: [unknown | (() => unknown), RegExp][] = [
      [
        () => {
          throw new Error("connect ECONNREFUSED");
        },
        /failed \(connect ECONNREFUSED\)/,
      ],
      [undefined, /no readable answer/],
      [{ pick: "fetch" }, /unexpected shape/],
      [{ tools: ["rm_rf"] }, /named no catalogued tool/],
    ];
    for (const [reply, wording] of cases) {
      const notices: string[] = [];
      const { ask } = recorder(reply);
      const picked = await preselectIn(createState(), endpoint, "small", desktopCatalog(), "do something", { ask, onNotice: (text) => notices.push(text) });
      expect(picked).toEqual([]);
      expect(notices).toHaveLength(1);
      expect(notices[0]).toMatch(wording);
    }
  });

  it("takes an empty answer as no tools needed, without a notice", async () => {
    const notices: string[] = [];
    const { ask } = recorder({ tools: [] });
    expect(await preselectIn(createState(), endpoint, "small", desktopCatalog(), "hi there", { ask, onNotice: (text) => notices.push(text) })).toEqual([]);
    expect(notices).toEqual([]);
  });

  it("survives a notice listener that throws", async () => {
    const { ask } = recorder(() => {
      throw new Error("boom");
    });
    await expect(
      preselect(endpoint, "small", desktopCatalog(), "do something", {
        ask,
        onNotice: () => {
          throw new Error("listener");
        },
      }),
    ).resolves.toEqual([]);
  });

  it("returns nothing for an empty catalogue without asking", async () => {
    const { ask, calls } = recorder({ tools: ["fetch"] });
    expect(await preselect(endpoint, "small", [], "fetch a page", { ask })).toEqual([]);
    expect(calls).toHaveLength(0);
  });
});

describe("preselect against the loopback endpoint", () => {
  async function withServer(run: (server: EndpointServer, state: RuntimeState, notices: string[]) => Promise<void>): Promise<void> {
    const server = await startEndpoint();
    const state = createState();
    const notices: string[] = [];
    try {
      await run(server, state, notices);
    } finally {
      clearState(state);
      await server.close();
    }
  }

  it("asks the model through askJson with the preselection schema and a ceiling of 256", async () => {
    await withServer(async (server, state, notices) => {
      server.script(turn({ content: '{"tools":["createEvent","no_such_tool"]}' }));
      const picked = await preselectIn(state, { baseUrl: server.baseUrl }, "small", desktopCatalog(), "set up a meeting with Ana on Friday", {
        keywords: true,
        onNotice: (text) => notices.push(text),
      });
      expect(picked).toEqual(["createEvent"]);
      const [body] = server.chatBodies();
      expect(body?.model).toBe("small");
      expect(body?.max_tokens ?? body?.max_completion_tokens).toBe(256);
      const format = body?.response_format as { type?: string; json_schema?: { name?: string } } | undefined;
      expect(format?.type).toBe("json_schema");
      expect(format?.json_schema?.name).toBe("preselection");
      const messages = body?.messages as { role: string; content: unknown }[];
      expect(String(messages.find((message) => message.role === "system")?.content)).toContain("- createEvent: Schedule a new event");
      expect(String(messages.find((message) => message.role === "user")?.content)).toContain("set up a meeting with Ana on Friday");
      expect(notices).toEqual([]);
    });
  });

  it("sends nothing when the words are confident", async () => {
    await withServer(async (server, state) => {
      const picked = await preselectIn(state, { baseUrl: server.baseUrl }, "small", desktopCatalog(), "what is the weather forecast for Lisbon", {
        keywords: true,
        max: 3,
      });
      expect(picked[0]).toBe("get-weather-forecast");
      expect(server.chatBodies()).toHaveLength(0);
    });
  });

  it("answers an empty list with notices when the model writes no JSON", async () => {
    await withServer(async (server, state, notices) => {
      server.script(turn({ content: "I would use the calendar, I think." }));
      const picked = await preselectIn(state, { baseUrl: server.baseUrl }, "small", desktopCatalog(), "set up a meeting", {
        onNotice: (text) => notices.push(text),
      });
      expect(picked).toEqual([]);
      expect(notices.some((text) => /Tool preselection with small got no readable answer/.test(text))).toBe(true);
    });
  });

  it("rejects with the signal's reason when the caller aborts", async () => {
    await withServer(async (server, state) => {
      server.script(turn({ content: '{"tools":["fetch"]}' }));
      const controller = new AbortController();
      controller.abort(new Error("stopped by the host"));
      await expect(preselectIn(state, { baseUrl: server.baseUrl }, "small", desktopCatalog(), "fetch a page", { signal: controller.signal })).rejects.toThrow(
        "stopped by the host",
      );
    });
  });
});

/**
 * The public tool-retrieval sets the bench scores on, read where the bench reads them (beside
 * the repository, or TOOL_RETRIEVAL_CORPUS); they are never copied into the repository, so only
 * digests of the rankings and a few names are pinned here.
 */
const CORPUS = process.env.TOOL_RETRIEVAL_CORPUS
  ? resolve(process.env.TOOL_RETRIEVAL_CORPUS)
  : resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "shared", "corpus", "tool-retrieval");

interface CorpusSet {
  catalog: CatalogServer[];
  queries: { id: string; query: string }[];
}

function corpusSet(name: string): CorpusSet {
  const file = JSON.parse(readFileSync(join(CORPUS, `${name}.json`), "utf8")) as {
    tools: { id: string; name: string; server: string; description: string }[];
    queries: { id: string; query: string }[];
  };
  const servers = new Map<string, CatalogServer>();
  const seen = new Set<string>();
  for (const tool of file.tools) {
    let server = servers.get(tool.server);
    if (!server) {
      server = { name: tool.server, tools: [] };
      servers.set(tool.server, server);
    }
    const key = `${tool.server}\u0000${tool.name}`;
    server.tools.push({ name: seen.has(key) ? tool.id : tool.name, description: tool.description });
    seen.add(key);
  }
  return { catalog: [...servers.values()], queries: file.queries };
}

/** The rankings of every query of a set before usage memory existed: a digest of each, and the head of two. */
const PINNED: Record<string, { digest: string; sample: { id: string; top: string[]; confident: boolean }[] }> = {
  bfcl_v4: {
    digest: "d8016312317453879fd796102f6234bebd7ced9773977b3a3988267ec074b7a3",
    sample: [
      { id: "multiple_7", top: ["calculate_population_growth", "wildlife_population.assess_growth", "population_growth_estimate"], confident: false },
      { id: "simple_python_268", top: ["sculpture_locator.find_by_artist", "sculpture.create_custom", "get_sculpture_details"], confident: false },
    ],
  },
  bfcl_v4_multi_turn: {
    digest: "fa9de482bbd89405154f7966ef58604e8607f563cf73df790d95be9afe47c441",
    sample: [
      { id: "multi_turn_base_1-turn3", top: ["sort", "tail", "diff"], confident: false },
      { id: "multi_turn_base_110-turn3", top: ["cancel_order", "place_order", "get_order_details"], confident: false },
    ],
  },
  livemcpbench: {
    digest: "be9482e222d592ef97412917dfb9b7758a2448ba93c50e0b6b25fad30ffa3497",
    sample: [
      { id: "2b96c022-a2db-47a5-981a-03cc6ad8f95e", top: ["whois_domain", "whois_ip", "whois_as"], confident: false },
      { id: "90098a9c-2a37-4655-82b1-6b58c5154660", top: ["get_component_examples", "list_shadcn_components", "search_components"], confident: false },
    ],
  },
  metatool_toole: {
    digest: "39b2ded5f449762fa44cf93f0939d5e6cf6fdf15a05542338986c5a43389bc82",
    sample: [
      { id: "single-11802", top: ["ABCmouse", "ProductSearch", "tailor_erp"], confident: true },
      { id: "single-17658", top: ["MusicTool", "MediaModifyTool", "abc_to_audio"], confident: false },
    ],
  },
  seal_tools: {
    digest: "6c426f14dae510e248ed1e4694baf8ce9d075def50119009538f8ad7872b9619",
    sample: [
      { id: "test_in_domain-easy-7", top: ["getShipmentStatus", "customsDeclarationStatus", "checkDatabaseStatus"], confident: false },
      { id: "test_in_domain-difficult-684", top: ["getEnergyRegulations", "getBuildingData", "checkDatabaseStatus"], confident: false },
    ],
  },
  stabletoolbench: {
    digest: "583b2bd8157773c1059f6cffbefade82ce24b055a665b294abdbca904f44fb55",
    sample: [
      { id: "G1_instruction-2213", top: ["PreMatchForm", "MatchIncidents", "Match"], confident: true },
      { id: "G1_tool-42348", top: ["Playlist", "getPlaylist", "Download YouTube Mp3"], confident: false },
    ],
  },
  toollens: {
    digest: "1d9129da97a7863f7fe663a622eba45186d8ddfb946e0ce58fa2056fe1613595",
    sample: [
      {
        id: "1875",
        top: ["Latest (retrieve XAU, XAG, PA, PL, EUR, GBP, USD)", "Today's International Current Affairs", "/v1/convertcurrency"],
        confident: false,
      },
      { id: "18482", top: ["Macronutrient Distribution", "All Desserts Data", "getHospitalsByName"], confident: false },
    ],
  },
};

describe.skipIf(!existsSync(CORPUS))("preselectByKeywords on the public tool-retrieval sets", () => {
  it("knows every set it pins", () => {
    const names = readdirSync(CORPUS)
      .filter((name) => name.endsWith(".json"))
      .map((name) => name.replace(/\.json$/, ""))
      .sort();
    expect(names).toEqual(Object.keys(PINNED).sort());
  });

  for (const [name, pinned] of Object.entries(PINNED)) {
    it(`ranks every query of ${name} as it was pinned, and every fourth the same with an empty usage memory`, { timeout: 120_000 }, () => {
      const { catalog, queries } = corpusSet(name);
      const state = createState();
      const hash = createHash("sha256");
      const memory = createUsageMemory();
      const differing: string[] = [];
      const line = (id: string, result: KeywordPreselection) =>
        JSON.stringify([id, result.tools, result.confident, result.scores.map((entry) => [entry.server, entry.score.toFixed(6)])]);
      queries.forEach((query, index) => {
        const result = preselectByKeywordsIn(state, catalog, query.query);
        const written = line(query.id, result);
        hash.update(written + "\n");
        if (index % 4 === 0 && line(query.id, preselectByKeywordsIn(state, catalog, query.query, { memory })) !== written) differing.push(query.id);
        const sampled = pinned.sample.find((entry) => entry.id === query.id);
        if (sampled) expect({ id: query.id, top: result.tools.slice(0, 3), confident: result.confident }).toEqual(sampled);
      });
      expect(hash.digest("hex")).toBe(pinned.digest);
      expect(differing).toEqual([]);
    });
  }
});
