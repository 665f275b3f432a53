/**
 * @module bench/preselect
 * preselectByKeywords over public tool-retrieval sets, measured out of sample: how much of what
 * a query needs lands in the shortlist with a usage memory built from other queries, against
 * plain BM25 and the ranking without a memory in the same run; how often `confident` is right
 * with thresholds tuned on data it is not scored on; and what a query costs at 1,000 tools with
 * a full memory.
 *
 * The sets are read at run time from `../shared/corpus/tool-retrieval` beside the repository
 * (or the folder named by TOOL_RETRIEVAL_CORPUS) and never copied into it; without them the bench
 * says why and skips. Each file's whole catalogue is ranked (the pooled setting), servers grouped
 * as the file groups them, cap 12. A returned name is matched back to the file's tool id through
 * its server and name; where a set gives two tools of one server the same name, the second is
 * catalogued under its id.
 *
 * Retrieval: 5-fold over each set's queries (a seeded shuffle). For each fold a fresh memory is
 * fed the other four folds' queries with their relevant tools, as a host's runs would feed it,
 * and the fold's tool-needing queries are scored: recall@12 (the share of a query's tools in the
 * shortlist) and hit@1 (its first tool is one it needs). Nothing of a held-out fold reaches its
 * memory.
 *
 * The verdict: MetaTool's no_tool and awareness_positive queries (its tool-usage-awareness task),
 * split in two halves (every MetaTool query is assigned a half). Thresholds are tuned on one half
 * and measured on the other, both ways. For tuning, each query of the half is ranked with a
 * memory of the rest of its own half less its inner fold (5-fold within the half); for
 * measuring, with a memory of the other half alone; so neither the memory nor the thresholds
 * ever see the half they are measured on. The rule tuned is the library's (minScore, dropoff);
 * the grid point kept is the one calling the most tool-needing queries confident while at most 1
 * in 100 of the tuning half's confident calls needs no tool.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { CatalogServer } from "../src/shapes/catalog.js";
import { isFunctionWord, splitWords } from "../src/run/keyword-index-words.js";
import { createState, type RuntimeState } from "../src/state/state.js";
import {
  isConfident,
  KEYWORD_MEMORY_DROPOFF,
  KEYWORD_MEMORY_MIN_SCORE,
  preselectByKeywordsIn,
  rankByKeywordsIn,
  type KeywordEvidence,
} from "../src/run/preselect.js";
import { createUsageMemory, recordUsage, type UsageMemory } from "../src/run/usage-memory.js";

const CAP = 12;
const FOLDS = 5;
const TIMING_ROUNDS = 7;
const SEED = 20240601;

interface CorpusTool {
  id: string;
  name: string;
  server: string;
  description: string;
}

interface CorpusQuery {
  id: string;
  query: string;
  relevant: string[];
  kind: string;
}

interface CorpusFile {
  tools: CorpusTool[];
  queries: CorpusQuery[];
}

/** A set as the bench reads it: its catalogue, each catalogued (server, name) pair's tool id, and each id's catalogued name. */
interface CorpusSet {
  name: string;
  file: CorpusFile;
  catalog: CatalogServer[];
  idOf: Map<string, string>;
  nameOf: Map<string, string>;
}

function corpusFolder(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return process.env.TOOL_RETRIEVAL_CORPUS ? resolve(process.env.TOOL_RETRIEVAL_CORPUS) : resolve(here, "..", "..", "shared", "corpus", "tool-retrieval");
}

function keyOf(server: string, name: string): string {
  return `${server}\u0000${name}`;
}

function readSet(folder: string, file: string): CorpusSet {
  const data = JSON.parse(readFileSync(join(folder, file), "utf8")) as CorpusFile;
  const servers = new Map<string, CatalogServer>();
  const idOf = new Map<string, string>();
  const nameOf = new Map<string, string>();
  for (const tool of data.tools) {
    let server = servers.get(tool.server);
    if (!server) {
      server = { name: tool.server, tools: [] };
      servers.set(tool.server, server);
    }
    // A catalogue names each tool once on its server; a set that reuses a name for another tool (BFCL) keeps its id for it.
    const name = idOf.has(keyOf(tool.server, tool.name)) ? tool.id : tool.name;
    server.tools.push({ name, description: tool.description });
    idOf.set(keyOf(tool.server, name), tool.id);
    nameOf.set(tool.id, name);
  }
  return { name: file.replace(/\.json$/, ""), file: data, catalog: [...servers.values()], idOf, nameOf };
}

