import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CatalogServer } from "../../src/shapes/catalog.js";
import type { Message, ToolDefinition } from "../../src/shapes/config.js";
import { clearState, createState, type RuntimeState } from "../../src/state/state.js";
import { runAgentLoopIn, type AgentLoopOptions } from "../../src/run/agent-loop.js";
import { KEYWORD_MEMORY_DROPOFF, KEYWORD_MEMORY_MIN_SCORE, preselectByKeywords, preselectByKeywordsIn } from "../../src/run/preselect.js";
import {
  createUsageMemory,
  recordUsage,
  rememberedRequests,
  USAGE_MEMORY_MAX_REQUESTS,
  USAGE_MEMORY_MAX_TERMS,
  USAGE_MEMORY_MAX_TOOLS,
  type UsageMemory,
} from "../../src/run/usage-memory.js";
import {
  exportUsageMemory,
  importUsageMemory,
  USAGE_MEMORY_BLOB_CHARACTERS_PER_REQUEST,
  USAGE_MEMORY_SNAPSHOT_VERSION,
} from "../../src/run/usage-memory-snapshot.js";
import { ToolIterationLimit } from "../../src/text/errors.js";
import { startEndpoint, turn, type EndpointServer } from "../support/endpoint.js";

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
      ],
    },
    {
      name: "github",
      label: "GitHub",
      tools: [
        { name: "create_issue", description: "Create a new issue in a GitHub repository." },
        { name: "list_issues", description: "List issues in a GitHub repository with filtering options." },
        { name: "fork_repository", description: "Fork a GitHub repository to your account or specified organization." },
      ],
    },
    {
      name: "calendar",
      tools: [
        { name: "listEvents", description: "List upcoming events on the user's calendar." },
        { name: "createEvent", description: "Schedule a new event with attendees, a start and an end time." },
      ],
    },
    {
      name: "web",
      label: "Web",
      tools: [
        { name: "fetch", description: "Fetch a URL from the internet and return its content as markdown." },
        { name: "brave-web-search", description: "Search the web with the Brave Search API." },
        { name: "get-weather-forecast", description: "Get the weather forecast for a city for the next days." },
      ],
    },
  ];
}

function memoryWith(requests: [string, string[]][], options: { maxRequests?: number } = {}): UsageMemory {
  const memory = createUsageMemory(options);
  for (const [request, used] of requests) recordUsage(memory, request, used);
  return memory;
}

describe("createUsageMemory", () => {
  it("starts empty with a cap of 5,000 requests, or the cap given", () => {
    const memory = createUsageMemory();
    expect(memory.size).toBe(0);
    expect(memory.maxRequests).toBe(USAGE_MEMORY_MAX_REQUESTS);
    expect(USAGE_MEMORY_MAX_REQUESTS).toBe(5000);
    expect(createUsageMemory({ maxRequests: 3 }).maxRequests).toBe(3);
  });

  it("takes the default cap for one that is not a whole number of at least one", () => {
    for (const maxRequests of [0, -4, 0.5, Number.NaN, Number.POSITIVE_INFINITY, "9" as unknown as number]) {
      expect(createUsageMemory({ maxRequests }).maxRequests).toBe(USAGE_MEMORY_MAX_REQUESTS);
    }
    expect(createUsageMemory(null as never).maxRequests).toBe(USAGE_MEMORY_MAX_REQUESTS);
    expect(createUsageMemory({ maxRequests: 7.9 }).maxRequests).toBe(7);
  });
});

