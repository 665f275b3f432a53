// ESLint for the library: typescript-eslint's recommended rules everywhere, and in src/ a doc
// comment on every export (llms.txt is built from their first sentences) in one @param style.
import js from "@eslint/js";
import jsdoc from "eslint-plugin-jsdoc";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "coverage/", ".cache/", "test/fixtures/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      // The compiler checks names; scripts/*.mjs run on Node, whose globals it knows.
      "no-undef": "off",
      // The command and its tests match terminal colour codes (\x1b) on purpose.
      "no-control-regex": "off",
      // A default given before a try that may replace it is how the code reads a fallible value.
      "no-useless-assignment": "off",
      // An options interface may extend one other and add nothing yet, keeping its own name.
      "@typescript-eslint/no-empty-object-type": ["error", { allowInterfaces: "with-single-extends" }],
    },
  },
  {
    // Tests feed hostile and half-built shapes on purpose.
    files: ["test/**/*.ts", "bench/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    files: ["src/**/*.ts"],
    plugins: { jsdoc },
    rules: {
      "jsdoc/require-jsdoc": [
        "error",
        {
          publicOnly: { esm: true },
          require: { FunctionDeclaration: true, ClassDeclaration: true },
          contexts: ["TSInterfaceDeclaration", "TSTypeAliasDeclaration", "TSEnumDeclaration", "ExportNamedDeclaration > VariableDeclaration"],
        },
      ],
      "jsdoc/require-description": [
        "error",
        {
          contexts: [
            "FunctionDeclaration",
            "ClassDeclaration",
            "TSInterfaceDeclaration",
            "TSTypeAliasDeclaration",
            "TSEnumDeclaration",
            "ExportNamedDeclaration > VariableDeclaration",
          ],
        },
      ],
      "jsdoc/require-hyphen-before-param-description": ["error", "always"],
      "jsdoc/no-types": "error",
      // A destructured options object is documented as one @param, its fields on its type.
      "jsdoc/check-param-names": ["error", { checkDestructured: false }],
    },
  },
);