/** A seeded generator of numbers in [0, 1) (mulberry32), so the folds are the same on every run. */
function random(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Each query's fold: a seeded shuffle dealt round the folds. */
function foldsOf(count: number, folds: number, seed: number): Int32Array {
  const next = random(seed);
  const order = Array.from({ length: count }, (_, index) => ({ index, key: next() })).sort((a, b) => a.key - b.key);
  const fold = new Int32Array(count);
  order.forEach((entry, rank) => (fold[entry.index] = rank % folds));
  return fold;
}

/** A memory fed the given queries with their relevant tools, as a host's runs would feed it. */
function memoryOf(set: CorpusSet, queries: readonly CorpusQuery[]): UsageMemory {
  const memory = createUsageMemory();
  for (const query of queries) {
    if (query.relevant.length > 0)
      recordUsage(
        memory,
        query.query,
        query.relevant.map((id) => set.nameOf.get(id) ?? id),
      );
  }
  return memory;
}

/**
 * Plain Okapi BM25 (k1 1.2, b 0.75) over name, server and description as one field, words split
 * on camelCase and non-alphanumerics, function words dropped, nothing stemmed: the corpus's
 * reference row, run here so it is measured beside the rest.
 */
function plainBm25(catalog: readonly CatalogServer[]): (request: string) => string[] {
  const keys: string[] = [];
  const lengths: number[] = [];
  const counts: Map<string, number>[] = [];
  for (const server of catalog) {
    for (const tool of server.tools) {
      const words = [...splitWords(tool.name), ...splitWords(server.name), ...splitWords(tool.description ?? "")].filter((word) => !isFunctionWord(word));
      const count = new Map<string, number>();
      for (const word of words) count.set(word, (count.get(word) ?? 0) + 1);
      keys.push(keyOf(server.name, tool.name));
      lengths.push(words.length);
      counts.push(count);
    }
  }
  const average = lengths.reduce((sum, length) => sum + length, 0) / Math.max(keys.length, 1) || 1;
  const postings = new Map<string, { position: number; weight: number }[]>();
  counts.forEach((count, position) => {
    const norm = 0.25 + 0.75 * (lengths[position]! / average);
    for (const [word, frequency] of count) {
      const list = postings.get(word) ?? [];
      list.push({ position, weight: (frequency * 2.2) / (frequency + 1.2 * norm) });
      postings.set(word, list);
    }
  });
  return (request) => {
    const scores = new Map<number, number>();
    for (const word of new Set(splitWords(request).filter((item) => !isFunctionWord(item)))) {
      const list = postings.get(word);
      if (!list) continue;
      const idf = Math.log(1 + (keys.length - list.length + 0.5) / (list.length + 0.5));
      for (const { position, weight } of list) scores.set(position, (scores.get(position) ?? 0) + idf * weight);
    }
    return [...scores]
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, CAP)
      .map(([position]) => keys[position]!);
  };
}

interface Tally {
  recall: number;
  hit1: number;
  queries: number;
  confident: number;
  confidentRight: number;
}

const tally = (): Tally => ({ recall: 0, hit1: 0, queries: 0, confident: 0, confidentRight: 0 });

function count(into: Tally, set: CorpusSet, query: CorpusQuery, keys: readonly string[], confident?: boolean): void {
  const relevant = new Set(query.relevant);
  const found = keys.filter((key) => relevant.has(set.idOf.get(key) ?? "")).length;
  into.queries += 1;
  into.recall += found / relevant.size;
  if (keys[0] !== undefined && relevant.has(set.idOf.get(keys[0]) ?? "")) into.hit1 += 1;
  if (confident) {
    into.confident += 1;
    if (found > 0) into.confidentRight += 1;
  }
}

function fixed(value: number, digits = 3): string {
  return Number.isFinite(value) ? value.toFixed(digits) : "–";
}

