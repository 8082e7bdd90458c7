// browserd's preload for Playwright's driver: node loads it first (`--require` in NODE_OPTIONS, set by
// daemon/runtime/driver.py) and it rewrites a few spots of Playwright's bundle as the bundle loads.
//
// Why: Playwright sends the script it injects into each new document (its "injected script", ~330 kB) on
// every navigation, with the frame's sequence number spliced into the source text, and a main frame takes a
// new number on every navigation. V8 reuses compiled code only for the same source text, so every navigation
// parsed and compiled the whole script again: about 10 ms of the renderer's CPU per navigation with its
// snapshot, a quarter of the renderer's work (docs/benchmarks.md). And the text itself crossed the driver,
// the browser process and the renderer each time: 3-4 ms of CPU more.
//
// Rewritten:
// - the source carries frame number 0, and the number is set on the new instance by one call right after
//   it is built, before anything can use it (the whole script's text is then the same on every navigation);
// - on Chromium, the script's module goes once per page into the utility world of each new document (the
//   empty script by which Playwright makes that world becomes the module), and a document's instance in
//   that world is built by a short script from the module already there, with its frame number. A world
//   that keeps no module (a document older than the page's session, the main world) gets the whole script.
// The refs (`f2e5`) and every behaviour stay the same.
//
// Every other file is left as it is, and so is a bundle in which a spot is not found exactly once (another
// Playwright version). Either way one line on stderr (the daemon's daemon.out, beside its log) says which.
"use strict";

const Module = require("node:module");
const path = require("node:path");

// The spots, each of which must be found exactly once. The options literal of the injected script, whose
// frame number is the only part that changes:
const SEQ_IN_SOURCE = "frameSeq: this.frame.seq,";
// The script's template, which names the variables holding its module's source and its options:
const TEMPLATE =
  /const module = \{\};\s*\$\{(\w+)\}\s*return new \(module\.exports\.InjectedScript\(\)\)\(globalThis, \$\{JSON\.stringify\((\w+)\)\}\);/g;
// Where the instance is built, with the bundler's names for the script and the handle:
const BUILT = /this\._injectedScriptPromise = this\.rawEvaluateHandle\((\w+)\)\.then\(\((\w+)\) => \{/g;
// The field in which the injected script keeps the number; the call below sets the same one:
const SEQ_FIELD = "this._frameSeq = options.frameSeq;";
// Chromium's utility world, which Playwright has made in every new document with an empty script:
const UTILITY_WORLD = /source: "",(\s*)worldName: this\._crPage\.utilityWorldName/g;
const SPOTS = [
  ["the frame number", SEQ_IN_SOURCE],
  ["the template", TEMPLATE],
  ["the build", BUILT],
  ["the field", SEQ_FIELD],
  ["the utility world", UTILITY_WORLD],
];
// Where a document's utility world keeps the module (not enumerable; the page's own scripts never see that
// world, and nothing but the injected script's build reads it).
const KEPT = "__browserdInjectedModule";

function found(source, spot) {
  return typeof spot === "string" ? source.split(spot).length - 1 : [...source.matchAll(spot)].length;
}

// Added to the bundle's module scope. The module script runs in the utility world of every new document of
// a Chromium page: Playwright sends its 330 kB once per page instead of once per navigation, and a
// document's instance is then built by a short script from the module already there. A world without it
// (a document older than the page's session, a browser other than Chromium) gets the whole script.
function helpers(moduleSource) {
  return `
function browserdModuleScript() {
  if (typeof ${moduleSource} !== "string") return "";
  browserdModuleScriptText ??= "(() => {\\nconst module = {};\\n" + ${moduleSource} +
    '\\nObject.defineProperty(globalThis, "${KEPT}", { value: module });\\n})();';
  return browserdModuleScriptText;
}
var browserdModuleScriptText;
function browserdFromKeptModule(options, frameSeq) {
  return "(() => { const module = globalThis.${KEPT};" +
    ' if (!module) throw new Error("no module kept in this world");' +
    " return new (module.exports.InjectedScript())(globalThis, " + JSON.stringify({ ...options, frameSeq }) + "); })()";
}
`;
}

// `source` rewritten so that the injected script's text stays the same across navigations and its module
// is sent once per page, or unchanged with the reason.
function rewrite(source) {
  const counts = SPOTS.map(([name, spot]) => [name, found(source, spot)]);
  if (counts.some(([, times]) => times !== 1)) {
    const reason = `found ${counts.map(([name, times]) => `${name} ${times}`).join(", ")} times`;
    return { source, applied: false, reason };
  }
  const [, moduleSource, options] = [...source.matchAll(TEMPLATE)][0];
  const rewritten = source
    .replace(SEQ_IN_SOURCE, "frameSeq: 0,")
    .replace(UTILITY_WORLD, (_, space) => `source: browserdModuleScript(),${space}worldName: this._crPage.utilityWorldName`)
    .replace(
      BUILT,
      (_, script, handle) =>
        "const browserdFrameSeq = this.frame.seq;\n" +
        'this._injectedScriptPromise = (this.world === "utility"\n' +
        `  ? this.rawEvaluateHandle(browserdFromKeptModule(${options}, browserdFrameSeq))\n` +
        '  : Promise.reject(new Error("the main world keeps no module")))\n' +
        `.catch(() => this.rawEvaluateHandle(${script}).then(async (${handle}) => {\n` +
        `  if (browserdFrameSeq) await ${handle}.evaluate((injected, seq) => { injected._frameSeq = seq; }, browserdFrameSeq);\n` +
        `  return ${handle};\n` +
        `})).then((${handle}) => {`,
    );
  return { source: rewritten + helpers(moduleSource), applied: true, reason: "" };
}

// Playwright's bundle: the file that defines the injected script's host.
function isPlaywrightBundle(content, filename) {
  return path.basename(filename) === "coreBundle.js" && content.includes("module.exports.InjectedScript");
}

const compile = Module.prototype._compile;
let loaded = false;
Module.prototype._compile = function compileRewritten(content, filename) {
  if (loaded || !isPlaywrightBundle(content, filename)) return compile.call(this, content, filename);
  loaded = true;
  const result = rewrite(content);
  process.stderr.write(
    result.applied
      ? `browserd driver preload: ${filename} rewritten, its injected script keeps its text across navigations and its module per page\n`
      : `browserd driver preload: ${filename} left as it is (${result.reason})\n`,
  );
  return compile.call(this, result.source, filename);
};

module.exports = { rewrite };
