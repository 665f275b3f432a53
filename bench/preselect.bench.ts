/**
 * @module bench/preselect
 * preselectByKeywords over public tool-retrieval sets: how much of what a query needs lands in
 * the shortlist, how often `confident` is right, and what a query costs, beside a plain
 * word-overlap ranking.
 *
 * The sets are read at run time from `../shared/corpus/tool-retrieval` beside the repository
 * (or the folder named by TOOL_RETRIEVAL_CORPUS) and never copied into it; without them the bench
 * says why and skips. Each file's whole catalogue is ranked (the pooled setting), with servers
 * grouped as the file groups them, and scored over the queries that need a tool: recall@12 (the
 * share of a query's tools in the shortlist), hit@1 (its first tool is one it needs). A returned
 * name is matched back to the file's tool id through its server and name; where a set gives two
 * tools of one server the same name, the second is catalogued under its id. MetaTool's no_tool and
 * awareness_positive queries, about half each, test the verdict: the precision of `confident`
 * and the share of each side called confident.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { CatalogServer } from "../src/shapes/catalog.js";
import { splitWords } from "../src/run/keyword-index.js";
import { createState } from "../src/state/state.js";
import { preselectByKeywordsIn } from "../src/run/preselect.js";

const CAP = 12;
const PASSES = 3;

/** Plain BM25 recall@12 per file, as the corpus's BASELINE.md states it. */
const PLAIN_BM25: Readonly<Record<string, number>> = Object.freeze({
  seal_tools: 0.91,
  bfcl_v4_multi_turn: 0.82,
  stabletoolbench: 0.79,
  bfcl_v4: 0.73,
  metatool_toole: 0.69,
  livemcpbench: 0.42,
  toollens: 0.33,
});

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

function corpusFolder(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return process.env.TOOL_RETRIEVAL_CORPUS ? resolve(process.env.TOOL_RETRIEVAL_CORPUS) : resolve(here, "..", "..", "shared", "corpus", "tool-retrieval");
}

function keyOf(server: string, name: string): string {
  return `${server}\u0000${name}`;
}

/** The file's catalogue grouped by server, and each (server, name) pair's tool ids. */
function catalogOf(file: CorpusFile): { catalog: CatalogServer[]; ids: Map<string, string[]> } {
  const servers = new Map<string, CatalogServer>();
  const ids = new Map<string, string[]>();
  for (const tool of file.tools) {
    let server = servers.get(tool.server);
    if (!server) {
      server = { name: tool.server, tools: [] };
      servers.set(tool.server, server);
    }
    // A catalogue names each tool once on its server; a set that reuses a name for another tool (BFCL) keeps its id for it.
    const name = ids.has(keyOf(tool.server, tool.name)) ? tool.id : tool.name;
    server.tools.push({ name, description: tool.description });
    ids.set(keyOf(tool.server, name), [tool.id]);
  }
  return { catalog: [...servers.values()], ids };
}