/** One row of the retrieval table: the set scored out of sample by 5-fold, three rankers side by side. */
function retrievalRow(set: CorpusSet, state: RuntimeState): { cells: string; means: Record<"bm25" | "today" | "memory", { recall: number; hit1: number }> } {
  const queries = set.file.queries;
  const fold = foldsOf(queries.length, FOLDS, SEED);
  const bm25 = plainBm25(set.catalog);
  const sides = { bm25: tally(), today: tally(), memory: tally() };
  for (let held = 0; held < FOLDS; held++) {
    const memory = memoryOf(
      set,
      queries.filter((_, index) => fold[index] !== held),
    );
    queries.forEach((query, index) => {
      if (fold[index] !== held || query.relevant.length === 0) return;
      count(sides.bm25, set, query, bm25(query.query));
      const today = preselectByKeywordsIn(state, set.catalog, query.query, { max: CAP });
      count(
        sides.today,
        set,
        query,
        today.scores.map((entry) => keyOf(entry.server, entry.name)),
        today.confident,
      );
      const remembered = preselectByKeywordsIn(state, set.catalog, query.query, { max: CAP, memory });
      count(
        sides.memory,
        set,
        query,
        remembered.scores.map((entry) => keyOf(entry.server, entry.name)),
        remembered.confident,
      );
    });
  }
  const rate = (side: Tally) => `${fixed(side.recall / side.queries)} | ${fixed(side.hit1 / side.queries)}`;
  const verdict = (side: Tally) => `${fixed(side.confident / side.queries, 2)} / ${fixed(side.confidentRight / side.confident, 2)}`;
  const n = sides.memory.queries;
  return {
    cells: `| ${set.name} | ${set.file.tools.length} | ${n} | ${rate(sides.bm25)} | ${rate(sides.today)} | ${rate(sides.memory)} | ${fixed((sides.memory.recall - sides.bm25.recall) / n, 3)} | ${verdict(sides.today)} | ${verdict(sides.memory)} |`,
    means: {
      bm25: { recall: sides.bm25.recall / n, hit1: sides.bm25.hit1 / n },
      today: { recall: sides.today.recall / n, hit1: sides.today.hit1 / n },
      memory: { recall: sides.memory.recall / n, hit1: sides.memory.hit1 / n },
    },
  };
}

/** A balanced query's verdict evidence and whether its shortlist holds a tool it needs. */
interface Judged {
  needs: boolean;
  found: boolean;
  evidence: KeywordEvidence | undefined;
}

interface Thresholds {
  minScore: number;
  dropoff: number;
}

/** What a rule makes of some judged queries: the share of tool-needing ones called confident, and the precisions. */
function judge(
  rows: readonly Judged[],
  rule: Thresholds,
): {
  coverage: number;
  noTool: number;
  precision: number;
  precisionFound: number;
  called: number;
  right: number;
  wrong: number;
  found: number;
  positives: number;
  negatives: number;
} {
  let positives = 0;
  let negatives = 0;
  let right = 0;
  let wrong = 0;
  let found = 0;
  for (const row of rows) {
    if (row.needs) positives += 1;
    else negatives += 1;
    if (!isConfident(row.evidence, rule.minScore, rule.dropoff)) continue;
    if (row.needs) {
      right += 1;
      if (row.found) found += 1;
    } else wrong += 1;
  }
  const called = right + wrong;
  return {
    coverage: right / positives,
    noTool: wrong / negatives,
    precision: right / called,
    precisionFound: found / called,
    called,
    right,
    wrong,
    found,
    positives,
    negatives,
  };
}

const GRID: Thresholds[] = [];
for (let minScore = 10; minScore <= 30; minScore += 1) {
  for (let dropoff = 20; dropoff <= 50; dropoff += 5) GRID.push({ minScore: minScore / 10, dropoff: dropoff / 100 });
}

/** The tuning rule: the most tool-needing queries called confident with at most 1 in 100 confident calls needing no tool. */
function tune(rows: readonly Judged[]): Thresholds | undefined {
  let best: { rule: Thresholds; coverage: number } | undefined;
  for (const rule of GRID) {
    const result = judge(rows, rule);
    if (result.called < 10 || result.wrong > result.called / 100) continue;
    if (!best || result.coverage > best.coverage) best = { rule, coverage: result.coverage };
  }
  return best?.rule;
}

function judged(state: RuntimeState, set: CorpusSet, query: CorpusQuery, memory?: UsageMemory): Judged {
  const ranked = rankByKeywordsIn(state, set.catalog, query.query, memory ? { max: CAP, memory } : { max: CAP });
  const relevant = new Set(query.relevant);
  const found = ranked.scores.some((entry) => relevant.has(set.idOf.get(keyOf(entry.server, entry.name)) ?? ""));
  return { needs: query.relevant.length > 0, found, evidence: ranked.evidence };
}