describe("recordUsage", () => {
  it("keeps a request as its distinct terms, function words dropped, and the tools it used, each once", () => {
    const memory = createUsageMemory();
    expect(recordUsage(memory, "What are the headlines today? Headlines, please!", ["brave-web-search", "fetch", "brave-web-search"])).toBe(true);
    expect(rememberedRequests(memory)).toEqual([{ terms: ["headline", "today"], tools: ["brave-web-search", "fetch"] }]);
    expect(memory.size).toBe(1);
  });

  it("records nothing without a tool, without a word the index reads, or without a memory", () => {
    const memory = createUsageMemory();
    expect(recordUsage(memory, "summarise the news", [])).toBe(false);
    expect(recordUsage(memory, "what is it that you do", ["fetch"])).toBe(false);
    expect(recordUsage(memory, 42 as unknown as string, ["fetch"])).toBe(false);
    expect(recordUsage(memory, "summarise the news", [7, "", null] as unknown as string[])).toBe(false);
    expect(recordUsage(memory, "summarise the news", "fetch" as unknown as string[])).toBe(false);
    expect(recordUsage({} as UsageMemory, "summarise the news", ["fetch"])).toBe(false);
    expect(memory.size).toBe(0);
  });

  it("holds a request to 32 terms and 8 tools, and drops overlong words and names", () => {
    const memory = createUsageMemory();
    const words = Array.from({ length: 80 }, (_, index) => `word${index}`);
    const tools = Array.from({ length: 30 }, (_, index) => `tool_${index}`);
    recordUsage(memory, [`x${"y".repeat(80)}`, ...words].join(" "), [`t${"u".repeat(300)}`, ...tools]);
    const [kept] = rememberedRequests(memory);
    expect(kept!.terms).toEqual(words.slice(0, USAGE_MEMORY_MAX_TERMS));
    expect(kept!.tools).toEqual(tools.slice(0, USAGE_MEMORY_MAX_TOOLS));
  });

  it("never throws on junk, and keeps what it records within the caps", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.anything()), fc.oneof(fc.array(fc.string()), fc.anything()))),
        (calls) => {
          const memory = createUsageMemory({ maxRequests: 4 });
          for (const [request, used] of calls) recordUsage(memory, request as string, used as string[]);
          expect(memory.size).toBeLessThanOrEqual(4);
          for (const kept of rememberedRequests(memory)) {
            expect(kept.terms.length).toBeGreaterThan(0);
            expect(kept.terms.length).toBeLessThanOrEqual(USAGE_MEMORY_MAX_TERMS);
            expect(kept.tools.length).toBeGreaterThan(0);
            expect(kept.tools.length).toBeLessThanOrEqual(USAGE_MEMORY_MAX_TOOLS);
          }
        },
      ),
      { numRuns: 200 },
    );
    expect(recordUsage(Object.freeze({ ...createUsageMemory(), ring: Object.freeze([]) }) as UsageMemory, "read the file", ["read_file"])).toBe(false);
  });

  it("forgets the oldest request first once the cap is reached, and its words with it", () => {
    const catalog = desktopCatalog();
    const memory = memoryWith(
      [
        ["latest election headlines", ["brave-web-search"]],
        ["tidy my downloads", ["move_file"]],
        ["plan the offsite", ["createEvent"]],
      ],
      { maxRequests: 2 },
    );
    expect(rememberedRequests(memory).map((request) => request.tools[0])).toEqual(["move_file", "createEvent"]);
    expect(preselectByKeywords(catalog, "election headlines", { memory }).tools).toEqual([]);
    expect(preselectByKeywords(catalog, "tidy the downloads", { memory }).tools[0]).toBe("move_file");
  });

  it("keeps its tool numbers bounded while tools come and go, and still ranks the newest", () => {
    const memory = createUsageMemory({ maxRequests: 4 });
    for (let index = 0; index < 2000; index++) recordUsage(memory, `request number ${index} about zebras`, [`tool_${index}`]);
    expect(memory.size).toBe(4);
    expect(memory.live).toBe(4);
    expect(memory.names.length).toBeLessThanOrEqual(2 * memory.live + 64);
    const catalog: CatalogServer[] = [
      {
        name: "zoo",
        tools: [
          { name: "tool_1999", description: "" },
          { name: "tool_5", description: "" },
        ],
      },
    ];
    expect(preselectByKeywords(catalog, "zebras", { memory }).tools).toEqual(["tool_1999"]);
  });
});

