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
// Rewritten (the injected script):
// - the source carries frame number 0, and the number is set on the new instance by one call right after
//   it is built, before anything can use it (the whole script's text is then the same on every navigation);
// - on Chromium, once a page has built the script in a utility world, the script's module goes once to the
//   page, to run in the utility world of each later document, and a document's instance in that world is
//   then built by a short script from the module already there, with its frame number. A world that keeps
//   no module (the page's first document read, a document older than the page's session, the main world)
//   gets the whole script.
// The refs (`f2e5`) and every behaviour stay the same.
//
// Rewritten too (the pipes): the driver wrote each message to Chromium and to browserd's daemon in two
// writes (the text, then its terminator or after its length), and each write can wake the reader on the
// other side, which on a virtual machine's cores is the dearest part of passing a message: one write each
// took ~1 ms of the driver's CPU off every navigation (docs/benchmarks.md).
//
// Rewritten too (the previews): an element handle in a page's main world no longer builds the injected script
// there just to describe its element for debugging.
//
// Each patch applies whole or not at all: every spot it rewrites must be found exactly once.
// Every other file is left as it is, and so is a patch whose spots a bundle does not have (another Playwright
// version). One line on stderr (the daemon's daemon.out, beside its log) says what applied and what did not.
"use strict";

const Module = require("node:module");
const path = require("node:path");

// -- the injected script ---------------------------------------------------------------------------------
// The options literal of the injected script, whose frame number is the only part that changes:
const SEQ_IN_SOURCE = "frameSeq: this.frame.seq,";
// The script's template, which names the variables holding its module's source and its options:
const TEMPLATE =
  /const module = \{\};\s*\$\{(\w+)\}\s*return new \(module\.exports\.InjectedScript\(\)\)\(globalThis, \$\{JSON\.stringify\((\w+)\)\}\);/g;
