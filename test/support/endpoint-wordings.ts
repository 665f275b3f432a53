/**
 * @module endpoint-wordings
 * Each family's refusal wordings and the real samples; re-exported from
 * src/internal/testing-wordings.ts and src/internal/testing-wording-samples.ts.
 */
export * from "../../src/internal/testing-wordings.js";
export * from "../../src/internal/testing-wording-samples.js";