describe("preselectByKeywords with a usage memory", () => {
  it("finds a tool by the words past requests used for it, where its own words say nothing of them", () => {
    const catalog = desktopCatalog();
    expect(preselectByKeywords(catalog, "headlines about the election").tools).not.toContain("brave-web-search");
    const memory = memoryWith([
      ["latest election headlines", ["brave-web-search"]],
      ["headlines on the budget", ["brave-web-search", "fetch"]],
      ["tidy my downloads", ["move_file"]],
    ]);
    const ranked = preselectByKeywords(catalog, "headlines about the election", { memory });
    expect(ranked.tools[0]).toBe("brave-web-search");
    expect(ranked.tools).toContain("fetch");
    expect(ranked.scores[0]!.server).toBe("web");
  });

  it("ranks and decides exactly as without a memory when the memory is empty", () => {
    const catalog = desktopCatalog();
    const state = createState();
    const empty = createUsageMemory();
    const vocabulary = [
      "file",
      "files",
      "read",
      "issue",
      "repository",
      "fork",
      "weather",
      "city",
      "events",
      "search",
      "web",
      "move",
      "the",
      "a",
      "zebra",
      "创建",
      "calendar",
    ];
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(...vocabulary), fc.string()), { maxLength: 8 }), (words) => {
        const request = words.join(" ");
        expect(preselectByKeywordsIn(state, catalog, request, { memory: empty })).toEqual(preselectByKeywordsIn(state, catalog, request));
      }),
      { numRuns: 200 },
    );
  });

  it("ranks as without one where the memory knows none of the catalogue's tools, and decides with the memory's thresholds", () => {
    const catalog = desktopCatalog();
    const state = createState();
    const unrelated = memoryWith([["list the issues and read the file", ["some_other_tool"]]]);
    const plain = preselectByKeywordsIn(state, catalog, "list the issues");
    const remembered = preselectByKeywordsIn(state, catalog, "list the issues", { memory: unrelated });
    expect(remembered.tools).toEqual(plain.tools);
    expect(remembered.scores).toEqual(plain.scores);
    // 1.62 units: over KEYWORD_MIN_SCORE, under KEYWORD_MEMORY_MIN_SCORE.
    expect(plain.confident).toBe(true);
    expect(remembered.confident).toBe(false);
    expect(remembered.confident).toBe(
      preselectByKeywordsIn(state, catalog, "list the issues", { minScore: KEYWORD_MEMORY_MIN_SCORE, dropoff: KEYWORD_MEMORY_DROPOFF }).confident,
    );
    expect(preselectByKeywordsIn(state, catalog, "list the issues", { memory: unrelated, minScore: 1.4 }).confident).toBe(true);
  });

  it("is confident when many past requests in these words used one tool", () => {
    const catalog = desktopCatalog();
    const memory = memoryWith(Array.from({ length: 30 }, (_, index) => [`morning briefing of headlines ${index}`, ["brave-web-search"]] as [string, string[]]));
    const ranked = preselectByKeywords(catalog, "my morning briefing of headlines", { memory });
    expect(ranked.tools[0]).toBe("brave-web-search");
    expect(ranked.confident).toBe(true);
  });

  it("gives a name that two servers list the memory's words on both", () => {
    const catalog: CatalogServer[] = [
      { name: "a", tools: [{ name: "search", description: "Search documents." }] },
      {
        name: "b",
        tools: [
          { name: "search", description: "Search tickets." },
          { name: "close", description: "Close a ticket." },
        ],
      },
    ];
    const memory = memoryWith([["where is the quarterly report", ["search"]]]);
    const ranked = preselectByKeywords(catalog, "quarterly report", { memory });
    expect(ranked.tools).toEqual(["search", "close"]);
    expect(ranked.scores.map((entry) => entry.server)).toEqual(["a", "b"]);
  });

  it("reads a memory holding more tools than the catalogue from the catalogue's side, with the same result", () => {
    const catalog = desktopCatalog();
    const crowded = memoryWith([
      ...Array.from({ length: 60 }, (_, index) => [`zebra stripes ${index}`, [`elsewhere_${index}`]] as [string, string[]]),
      ["zebra sightings", ["brave-web-search"]],
    ]);
    expect(crowded.counts.get("zebra")!.size).toBeGreaterThan(catalog.flatMap((server) => server.tools).length);
    expect(preselectByKeywords(catalog, "zebra", { memory: crowded }).tools).toEqual(["brave-web-search", "fetch", "get-weather-forecast"]);
  });

  it("never throws on a memory that is not one, and ranks as without it", () => {
    const catalog = desktopCatalog();
    for (const memory of [null, 3, "memory", {}, { size: 4 }, []]) {
      expect(preselectByKeywords(catalog, "read the file", { memory: memory as unknown as UsageMemory })).toEqual(
        preselectByKeywords(catalog, "read the file"),
      );
    }
  });
});

