/**
 * @module endpoint-wordings
 * Each family's refusal wordings and the real samples; re-exported from
 * src/testing/wordings.ts and src/testing/wording-samples.ts.
 */
export * from "../../src/testing/wordings.js";
export * from "../../src/testing/wording-samples.js";
