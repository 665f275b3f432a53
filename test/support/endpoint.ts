/**
 * @module endpoint
 * The loopback OpenAI-compatible endpoint the suite runs against; it lives in the published
 * `./testing` entry (src/testing.ts), and this file keeps the tests' import path.
 */
export * from "../../src/testing.js";