/** The verdict, tuned on one half of MetaTool's balanced split and measured on the other, both ways. */
function verdictSection(set: CorpusSet, state: RuntimeState): string[] {
  const queries = set.file.queries;
  const next = random(SEED + 1);
  const half = queries.map(() => (next() < 0.5 ? 0 : 1));
  const inner = queries.map(() => Math.floor(next() * FOLDS));
  const balanced = (index: number) => queries[index]!.kind === "no_tool" || queries[index]!.kind === "awareness_positive";
  const tuning: Judged[][] = [[], []];
  const measuring: Judged[][] = [[], []];
  const plain: Judged[][] = [[], []];
  for (const side of [0, 1]) {
    const other = memoryOf(
      set,
      queries.filter((_, index) => half[index] !== side),
    );
    const own = Array.from({ length: FOLDS }, (_, fold) =>
      memoryOf(
        set,
        queries.filter((_, index) => half[index] === side && inner[index] !== fold),
      ),
    );
    queries.forEach((query, index) => {
      if (half[index] !== side || !balanced(index)) return;
      tuning[side]!.push(judged(state, set, query, own[inner[index]!]));
      measuring[side]!.push(judged(state, set, query, other));
      plain[side]!.push(judged(state, set, query));
    });
  }
  const lines = [
    "| memory | tuned on | thresholds (minScore / dropoff) | measured on | tool-needing called confident | no-tool called confident | precision (needs a tool) | precision (and a needed tool is in the shortlist) |",
    "|---|---|---|---|---:|---:|---:|---:|",
  ];
  for (const [label, tuneOn, measureOn] of [
    ["yes", tuning, measuring],
    ["no", plain, plain],
  ] as const) {
    const pooled = { right: 0, wrong: 0, found: 0, positives: 0, negatives: 0 };
    for (const side of [0, 1]) {
      const rule = tune(tuneOn[1 - side]!);
      const rows = measureOn[side]!;
      if (!rule) {
        lines.push(`| ${label} | half ${2 - side} | none qualifies | half ${side + 1} | – | – | – | – |`);
        continue;
      }
      const result = judge(rows, rule);
      pooled.right += result.right;
      pooled.wrong += result.wrong;
      pooled.found += result.found;
      pooled.positives += result.positives;
      pooled.negatives += result.negatives;
      lines.push(
        `| ${label} | half ${2 - side} | ${rule.minScore.toFixed(1)} / ${rule.dropoff.toFixed(2)} | half ${side + 1} (${result.positives} + ${result.negatives}) | ${fixed(result.coverage, 2)} | ${fixed(result.noTool, 3)} | ${fixed(result.precision)} | ${fixed(result.precisionFound)} |`,
      );
    }
    const called = pooled.right + pooled.wrong;
    lines.push(
      `| ${label} | both ways | | both halves (${pooled.positives} + ${pooled.negatives}) | **${fixed(pooled.right / pooled.positives, 2)}** | ${fixed(pooled.wrong / pooled.negatives, 3)} | **${fixed(pooled.right / called)}** | ${fixed(pooled.found / called)} |`,
    );
  }
  // The library's thresholds: the same rule over the whole split, each query ranked with a memory of the other four folds.
  const fold = foldsOf(queries.length, FOLDS, SEED);
  const whole: Judged[] = [];
  for (let held = 0; held < FOLDS; held++) {
    const memory = memoryOf(
      set,
      queries.filter((_, index) => fold[index] !== held),
    );
    queries.forEach((query, index) => {
      if (fold[index] === held && balanced(index)) whole.push(judged(state, set, query, memory));
    });
  }
  const chosen = tune(whole);
  const agrees = chosen && chosen.minScore === KEYWORD_MEMORY_MIN_SCORE && chosen.dropoff === KEYWORD_MEMORY_DROPOFF;
  lines.push(
    "",
    `The same rule over the whole split picks ${chosen ? `${chosen.minScore.toFixed(1)} / ${chosen.dropoff.toFixed(2)}` : "nothing"}; the library's defaults with a memory are ${KEYWORD_MEMORY_MIN_SCORE.toFixed(1)} / ${KEYWORD_MEMORY_DROPOFF.toFixed(2)}${agrees ? " (the same)" : " (they differ: update KEYWORD_MEMORY_MIN_SCORE / KEYWORD_MEMORY_DROPOFF)"}.`,
  );
  return lines;
}

/**
 * Query time at 1,000 tools with a memory full to its default cap, against the same catalogue
 * without one. The memory's requests are the corpus's queries, each given one to three tools of
 * the catalogue at random: a denser memory than a host's, where the words of a kind of request
 * gather on the few tools it uses, so every query meets thousands of remembered pairs.
 */
