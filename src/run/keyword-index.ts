/**
 * @module run/keyword-index
 * The term index behind keyword preselection: each catalogued tool's words, weighted by the
 * field they came from, and a ranking of the whole catalogue against a request.
 *
 * The score is BM25F: a term's frequency is summed over the tool's fields (its name, its
 * server's label, its description), each field weighted and normalised by its own length, and
 * saturated once, so a word in the name counts for more than the same word in a long
 * description. A text's terms are read as run/keyword-index-words reads them: lower-case words
 * less English function words, lightly stemmed, and pairs of characters for Chinese and Japanese.
 * A tool's name also yields the pairs of adjacent words it is made of, and a request's adjacent
 * words are looked up as pairs, so "create issue" ranks `create_issue` above a tool that only
 * shares one of the two words. A tool also gains a share of the best score on its own server,
 * since the tools one request needs tend to sit together.
 *
 * Each posting keeps its frequencies before saturation as well as after, so a field kept outside
 * the index because it changes between queries — the usage memory's requests, scored in
 * run/usage-memory-score — can be summed with the catalogue's fields before the one saturation.
 */

import type { CatalogServer } from "../shapes/catalog.js";
import { forEachTerm } from "./keyword-index-words.js";

/** One catalogued tool as the index holds it. */
export interface IndexedTool {
  /** The tool's name. */
  readonly name: string;
  /** The name of the server that lists it. */
  readonly server: string;
}

/** How the score weighs a field and normalises its length. */
export interface FieldWeights {
  readonly name: number;
  readonly label: number;
  readonly description: number;
}

/** The settings of the score; the defaults were measured on public tool-retrieval sets. */
export interface IndexSettings {
  readonly k1: number;
  readonly weights: FieldWeights;
  readonly lengthNormalisation: FieldWeights;
  /** Weight of a pair of adjacent name words, relative to a single name word. */
  readonly pairWeight: number;
  readonly stem: boolean;
  /** Share of the best score on a tool's server added to the tool's own. */
  readonly serverBoost: number;
  /** How the usage memory's field (the words of past requests that used a tool) is weighted and normalised. */
  readonly memory: MemoryFieldSettings;
}

/** The weight of the usage memory's field, relative to a description word, and its length normalisation. */
export interface MemoryFieldSettings {
  readonly weight: number;
  readonly lengthNormalisation: number;
}

/** The settings {@link indexTools} uses unless told otherwise. */
export const DEFAULT_INDEX_SETTINGS: IndexSettings = Object.freeze({
  k1: 1.2,
  weights: Object.freeze({ name: 2, label: 1.5, description: 1 }),
  lengthNormalisation: Object.freeze({ name: 0.5, label: 0.5, description: 0.75 }),
  pairWeight: 1,
  stem: true,
  serverBoost: 0.3,
  memory: Object.freeze({ weight: 0.2, lengthNormalisation: 0.25 }),
});

/** A built index: the tools in catalogue order and, per term, the tools holding it. */
export interface KeywordIndex {
  readonly tools: readonly IndexedTool[];
  /** Per term, parallel arrays of tool positions and saturated weights. */
  readonly postings: ReadonlyMap<string, Posting>;
  /** Per term, its inverse document frequency. */
  readonly idf: ReadonlyMap<string, number>;
  readonly settings: IndexSettings;
  /** Per tool, the position of its server's group. */
  readonly groupOf: Int32Array;
  /** Per server group, the positions of its tools. */
  readonly groups: readonly Int32Array[];
  /** Per tool name, the positions of the tools of that name (more than one where servers share a name). */
  readonly positions: ReadonlyMap<string, Int32Array>;
  /** Per usage memory scored against this index, where its tools sit here: a cache, filled as queries need it. */
  readonly placements: WeakMap<object, MemoryPlacements>;
}

/** The tools a term occurs in and how much it weighs in each. */
export interface Posting {
  readonly tools: Int32Array;
  /** Saturated: frequency over k1 plus frequency. */
  readonly weights: Float64Array;
  /** The weighted, normalised frequencies, before saturation. */
  readonly frequencies: Float64Array;
}

/** Which catalogue positions each of a usage memory's tool numbers stands for, filled in as numbers are met; valid for one epoch of the memory's numbering. */
export interface MemoryPlacements {
  epoch: number;
  /** Per tool number: its positions, null where the catalogue has no tool of that name, undefined until looked up. */
  positions: (Int32Array | null | undefined)[];
}

/** One tool's score against a request, with the most distinctive term it matched. */
export interface ScoredTool {
  readonly position: number;
  readonly score: number;
  /** Its score from its own words alone, before its server's share. */
  readonly own: number;
  /** The highest inverse document frequency among the terms it matched. */
  readonly bestIdf: number;
}

/**
 * The terms of a piece of text: its words less function words, each stemmed when asked. A run of
 * Chinese or Japanese characters, which has no spaces to split on, gives its overlapping pairs of
 * characters (a single character stays one term).
 */