/** The baseline: tools ranked by how many distinct request words their text shares, catalogue order on ties. */
function overlapRanker(catalog: CatalogServer[]): (request: string) => string[] {
  const keys: string[] = [];
  const postings = new Map<string, number[]>();
  for (const server of catalog) {
    for (const tool of server.tools) {
      const position = keys.length;
      keys.push(keyOf(server.name, tool.name));
      const words = new Set([...splitWords(tool.name), ...splitWords(server.label ?? server.name), ...splitWords(tool.description ?? "")]);
      for (const word of words) {
        const list = postings.get(word);
        if (list) list.push(position);
        else postings.set(word, [position]);
      }
    }
  }
  return (request) => {
    const counts = new Map<number, number>();
    for (const word of new Set(splitWords(request))) {
      for (const position of postings.get(word) ?? []) counts.set(position, (counts.get(position) ?? 0) + 1);
    }
    const ranked = [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    const chosen: string[] = [];
    for (const [position] of ranked) {
      const key = keys[position]!;
      if (!chosen.includes(key)) chosen.push(key);
      if (chosen.length >= CAP) break;
    }
    return chosen;
  };
}

interface Scores {
  recall: number;
  hit1: number;
}

function score(rankings: string[][], queries: CorpusQuery[], ids: Map<string, string[]>): Scores {
  let recall = 0;
  let hit1 = 0;
  queries.forEach((query, index) => {
    const relevant = new Set(query.relevant);
    const found = new Set<string>();
    for (const key of rankings[index]!) for (const id of ids.get(key) ?? []) if (relevant.has(id)) found.add(id);
    recall += found.size / relevant.size;
    const first = rankings[index]![0];
    if (first !== undefined && (ids.get(first) ?? []).some((id) => relevant.has(id))) hit1 += 1;
  });
  return { recall: recall / queries.length, hit1: hit1 / queries.length };
}

function percent(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : "–";
}

/** Runs the benchmark, prints its tables and returns them as markdown for RESULTS.md. */
export async function run(): Promise<string> {
  const folder = corpusFolder();
  if (!existsSync(folder)) {
    const reason = `skipped: no tool-retrieval corpus at ${folder} (set TOOL_RETRIEVAL_CORPUS to its folder)`;
    console.log(reason);
    return reason;
  }
  const files = readdirSync(folder)
    .filter((name) => name.endsWith(".json"))
    .sort();
  const retrieval: string[] = [
    "| set | tools | queries | recall@12 | hit@1 | overlap recall@12 | overlap hit@1 | plain BM25 recall@12 | confident (share / its hit rate) | ms a query | index ms |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  const verdicts: string[] = [];
  for (const name of files) {
    const set = name.replace(/\.json$/, "");
    const file = JSON.parse(readFileSync(join(folder, name), "utf8")) as CorpusFile;
    const { catalog, ids } = catalogOf(file);
    // Fastest of three builds, each in a fresh state: on a shared machine the slower ones measure the neighbours.
    let indexMs = Number.POSITIVE_INFINITY;
    let state = createState();
    for (let round = 0; round < PASSES; round++) {
      state = createState();
      const indexStart = performance.now();
      preselectByKeywordsIn(state, catalog, "");
      indexMs = Math.min(indexMs, performance.now() - indexStart);
    }
    const needing = file.queries.filter((query) => query.relevant.length > 0);
    const rankings: string[][] = [];
    const confident: boolean[] = [];
    for (const query of needing) {
      const result = preselectByKeywordsIn(state, catalog, query.query, { max: CAP });
      rankings.push(result.scores.map((entry) => keyOf(entry.server, entry.name)));
      confident.push(result.confident);
    }
    // The same again, timed: fastest of three passes over every query, the index already built.
    let perQuery = Number.POSITIVE_INFINITY;
    let sink = 0;
    for (let round = 0; round < PASSES; round++) {
      const start = performance.now();
      for (const query of needing) sink += preselectByKeywordsIn(state, catalog, query.query, { max: CAP }).tools.length;
      perQuery = Math.min(perQuery, (performance.now() - start) / Math.max(needing.length, 1));
    }
    if (sink < 0) console.log(sink);
    const overlap = overlapRanker(catalog);
    const overlapRankings = needing.map((query) => overlap(query.query));
    const mine = score(rankings, needing, ids);
    const plain = score(overlapRankings, needing, ids);
    let confidentCount = 0;
    let confidentHits = 0;
    needing.forEach((query, index) => {
      if (!confident[index]) return;
      confidentCount += 1;
      const relevant = new Set(query.relevant);
      if (rankings[index]!.some((key) => (ids.get(key) ?? []).some((id) => relevant.has(id)))) confidentHits += 1;
    });
    retrieval.push(
      `| ${set} | ${file.tools.length} | ${needing.length} | ${percent(mine.recall, 3)} | ${percent(mine.hit1, 3)} | ${percent(plain.recall, 3)} | ${percent(plain.hit1, 3)} | ${PLAIN_BM25[set]?.toFixed(2) ?? "–"} | ${percent(confidentCount / needing.length)} / ${percent(confidentHits / confidentCount)} | ${perQuery.toFixed(3)} | ${indexMs.toFixed(1)} |`,
    );
    if (set === "metatool_toole") {
      const balanced = file.queries.filter((query) => query.kind === "no_tool" || query.kind === "awareness_positive");
      let positives = 0;
      let negatives = 0;
      let confidentPositives = 0;
      let confidentNegatives = 0;
      let confidentFound = 0;
      for (const query of balanced) {
        const result = preselectByKeywordsIn(state, catalog, query.query, { max: CAP });
        const needs = query.relevant.length > 0;
        if (needs) positives += 1;
        else negatives += 1;
        if (!result.confident) continue;
        if (!needs) {
          confidentNegatives += 1;
          continue;
        }
        confidentPositives += 1;
        const relevant = new Set(query.relevant);
        if (result.scores.some((entry) => (ids.get(keyOf(entry.server, entry.name)) ?? []).some((id) => relevant.has(id)))) confidentFound += 1;
      }
      const called = confidentPositives + confidentNegatives;
      verdicts.push(
        "| queries | tool-needing called confident | no-tool called confident | precision (needs a tool) | precision (and a needed tool is in the shortlist) |",
        "|---|---:|---:|---:|---:|",
        `| ${positives} awareness_positive + ${negatives} no_tool | ${percent(confidentPositives / positives)} | ${percent(confidentNegatives / negatives)} | ${percent(confidentPositives / called)} | ${percent(confidentFound / called)} |`,
      );
    }
  }
  const markdown = [
    "Pooled catalogue, cap 12, the queries that need a tool.",
    "",
    ...retrieval,
    "",
    "The verdict on MetaTool's balanced no-tool / tool-needing queries:",
    "",
    ...verdicts,
  ].join("\n");
  console.log(markdown);
  return markdown;
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
