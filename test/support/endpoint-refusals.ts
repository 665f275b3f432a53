/**
 * @module endpoint-refusals
 * Which configured refusal a request meets; re-exported from src/internal/testing-refusals.ts.
 */
export * from "../../src/internal/testing-refusals.js";
