/**
 * @module render
 * The loopback endpoint's stand-in chat template and prompt counts; re-exported from
 * src/internal/testing-render.ts.
 */
export * from "../../src/internal/testing-render.js";
