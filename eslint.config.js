// Lint rules: typescript-eslint strict type-checked, no floating promises, exhaustive switches,
// and the package boundaries of docs/architecture.md (core is pure; hub, agent and cli never import
// each other).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

const purity = {
  "no-restricted-imports": [
    "error",
    {
      patterns: [
        {
          regex: "^node:",
          message: "core is pure: no Node.js modules (docs/architecture.md).",
        },
        {
          regex: "^(?!zod$|\\.{1,2}/)",
          message: "core imports nothing but zod and its own files.",
        },
      ],
    },
  ],
  "no-restricted-globals": [
    "error",
    { name: "setTimeout", message: "core is pure: time is an argument." },
    { name: "setInterval", message: "core is pure: time is an argument." },
    { name: "process", message: "core is pure: no process access." },
  ],
  "no-restricted-syntax": [
    "error",
    {
      selector:
        "CallExpression[callee.object.name='Date'][callee.property.name='now']",
      message: "core is pure: pass nowMs in.",
    },
    {
      selector: "NewExpression[callee.name='Date'][arguments.length=0]",
      message: "core is pure: pass nowMs in.",
    },
    {
      selector:
        "CallExpression[callee.object.name='Math'][callee.property.name='random']",
      message: "core is deterministic: no randomness.",
    },
  ],
};

const boundary = (self, others) => ({
  "no-restricted-imports": [
    "error",
    {
      patterns: others.map((other) => ({
        regex: `^@flotilla/${other}(/|$)`,
        message: `${self} must not import ${other}: share code through core, protocol or node (docs/architecture.md).`,
      })),
    },
  ],
});

export default tseslint.config(
  {
    ignores: [
      "**/dist/**",
      "**/node_modules/**",
      "bench/results/**",
      "coverage/**",
      "**/*.js",
      "**/*.mjs",
      "!eslint.config.js",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: ["vitest.config.ts", "eslint.config.js"],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/switch-exhaustiveness-check": "error",
      "@typescript-eslint/restrict-template-expressions": [
        "error",
        { allowNumber: false },
      ],
      "@typescript-eslint/no-unnecessary-condition": "off",
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  { files: ["packages/core/src/**/*.ts"], rules: purity },
  {
    files: ["packages/cli/src/**/*.ts"],
    rules: boundary("cli", ["hub", "agent"]),
  },
  {
    files: ["packages/hub/src/**/*.ts"],
    rules: boundary("hub", ["cli", "agent"]),
  },
  {
    files: ["packages/agent/src/**/*.ts"],
    rules: boundary("agent", ["cli", "hub"]),
  },
  {
    files: ["packages/node/src/**/*.ts"],
    rules: boundary("node", ["cli", "hub", "agent", "testkit"]),
  },
  {
    files: ["**/test/**/*.ts", "test/**/*.ts", "bench/**/*.ts"],
    rules: {
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
    },
  },
  {
    files: ["eslint.config.js", "vitest.config.ts"],
    ...tseslint.configs.disableTypeChecked,
  },
);
