// eslint (9, flat config) for the programs the daemon runs in pages: daemon/**/js/*.js (docs/architecture.md,
// "JavaScript that runs in pages"). Each file is one function expression (or, for an init script, one
// statement) that Playwright evaluates as a classic script, so sourceType is "script". A `*.prelude.js` holds
// declarations that page_js.with_prelude puts in scope of the programs beside it: they are those programs'
// globals here. runtime/node/ holds what node runs beside Playwright instead (CommonJS). Like
// extension-bridge/eslint.config.mjs this imports no package, only node's own fs.

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const DAEMON = dirname(fileURLToPath(import.meta.url));

const pageGlobals = [
  "window", "document", "navigator", "location", "history", "navigation", "performance", "console",
  "localStorage", "sessionStorage", "getComputedStyle", "requestAnimationFrame", "cancelAnimationFrame",
  "setTimeout", "clearTimeout", "setInterval", "clearInterval", "addEventListener", "scrollX", "scrollY",
  "CSS", "Node", "NodeFilter", "Element", "EventTarget", "Event", "ShadowRoot", "XPathResult", "HTMLElement",
  "HTMLInputElement", "HTMLAnchorElement", "HTMLFormElement", "HTMLScriptElement", "XMLHttpRequest",
  "MutationObserver", "MessageChannel",
];

// The top-level `const` names of the preludes in each js/ folder.
const preludeNames = (folder) => readdirSync(folder).filter((name) => name.endsWith(".prelude.js"))
  .flatMap((name) => [...readFileSync(join(folder, name), "utf8").matchAll(/^const (\w+)/gm)].map((m) => m[1]));

const jsFolders = (root) => readdirSync(root, { withFileTypes: true }).filter((entry) => entry.isDirectory())
  .flatMap((entry) => entry.name === "js" ? [join(root, entry.name)] : jsFolders(join(root, entry.name)));

const readonly = (names) => Object.fromEntries(names.map((name) => [name, "readonly"]));

const rules = {
  "no-undef": "error",
  "no-unused-vars": ["error", { args: "after-used", caughtErrors: "none", ignoreRestSiblings: true }],
  "no-unreachable": "error",
  "no-dupe-keys": "error",
  "no-duplicate-case": "error",
  "no-empty": ["error", { allowEmptyCatch: true }],
  "no-fallthrough": "error",
  "no-constant-condition": ["error", { checkLoops: false }],
  "no-self-compare": "error",
  "no-unsafe-finally": "error",
  "no-async-promise-executor": "error",
  "no-promise-executor-return": "error",
  "no-var": "error",
  "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
  eqeqeq: "error",
  "no-implied-eval": "error",
  "no-eval": "error",
  "no-new-func": "error",
  "no-shadow": "error",
  "no-redeclare": "error",
  "no-use-before-define": ["error", { functions: false, variables: false }],
};

export default [
  {
    files: ["**/js/*.js"],
    languageOptions: { ecmaVersion: 2023, sourceType: "script", globals: readonly(pageGlobals) },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules,
  },
  // A prelude's declarations are used by the programs beside it, not by itself.
  {
    files: ["**/js/*.prelude.js"],
    rules: { "no-unused-vars": ["error", { vars: "local", args: "after-used", caughtErrors: "none" }] },
  },
  // What node runs beside Playwright (the driver's preload, runtime/node/): CommonJS with node's globals.
  {
    files: ["**/runtime/node/*.js"],
    languageOptions: { ecmaVersion: 2023, sourceType: "commonjs", globals: readonly(["require", "module", "process"]) },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules,
  },
  ...jsFolders(DAEMON).map((folder) => ({
    files: [`**/${folder.slice(DAEMON.length + 1)}/*.js`],
    ignores: ["**/*.prelude.js"],
    languageOptions: { globals: readonly(preludeNames(folder)) },
  })),
];
