/**
 * @module profiles
 * The server families the loopback endpoint imitates; re-exported from src/testing/profiles.ts.
 */
export * from "../../src/testing/profiles.js";
