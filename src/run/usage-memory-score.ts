/**
 * @module run/usage-memory-score
 * The usage memory as a field of each tool's document: keyword preselection's BM25F score with
 * the words of past requests that used a tool summed in beside its name, label and description.
 */

import { queryTerms, scoreTools, withServerShare, type KeywordIndex, type ScoredTool } from "./keyword-index.js";
import type { UsageMemory } from "./usage-memory.js";

/**
 * Scores every tool against a request as scoreTools does, with the memory as a fourth field.
 *
 * Per query term, the number of remembered requests that had the term and used a tool is
 * weighted (`settings.memory.weight`) and normalised by the tool's length in the field against
 * the memory's mean (`settings.memory.lengthNormalisation`), added to the catalogue's weighted
 * frequency and saturated once; the term's document frequency counts the tools either side holds
 * it in. A term's remembered tools are read from whichever side is smaller, the memory's tools
 * for it or the catalogue's names, so a memory far bigger than the catalogue costs no more per
 * term than the catalogue does. A term the memory does not hold scores exactly as scoreTools
 * scores it.
 */
export function scoreWithMemory(index: KeywordIndex, request: string, memory: UsageMemory): ScoredTool[] {
  if (typeof request !== "string" || index.tools.length === 0) return [];
  if (!(memory.averageLength > 0)) return scoreTools(index, request);
  const count = index.tools.length;
  const { k1 } = index.settings;
  const { weight: fieldWeight, lengthNormalisation: b } = index.settings.memory;
  const average = memory.averageLength;
  let placements = index.placements.get(memory);
  if (!placements || placements.epoch !== memory.epoch) {
    placements = { epoch: memory.epoch, positions: [] };
    index.placements.set(memory, placements);
  }
  const placed = placements.positions;
  const scores = new Float64Array(count);
  const best = new Float64Array(count);
  // Per tool, the memory's weighted frequency for the current term, and which term set it
  // (negated once the catalogue's side has used it).
  const extra = new Float64Array(count);
  const mark = new Int32Array(count);
  const seen = new Uint8Array(count);
  const touched: number[] = [];
  const listed: number[] = [];
  let termNumber = 0;
  const note = (times: number, tool: number): void => {
    if (!(times > 0)) return;
    let positions = placed[tool];
    if (positions === undefined) {
      positions = index.positions.get(memory.names[tool] ?? "") ?? null;
      placed[tool] = positions;
    }
    if (positions === null) return;
    const norm = 1 - b + b * ((memory.lengths[tool] ?? 0) / average);
    const frequency = (times * fieldWeight) / (norm > 0 ? norm : 1);
    for (let i = 0; i < positions.length; i++) {
      const at = positions[i]!;
      extra[at] = frequency;
      mark[at] = termNumber;
      listed.push(at);
    }
  };
  for (const [term, weight] of queryTerms(index, request)) {
    termNumber += 1;
    const posting = index.postings.get(term);
    const counts = memory.counts.get(term);
    listed.length = 0;
    if (counts) {
      if (counts.size <= index.positions.size) counts.forEach(note);
      else {
        for (const name of index.positions.keys()) {
          const tool = memory.numbers.get(name);
          if (tool !== undefined) note(counts.get(tool) ?? 0, tool);
        }
      }
    }
    if (!posting && listed.length === 0) continue;
    let df = listed.length;
    if (posting) for (let i = 0; i < posting.tools.length; i++) if (mark[posting.tools[i]!] !== termNumber) df += 1;
    const idf = listed.length === 0 ? (index.idf.get(term) ?? 0) : Math.log(1 + (count - df + 0.5) / (df + 0.5));
    const scale = weight * idf;
    if (posting) {
      for (let i = 0; i < posting.tools.length; i++) {
        const position = posting.tools[i]!;
        let frequency = posting.frequencies[i]!;
        if (mark[position] === termNumber) {
          frequency += extra[position]!;
          mark[position] = -termNumber;
        }
        if (!seen[position]) {
          seen[position] = 1;
          touched.push(position);
        }
        scores[position]! += scale * (frequency / (k1 + frequency));
        if (idf > best[position]!) best[position] = idf;
      }
    }
    for (let i = 0; i < listed.length; i++) {
      const position = listed[i]!;
      if (mark[position] !== termNumber) continue;
      const frequency = extra[position]!;
      if (!seen[position]) {
        seen[position] = 1;
        touched.push(position);
      }
      scores[position]! += scale * (frequency / (k1 + frequency));
      if (idf > best[position]!) best[position] = idf;
    }
  }
  return withServerShare(index, touched, scores, best);
}
