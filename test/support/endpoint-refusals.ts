/**
 * @module endpoint-refusals
 * Which configured refusal a request meets; re-exported from src/testing/refusals.ts.
 */
export * from "../../src/testing/refusals.js";
