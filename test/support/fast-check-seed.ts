/**
 * Pins fast-check's seed where a run must be reproducible: CI replays one fixed seed, and
 * `FC_SEED` replays any seed a failure printed. Elsewhere every run explores new inputs.
 */
import fc from "fast-check";

const seed = process.env.FC_SEED ?? (process.env.CI ? "20261130" : undefined);
if (seed !== undefined && Number.isSafeInteger(Number(seed))) fc.configureGlobal({ seed: Number(seed) });
