/**
 * @module profiles
 * The server families the loopback endpoint imitates; re-exported from src/internal/testing-profiles.ts.
 */
export * from "../../src/internal/testing-profiles.js";
