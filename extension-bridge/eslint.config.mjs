// eslint (9, flat config) for the extension: plain browser-extension ES modules, no build step and no
// packages, so this file imports nothing either - `make lint-js` runs an eslint installed outside the repo.

const browserGlobals = [
  "chrome", "console", "crypto", "document", "navigator", "setTimeout", "clearTimeout", "setInterval",
  "clearInterval", "TextEncoder", "WebSocket",
];

export default [
  {
    files: ["**/*.js"],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: "module",
      globals: Object.fromEntries(browserGlobals.map((name) => [name, "readonly"])),
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "no-undef": "error",
      "no-unused-vars": ["error", { args: "after-used", argsIgnorePattern: "^_" }],
      "no-unreachable": "error",
      "no-dupe-keys": "error",
      "no-duplicate-case": "error",
      "no-empty": ["error", { allowEmptyCatch: true }],
      "no-fallthrough": "error",
      "no-constant-condition": "error",
      "no-self-compare": "error",
      "no-unsafe-finally": "error",
      "no-async-promise-executor": "error",
      "no-promise-executor-return": "error",
      "require-atomic-updates": "off", // the worker's state is single-threaded and owned by one event loop
      "no-var": "error",
      "prefer-const": "error",
      eqeqeq: "error",
      "no-implied-eval": "error",
      "no-eval": "error",
      "no-new-func": "error",
      "no-shadow": "error",
      "no-use-before-define": ["error", { functions: false }],
      "no-console": "error", // the side panel's log is where the user looks; a console line is lost
    },
  },
];
