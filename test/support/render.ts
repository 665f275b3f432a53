/**
 * @module render
 * The loopback endpoint's stand-in chat template and prompt counts; re-exported from
 * src/testing/render.ts.
 */
export * from "../../src/testing/render.js";
