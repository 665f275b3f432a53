import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    environment: "node",
    testTimeout: 20_000,
    hookTimeout: 20_000,
    setupFiles: ["test/support/open-handles.ts", "test/support/fast-check-seed.ts"],
  },
});
