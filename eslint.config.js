// Lint rules: typescript-eslint strict type-checked, no floating promises, exhaustive switches,
// and the package boundaries of docs/architecture.md (core is pure; hub, agent and cli never import
// each other).
import js from "@eslint/js";
import importX from "eslint-plugin-import-x";
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

// What only tests and benchmarks use lives in each package's src/testing.ts (`@flotilla/x/testing`);
// production code never imports it.
const noTestingImports = {
  regex: "^@flotilla/[^/]+/testing$",
  message: "@flotilla/*/testing is for tests and benchmarks only.",
};

const boundary = (self, others) => ({
  "no-restricted-imports": [
    "error",
    {
      patterns: [
        ...others.map((other) => ({
          regex: `^@flotilla/${other}(/|$)`,
          message: `${self} must not import ${other}: share code through core, protocol or node (docs/architecture.md).`,
        })),
        noTestingImports,
      ],
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
  {
    // Each package imports only what its own package.json declares (the nearest one); shipped
    // code only its dependencies. Exported functions declare their types.
    files: ["packages/*/src/**/*.ts"],
    plugins: { "import-x": importX },
    rules: {
      "import-x/no-extraneous-dependencies": [
        "error",
        { devDependencies: false, includeTypes: true },
      ],
      "@typescript-eslint/explicit-module-boundary-types": "error",
    },
  },
  // Tests and benchmarks: their package's dependencies of any kind, and the workspace root's
  // shared test tooling (vitest, fast-check).
  ...[
    "packages/agent",
    "packages/cli",
    "packages/core",
    "packages/hub",
    "packages/node",
    "packages/protocol",
    "packages/testkit",
    "bench",
  ].map((dir) => ({
    files: [`${dir}/test/**/*.ts`, `${dir}/**/*.mjs`],
    plugins: { "import-x": importX },
    rules: {
      "import-x/no-extraneous-dependencies": [
        "error",
        {
          includeTypes: true,
          packageDir: [`${import.meta.dirname}/${dir}`, import.meta.dirname],
        },
      ],
    },
  })),
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
    files: ["packages/protocol/src/**/*.ts", "packages/testkit/src/**/*.ts"],
    rules: boundary("this package", []),
  },
  {
    files: [
      "**/test/**/*.ts",
      "test/**/*.ts",
      "bench/**/*.ts",
      "bench/**/*.mjs",
      "scripts/**/*.mjs",
    ],
    rules: {
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
    },
  },
  {
    // Checked JavaScript: TypeScript (checkJs) already knows Node's globals.
    files: ["**/*.mjs"],
    rules: { "no-undef": "off" },
  },
  {
    files: ["eslint.config.js", "vitest.config.ts"],
    ...tseslint.configs.disableTypeChecked,
  },
);