export function termsOf(text: string, stem = DEFAULT_INDEX_SETTINGS.stem): string[] {
  const terms: string[] = [];
  forEachTerm(text, stem, (term) => terms.push(term));
  return terms;
}

/** A field's terms as counts: each distinct term, in the order first met, with how often it occurs; and how many terms there are in all. */
interface TermCounts {
  readonly counts: Map<string, number>;
  readonly length: number;
}

function countTerms(text: string, stem: boolean): TermCounts {
  const counts = new Map<string, number>();
  let length = 0;
  forEachTerm(text, stem, (term) => {
    counts.set(term, (counts.get(term) ?? 0) + 1);
    length++;
  });
  return { counts, length };
}

function pairsOf(terms: readonly string[]): string[] {
  const pairs: string[] = [];
  for (let i = 1; i < terms.length; i++) pairs.push(`${terms[i - 1]} ${terms[i]}`);
  return pairs;
}

/** Builds the index of a catalogue; servers or tools that are not objects with a string name are skipped. */
export function indexTools(catalog: readonly CatalogServer[], settings: IndexSettings = DEFAULT_INDEX_SETTINGS): KeywordIndex {
  const tools: IndexedTool[] = [];
  // Per tool, its name terms (pairs included), its server's label terms and its description terms.
  // A description's terms are counted as they are read, never listed: a description may be a
  // pasted document of forty thousand words.
  const fields: { name: string[]; label: string[]; description: TermCounts; nameLength: number }[] = [];
  const list = Array.isArray(catalog) ? catalog : [];
  const groupOf: number[] = [];
  const groups: number[][] = [];
  for (const server of list) {
    if (!server || typeof server !== "object" || !Array.isArray(server.tools)) continue;
    const serverName = typeof server.name === "string" ? server.name : "";
    const label = typeof server.label === "string" && server.label.trim() ? server.label : serverName;
    const labelTerms = termsOf(label, settings.stem);
    const group: number[] = [];
    for (const tool of server.tools) {
      if (!tool || typeof tool !== "object" || typeof tool.name !== "string" || tool.name === "") continue;
      const nameTerms = termsOf(tool.name, settings.stem);
      const nameLength = nameTerms.length;
      if (settings.pairWeight > 0) nameTerms.push(...pairsOf(nameTerms));
      group.push(tools.length);
      groupOf.push(groups.length);
      tools.push({ name: tool.name, server: serverName });
      fields.push({
        name: nameTerms,
        label: labelTerms,
        description: countTerms(typeof tool.description === "string" ? tool.description : "", settings.stem),
        nameLength,
      });
    }
    if (group.length > 0) groups.push(group);
  }
  const count = tools.length;
  let nameTotal = 0;
  let labelTotal = 0;
  let descriptionTotal = 0;
  for (const field of fields) {
    nameTotal += field.nameLength;
    labelTotal += field.label.length;
    descriptionTotal += field.description.length;
  }
  const nameAverage = nameTotal > 0 ? nameTotal / count : 1;
  const labelAverage = labelTotal > 0 ? labelTotal / count : 1;
  const descriptionAverage = descriptionTotal > 0 ? descriptionTotal / count : 1;
  const { weights, lengthNormalisation: b, k1, pairWeight } = settings;
  const share = (weight: number, normalisation: number, length: number, average: number): number => {
    const norm = 1 - normalisation + normalisation * (length / average);
    return weight / (norm > 0 ? norm : 1);
  };
  const gathered = new Map<string, { tools: number[]; weights: number[]; frequencies: number[] }>();
  const pseudo = new Map<string, number>();
  fields.forEach((field, position) => {
    pseudo.clear();
    // Each occurrence adds its field's weight over that field's length normalisation.
    const nameShare = share(weights.name, b.name, field.nameLength, nameAverage);
    field.name.forEach((term, index) => {
      const add = index < field.nameLength ? nameShare : nameShare * pairWeight;
      pseudo.set(term, (pseudo.get(term) ?? 0) + add);
    });
    const labelShare = share(weights.label, b.label, field.label.length, labelAverage);
    for (const term of field.label) pseudo.set(term, (pseudo.get(term) ?? 0) + labelShare);
    const descriptionShare = share(weights.description, b.description, field.description.length, descriptionAverage);
    for (const [term, count] of field.description.counts) {
      // Added once per occurrence, as a listed field's terms are, so the sum is the same to the last bit.
      let frequency = (pseudo.get(term) ?? 0) + descriptionShare;
      for (let seen = 1; seen < count; seen++) frequency += descriptionShare;
      pseudo.set(term, frequency);
    }
    for (const [term, frequency] of pseudo) {
      let entry = gathered.get(term);
      if (!entry) {
        entry = { tools: [], weights: [], frequencies: [] };
        gathered.set(term, entry);
      }
      entry.tools.push(position);
      entry.weights.push(frequency / (k1 + frequency));
      entry.frequencies.push(frequency);
    }
  });
  const postings = new Map<string, Posting>();
  const idf = new Map<string, number>();
  for (const [term, entry] of gathered) {
    postings.set(term, { tools: Int32Array.from(entry.tools), weights: Float64Array.from(entry.weights), frequencies: Float64Array.from(entry.frequencies) });
    const df = entry.tools.length;
    idf.set(term, Math.log(1 + (count - df + 0.5) / (df + 0.5)));
  }
  const named = new Map<string, number[]>();
  tools.forEach((tool, position) => {
    const list = named.get(tool.name);
    if (list) list.push(position);
    else named.set(tool.name, [position]);
  });
  const positions = new Map<string, Int32Array>();
  for (const [name, list] of named) positions.set(name, Int32Array.from(list));
  return {
    tools,
    postings,
    idf,
    settings,
    groupOf: Int32Array.from(groupOf),
    groups: groups.map((group) => Int32Array.from(group)),
    positions,
    placements: new WeakMap(),
  };
}