function timingSection(sets: readonly CorpusSet[]): string[] {
  const source = sets.find((set) => set.name === "stabletoolbench") ?? sets[0]!;
  const catalog: CatalogServer[] = [];
  let tools = 0;
  for (const server of source.catalog) {
    if (tools >= 1000) break;
    const kept = server.tools.slice(0, 1000 - tools);
    catalog.push({ name: server.name, tools: kept });
    tools += kept.length;
  }
  const names = catalog.flatMap((server) => server.tools.map((tool) => tool.name));
  const memory = createUsageMemory();
  const requests = sets.flatMap((set) => set.file.queries.map((query) => query.query));
  const next = random(SEED + 2);
  for (let i = 0; memory.size < memory.maxRequests && i < memory.maxRequests * 4; i++) {
    const used = Array.from({ length: 1 + Math.floor(next() * 3) }, () => names[Math.floor(next() * names.length)]!);
    recordUsage(memory, requests[i % requests.length]!, used);
  }
  const state = createState();
  const queries = source.file.queries.map((query) => query.query);
  // Alternating rounds, the fastest of each after a warm-up, as wall time and as this process's CPU time: on a
  // shared machine a wall-clock round also measures the neighbours, the CPU time only what the queries cost.
  const fastest = { without: { wall: Infinity, cpu: Infinity }, full: { wall: Infinity, cpu: Infinity } };
  let sink = 0;
  for (let round = 0; round < TIMING_ROUNDS + 1; round++) {
    for (const side of ["without", "full"] as const) {
      const start = performance.now();
      const cpu = process.cpuUsage();
      for (const query of queries) sink += preselectByKeywordsIn(state, catalog, query, side === "full" ? { memory } : {}).tools.length;
      const used = process.cpuUsage(cpu);
      if (round === 0) continue;
      fastest[side].wall = Math.min(fastest[side].wall, (performance.now() - start) / queries.length);
      fastest[side].cpu = Math.min(fastest[side].cpu, (used.user + used.system) / 1000 / queries.length);
    }
  }
  if (sink < 0) console.log(sink);
  const { without, full } = fastest;
  return [
    "| catalogue | memory | queries | ms a query, no memory (CPU / wall) | ms a query, full memory (CPU / wall) |",
    "|---|---|---:|---:|---:|",
    `| ${tools} tools of ${source.name} | ${memory.size} requests (the default cap), ${memory.counts.size} terms | ${queries.length} | ${without.cpu.toFixed(3)} / ${without.wall.toFixed(3)} | ${full.cpu.toFixed(3)} / ${full.wall.toFixed(3)} |`,
  ];
}

/** Runs the benchmark, prints its tables and returns them as markdown for RESULTS.md. */
export async function run(): Promise<string> {
  const folder = corpusFolder();
  if (!existsSync(folder)) {
    const reason = `skipped: no tool-retrieval corpus at ${folder} (set TOOL_RETRIEVAL_CORPUS to its folder)`;
    console.log(reason);
    return reason;
  }
  const sets = readdirSync(folder)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => readSet(folder, name));
  // Timed first, before the folds and their memories fill the heap the collector then has to walk.
  const timing = timingSection(sets);
  const state = createState();
  const retrieval = [
    "| set | tools | queries | BM25 recall@12 | BM25 hit@1 | today recall@12 | today hit@1 | memory recall@12 | memory hit@1 | memory − BM25 | today confident (share / right) | memory confident (share / right) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  const means = { bm25: { recall: 0, hit1: 0 }, today: { recall: 0, hit1: 0 }, memory: { recall: 0, hit1: 0 } };
  for (const set of sets) {
    const row = retrievalRow(set, state);
    retrieval.push(row.cells);
    for (const side of ["bm25", "today", "memory"] as const) {
      means[side].recall += row.means[side].recall / sets.length;
      means[side].hit1 += row.means[side].hit1 / sets.length;
    }
  }
  const mean = (side: keyof typeof means, bold = "") => `${bold}${fixed(means[side].recall)}${bold} | ${bold}${fixed(means[side].hit1)}${bold}`;
  retrieval.push(`| **mean** | | | ${mean("bm25")} | ${mean("today")} | ${mean("memory", "**")} | **${fixed(means.memory.recall - means.bm25.recall)}** | | |`);
  const metatool = sets.find((set) => set.name === "metatool_toole");
  const markdown = [
    "Pooled catalogue, cap 12, the queries that need a tool, 5-fold: each fold scored with a memory of the other four.",
    "",
    ...retrieval,
    "",
    "The verdict on MetaTool's balanced no-tool / tool-needing queries, tuned on one half and measured on the other:",
    "",
    ...(metatool ? verdictSection(metatool, state) : ["(no metatool_toole set)"]),
    "",
    "Query time:",
    "",
    ...timing,
  ].join("\n");
  console.log(markdown);
  return markdown;
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
