/**
 * @module endpoint-turns
 * Scripted turns built into a family's chunks; re-exported from src/internal/testing-turns.ts.
 */
export * from "../../src/internal/testing-turns.js";
