/**
 * @module endpoint-turns
 * Scripted turns built into a family's chunks; re-exported from src/testing/turns.ts.
 */
export * from "../../src/testing/turns.js";