/** The query terms of a request: its words and its adjacent pairs, each with its weight. */
export function queryTerms(index: KeywordIndex, request: string): Map<string, number> {
  const wanted = new Map<string, number>();
  const pairing = index.settings.pairWeight > 0;
  // Each distinct pair once, in the order first met, after every single term; a pair already
  // met is found by its two terms, so a request that repeats "read file" ten thousand times
  // builds the string "read file" once.
  const pairs: string[] = [];
  const followers = new Map<string, Set<string>>();
  let previous: string | undefined;
  forEachTerm(request, index.settings.stem, (term) => {
    if (!wanted.has(term)) wanted.set(term, 1);
    if (pairing && previous !== undefined) {
      let after = followers.get(previous);
      if (after === undefined) followers.set(previous, (after = new Set()));
      if (!after.has(term)) {
        after.add(term);
        pairs.push(`${previous} ${term}`);
      }
    }
    previous = term;
  });
  // A term holds no space, so no pair is ever also a term.
  for (const pair of pairs) wanted.set(pair, 1);
  return wanted;
}

/**
 * Scores every tool against a request and returns, in no order, those that matched anything and
 * the tools on their servers, which gain a share of their server's best score.
 */
export function scoreTools(index: KeywordIndex, request: string): ScoredTool[] {
  if (typeof request !== "string" || index.tools.length === 0) return [];
  const scores = new Float64Array(index.tools.length);
  const best = new Float64Array(index.tools.length);
  const touched: number[] = [];
  for (const [term, weight] of queryTerms(index, request)) {
    const posting = index.postings.get(term);
    if (!posting) continue;
    const idf = index.idf.get(term) ?? 0;
    for (let i = 0; i < posting.tools.length; i++) {
      const position = posting.tools[i]!;
      if (scores[position] === 0) touched.push(position);
      scores[position]! += weight * idf * posting.weights[i]!;
      if (idf > best[position]!) best[position] = idf;
    }
  }
  return withServerShare(index, touched, scores, best);
}

/**
 * The scored tools of a query from its per-tool scores: those touched, each with a share of its
 * server's best, and the untouched tools of those servers with that share alone; only those that
 * scored where servers are not grouped.
 */
export function withServerShare(index: KeywordIndex, touched: readonly number[], scores: Float64Array, best: Float64Array): ScoredTool[] {
  const scored: ScoredTool[] = [];
  const boost = index.settings.serverBoost;
  const entry = (position: number, score: number): ScoredTool => ({ position, score, own: scores[position]!, bestIdf: best[position]! });
  if (boost > 0 && index.groups.length > 1) {
    const top = new Float64Array(index.groups.length);
    const groups: number[] = [];
    for (const position of touched) {
      const group = index.groupOf[position]!;
      const score = scores[position]!;
      if (score <= 0) continue;
      if (top[group] === 0) groups.push(group);
      if (score > top[group]!) top[group] = score;
    }
    for (const group of groups) {
      const groupBest = top[group]!;
      for (const position of index.groups[group]!) scored.push(entry(position, scores[position]! + boost * groupBest));
    }
  } else {
    for (const position of touched) if (scores[position]! > 0) scored.push(entry(position, scores[position]!));
  }
  return scored;
}

function before(a: ScoredTool, b: ScoredTool): boolean {
  return a.score > b.score || (a.score === b.score && a.position < b.position);
}

/** The best `count` of some scored tools, best first, ties in catalogue order. */
export function topTools(scored: readonly ScoredTool[], count: number): ScoredTool[] {
  if (count >= scored.length) return [...scored].sort((a, b) => b.score - a.score || a.position - b.position);
  const top: ScoredTool[] = [];
  if (count <= 0) return top;
  for (const entry of scored) {
    if (top.length === count && !before(entry, top[count - 1]!)) continue;
    let at = top.length === count ? count - 1 : top.length;
    if (top.length < count) top.push(entry);
    while (at > 0 && before(entry, top[at - 1]!)) {
      top[at] = top[at - 1]!;
      at--;
    }
    top[at] = entry;
  }
  return top;
}