// Where the instance is built, with the bundler's names for the script and the handle:
const BUILT = /this\._injectedScriptPromise = this\.rawEvaluateHandle\((\w+)\)\.then\(\((\w+)\) => \{/g;
// The field in which the injected script keeps the number; the call below sets the same one:
const SEQ_FIELD = "this._frameSeq = options.frameSeq;";
// A Chromium page's session for a frame, and the name of its utility world, which Playwright has made in
// every new document:
const SESSION_FOR_FRAME = "_sessionForFrame(frame) {";
const UTILITY_WORLD_NAME = "this.utilityWorldName = `__playwright_utility_world_${this._page.guid}`;";
// Where a document's utility world keeps the module (not enumerable; the page's own scripts never see that
// world, and nothing but the injected script's build reads it).
const KEPT = "__browserdInjectedModule";

// Added to the bundle's module scope. Once a Chromium page has built the injected script in a utility world
// from the whole text, the module script goes to the page's session, once, to run in the utility world of
// each later document (a page never read, like a scrape's, never gets it); a document's instance is then
// built by a short script from the module already there. A world without it (the page's first document, a
// browser other than Chromium) gets the whole script.
function helpers(moduleSource) {
  return `
function browserdModuleScript() {
  if (typeof ${moduleSource} !== "string") return "";
  browserdModuleScriptText ??= "(() => {\\nconst module = {};\\n" + ${moduleSource} +
    '\\nObject.defineProperty(globalThis, "${KEPT}", { value: module });\\n})();';
  return browserdModuleScriptText;
}
var browserdModuleScriptText;
function browserdKeepModule(frame) {
  try {
    const page = frame._page.delegate;
    const session = typeof page._sessionForFrame === "function" ? page._sessionForFrame(frame) : null;
    if (!session || session.browserdKeepsModule || !page.utilityWorldName) return;
    session.browserdKeepsModule = true;
    session._client
      .send("Page.addScriptToEvaluateOnNewDocument", { source: browserdModuleScript(), worldName: page.utilityWorldName })
      .catch(() => {});
  } catch {
    // A frame detached meanwhile: its page's next build tries again.
  }
}
function browserdFromKeptModule(options, frameSeq) {
  return "(() => { const module = globalThis.${KEPT};" +
    ' if (!module) throw new Error("no module kept in this world");' +
    " return new (module.exports.InjectedScript())(globalThis, " + JSON.stringify({ ...options, frameSeq }) + "); })()";
}
`;
}

function keepInjectedScript(source) {
  const [, moduleSource, options] = [...source.matchAll(TEMPLATE)][0];
  const rewritten = source
    .replace(SEQ_IN_SOURCE, "frameSeq: 0,")
    .replace(
      BUILT,
      (_, script, handle) =>
        "const browserdFrameSeq = this.frame.seq;\n" +
        'this._injectedScriptPromise = (this.world === "utility"\n' +
        `  ? this.rawEvaluateHandle(browserdFromKeptModule(${options}, browserdFrameSeq))\n` +
        '  : Promise.reject(new Error("the main world keeps no module")))\n' +
        `.catch(() => this.rawEvaluateHandle(${script}).then(async (${handle}) => {\n` +
        '  if (this.world === "utility") browserdKeepModule(this.frame);\n' +
        `  if (browserdFrameSeq) await ${handle}.evaluate((injected, seq) => { injected._frameSeq = seq; }, browserdFrameSeq);\n` +
        `  return ${handle};\n` +
        `})).then((${handle}) => {`,
    );
  return rewritten + helpers(moduleSource);
}

// -- the pipes -------------------------------------------------------------------------------------------
// To browserd's daemon (Playwright's client): the length, then the message.
const CLIENT_WRITES = /this\._pipeWrite\.write\((\w+)\);\s*this\._pipeWrite\.write\((\w+)\);/g;
// To Chromium (--remote-debugging-pipe): the message, then its terminator.
const BROWSER_WRITES = /this\._pipeWrite\.write\(JSON\.stringify\((\w+)\)\);\s*this\._pipeWrite\.write\("\\0"\);/g;

function writeOnce(source) {
  return source
    .replace(CLIENT_WRITES, (_, length, data) => `this._pipeWrite.write(Buffer.concat([${length}, ${data}]));`)
    .replace(BROWSER_WRITES, (_, message) => `this._pipeWrite.write(JSON.stringify(${message}) + "\\0");`);
}

// -- element handles' previews --------------------------------------------------------------------------
// Every element handle Playwright makes gets a preview of its element for debugging ("JSHandle@<button>"),
// built with the injected script of the handle's world. A handle in a page's main world (every
// locator.evaluate ends with one) thus built the whole injected script in that world on a document's first
// such call, and the call's own script waited behind it: 45-70 against 22-24 ms for a first locator.evaluate
// after a navigation, for a text nobody reads. A main-world handle whose world has no injected script yet
// keeps the preview it starts with; whatever needs the script there still builds it when it needs it.
const PREVIEW = /async _initializePreview\(\) \{(\s*)const utility = await this\._context\.injectedScript\(\);/g;

function skipMainWorldPreview(source) {
  return source.replace(
    PREVIEW,
    (whole, space) =>
      `async _initializePreview() {${space}` +
      `if (this._context.world === "main" && !this._context._injectedScriptPromise) return;${space}` +
      whole.slice(whole.indexOf("const utility")),
  );
}

const PATCHES = [
  {
    name: "the injected script keeps its text across navigations and its module per page",
    spots: [
      ["the frame number", SEQ_IN_SOURCE],
      ["the template", TEMPLATE],
      ["the build", BUILT],
      ["the field", SEQ_FIELD],
      ["the page's sessions", SESSION_FOR_FRAME],
      ["the utility world's name", UTILITY_WORLD_NAME],
    ],
    apply: keepInjectedScript,
  },
  {
    name: "each message crosses a pipe in one write",
    spots: [
      ["the client's writes", CLIENT_WRITES],
      ["the browser's writes", BROWSER_WRITES],
    ],
    apply: writeOnce,
  },
  {
    name: "an element handle in a main world builds no injected script for its preview",
    spots: [["the preview", PREVIEW]],
    apply: skipMainWorldPreview,
  },
];

function found(source, spot) {
  return typeof spot === "string" ? source.split(spot).length - 1 : [...source.matchAll(spot)].length;
}

// `source` with every patch whose spots it has applied: `applied` names them, `reason` says why each other
// one was left out ("" when none was).
function rewrite(source) {
  const applied = [];
  const missed = [];
  for (const patch of PATCHES) {
    const counts = patch.spots.map(([name, spot]) => [name, found(source, spot)]);
    if (counts.every(([, times]) => times === 1)) {
      source = patch.apply(source);
      applied.push(patch.name);
    } else {
      missed.push(`not "${patch.name}": found ${counts.map(([name, times]) => `${name} ${times}`).join(", ")} times`);
    }
  }
  return { source, applied, reason: missed.join("; ") };
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
  const said = result.applied.length
    ? `rewritten: ${result.applied.join("; ")}${result.reason ? `; ${result.reason}` : ""}`
    : `left as it is (${result.reason})`;
  process.stderr.write(`browserd driver preload: ${filename} ${said}\n`);
  return compile.call(this, result.source, filename);
};

module.exports = { rewrite };