describe("exportUsageMemory and importUsageMemory", () => {
  const requests: [string, string[]][] = [
    ["latest election headlines", ["brave-web-search"]],
    ["tidy my downloads folder", ["move_file", "list_directory"]],
    ["plan the team offsite", ["createEvent"]],
  ];

  it("carries a memory across: the imported one holds the same requests and ranks the same", () => {
    const memory = memoryWith(requests);
    const blob = JSON.stringify(exportUsageMemory(memory));
    const restored = createUsageMemory();
    expect(importUsageMemory(restored, blob)).toEqual({ requests: 3, ignored: [] });
    expect(rememberedRequests(restored)).toEqual(rememberedRequests(memory));
    const catalog = desktopCatalog();
    for (const request of ["election headlines", "tidy downloads", "offsite planning"]) {
      expect(preselectByKeywords(catalog, request, { memory: restored })).toEqual(preselectByKeywords(catalog, request, { memory }));
    }
    expect(importUsageMemory(createUsageMemory(), exportUsageMemory(memory)).requests).toBe(3);
  });

  it("writes a versioned blob of terms and names, oldest first, never a request's text", () => {
    const blob = exportUsageMemory(memoryWith(requests));
    expect(blob.version).toBe(USAGE_MEMORY_SNAPSHOT_VERSION);
    expect(blob.requests[0]).toEqual({ terms: ["latest", "election", "headline"], tools: ["brave-web-search"] });
    expect(JSON.stringify(blob)).not.toContain("tidy my downloads");
  });

  it("adds a blob's requests as the newest, and reads only the newest the memory's cap keeps", () => {
    const memory = memoryWith([["read my notes", ["read_file"]]], { maxRequests: 2 });
    const result = importUsageMemory(memory, exportUsageMemory(memoryWith(requests)));
    expect(result.requests).toBe(2);
    expect(result.ignored).toEqual(["requests[0..0]: older than the newest 2 this memory keeps"]);
    expect(rememberedRequests(memory).map((request) => request.tools[0])).toEqual(["move_file", "createEvent"]);
  });

  it("changes nothing for a blob of another version, one that is not an object, or a string that is not JSON", () => {
    const memory = createUsageMemory();
    expect(importUsageMemory(memory, { version: 2, requests: [] }).ignored).toEqual(["(blob): version 2 is not 1"]);
    expect(importUsageMemory(memory, { requests: [] }).ignored).toEqual(["(blob): version missing is not 1"]);
    expect(importUsageMemory(memory, [1, 2]).ignored).toEqual(["(blob): not an object"]);
    expect(importUsageMemory(memory, "{not json").ignored).toEqual(["(blob): a string that is not JSON"]);
    expect(importUsageMemory(memory, { version: 1, requests: "many" }).ignored).toEqual(["requests: not an array"]);
    expect(importUsageMemory({} as UsageMemory, exportUsageMemory(memoryWith(requests))).ignored).toEqual(["(memory): not a usage memory"]);
    expect(memory.size).toBe(0);
  });

  it("refuses unread a text longer than the memory's cap allows", () => {
    const memory = createUsageMemory({ maxRequests: 2 });
    const text = JSON.stringify({ version: 1, requests: [{ terms: ["x".repeat(9000)], tools: ["fetch"] }] });
    expect(text.length).toBeGreaterThan(2 * USAGE_MEMORY_BLOB_CHARACTERS_PER_REQUEST);
    const result = importUsageMemory(memory, text);
    expect(result.requests).toBe(0);
    expect(result.ignored[0]).toMatch(/^\(blob\): \d+ characters, more than the 8192 this memory reads$/);
  });

  it("holds each request to the caps and says what it left out", () => {
    const memory = createUsageMemory();
    const terms = ["Upper", "x".repeat(65), "two words", 7, "", "ok", ...Array.from({ length: 60 }, (_, index) => `t${index}`)];
    const tools = [3, "", "y".repeat(257), ...Array.from({ length: 20 }, (_, index) => `tool_${index}`)];
    const result = importUsageMemory(memory, {
      version: 1,
      requests: [{ terms, tools }, { terms: ["fine"] }, "junk", { terms: [], tools: ["fetch"] }, { terms: ["fine"], tools: [] }],
    });
    expect(result.requests).toBe(1);
    const [kept] = rememberedRequests(memory);
    expect(kept!.terms).toEqual(["ok", ...Array.from({ length: USAGE_MEMORY_MAX_TERMS - 1 }, (_, index) => `t${index}`)]);
    expect(kept!.tools).toEqual(Array.from({ length: USAGE_MEMORY_MAX_TOOLS }, (_, index) => `tool_${index}`));
    expect(result.ignored).toEqual([
      "requests[0].terms: 5 not understood",
      "requests[0].tools: 3 not understood",
      "requests[1].tools: not an array",
      "requests[2]: not an object",
      "requests[3]: no terms",
      "requests[4]: no tools",
    ]);
  });

  it("lists at most 100 reasons and counts the rest", () => {
    const result = importUsageMemory(createUsageMemory(), { version: 1, requests: Array.from({ length: 250 }, () => "junk") });
    expect(result.ignored).toHaveLength(101);
    expect(result.ignored.at(-1)).toBe("(and 150 more)");
  });

  it("leaves a memory no bigger than recording would after a huge hostile blob", () => {
    const memory = createUsageMemory();
    const hostile = {
      version: 1,
      requests: Array.from({ length: 5_200 }, (_, index) => ({
        terms: Array.from({ length: 40 }, (_, term) => `w${index}x${term}`),
        tools: Array.from({ length: 12 }, (_, tool) => `tool_${index}_${tool}`),
      })),
    };
    const result = importUsageMemory(memory, hostile);
    expect(result.requests).toBe(USAGE_MEMORY_MAX_REQUESTS);
    expect(memory.size).toBe(USAGE_MEMORY_MAX_REQUESTS);
    for (const request of rememberedRequests(memory)) {
      expect(request.terms.length).toBeLessThanOrEqual(USAGE_MEMORY_MAX_TERMS);
      expect(request.tools.length).toBeLessThanOrEqual(USAGE_MEMORY_MAX_TOOLS);
    }
    expect(memory.names.length).toBeLessThanOrEqual(2 * memory.live + 64);
    const catalog = desktopCatalog();
    expect(preselectByKeywords(catalog, "read the file", { memory }).tools[0]).toBe("read_file");
  });

  it("never throws on junk, and keeps the memory within its caps", () => {
    fc.assert(
      fc.property(fc.anything(), fc.array(fc.record({ terms: fc.array(fc.anything()), tools: fc.array(fc.anything()) }), { maxLength: 6 }), (junk, entries) => {
        const memory = createUsageMemory({ maxRequests: 3 });
        importUsageMemory(memory, junk);
        importUsageMemory(memory, { version: 1, requests: entries });
        importUsageMemory(memory, JSON.stringify({ version: 1, requests: entries }));
        expect(memory.size).toBeLessThanOrEqual(3);
        for (const request of rememberedRequests(memory)) {
          expect(request.terms.length).toBeGreaterThan(0);
          expect(request.tools.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("runAgentLoop with a usage memory", () => {
  const tool = (name: string, description: string): ToolDefinition => ({
    type: "function",
    function: { name, description, parameters: { type: "object", properties: {} } },
  });
  const tools = desktopCatalog().flatMap((server) => server.tools.map((entry) => tool(entry.name, entry.description ?? "")));
  const question = (content: string): Message[] => [{ role: "user", content }];

  async function withLoop(
    body: (server: EndpointServer, run: (options: Partial<AgentLoopOptions>) => ReturnType<typeof runAgentLoopIn>, state: RuntimeState) => Promise<void>,
  ): Promise<void> {
    const server = await startEndpoint({});
    const state = createState();
    try {
      await body(
        server,
        (options) =>
          runAgentLoopIn(state, {
            config: { baseUrl: server.baseUrl, model: "loopback-model", maxToolIterations: 5, maxRetries: 0 },
            messages: question("What are the election headlines?"),
            tools,
            dispatch: ({ name }) => `${name} ran`,
            ...options,
          }),
        state,
      );
    } finally {
      clearState(state);
      await server.close();
    }
  }

  it("records an answered run's question and the tools it used", async () => {
    await withLoop(async (server, run) => {
      server.script(turn({ toolCalls: [{ name: "brave-web-search", arguments: {}, id: "c1" }] }), turn({ content: "Here they are." }));
      const memory = createUsageMemory();
      const result = await run({ usageMemory: memory });
      expect(result.used).toEqual(["brave-web-search"]);
      expect(rememberedRequests(memory)).toEqual([{ terms: ["election", "headline"], tools: ["brave-web-search"] }]);
    });
  });

  it("records nothing for a run that used no tool or did not finish", async () => {
    await withLoop(async (server, run) => {
      const memory = createUsageMemory();
      server.script(turn({ content: "No tools needed." }));
      await run({ usageMemory: memory });
      server.script(turn({ toolCalls: [{ name: "fetch", arguments: {}, id: "c1" }] }), turn({ toolCalls: [{ name: "fetch", arguments: {}, id: "c2" }] }));
      await expect(
        run({ usageMemory: memory, config: { baseUrl: server.baseUrl, model: "loopback-model", maxToolIterations: 1, maxRetries: 0 } }),
      ).rejects.toBeInstanceOf(ToolIterationLimit);
      expect(memory.size).toBe(0);
    });
  });

  it("has the loop's own keyword preselection read it, settling the shortlist without asking the small model", async () => {
    await withLoop(async (server, run, state) => {
      const catalog = desktopCatalog();
      const memory = memoryWith(
        Array.from({ length: 30 }, (_, index) => [`morning briefing of headlines ${index}`, ["brave-web-search"]] as [string, string[]]),
      );
      const prompt = "my morning briefing of headlines";
      expect(preselectByKeywordsIn(state, catalog, prompt, { memory }).confident).toBe(true);
      expect(preselectByKeywordsIn(state, catalog, prompt).confident).toBe(false);
      server.script(turn({ content: "Briefing ready." }));
      const result = await run({
        config: { baseUrl: server.baseUrl, model: "loopback-model", maxToolIterations: 5, maxRetries: 0, toolSelectModel: "small" },
        messages: question(prompt),
        catalog,
        preselect: true,
        preselectKeywords: true,
        usageMemory: memory,
      });
      expect(server.chatBodies().map((body) => body.model)).toEqual(["loopback-model"]);
      expect(result.preselected[0]).toBe("brave-web-search");
    });
  });
});
