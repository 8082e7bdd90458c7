// browserd's preload for Playwright's driver: node loads it first (`--require` in NODE_OPTIONS, set by
// daemon/runtime/driver.py) and it rewrites two spots of Playwright's bundle as the bundle loads.
//
// Why: Playwright builds the script it injects into each new document (its "injected script", ~330 kB)
// with the frame's sequence number spliced into the source text, and a main frame takes a new number on
// every navigation. V8 reuses compiled code only for the same source text, so every navigation parses and
// compiles the whole script again: about 10 ms of the renderer's CPU per navigation with its snapshot, a
// quarter of the renderer's work (docs/benchmarks.md). Rewritten, the source carries 0 and the number is set
// on the new instance by one call right after it is built, before anything can use it: the refs
// (`f2e5`) and every behaviour stay the same, and from the second document of a renderer on, V8 takes the
// script's compiled code from its cache.
//
// Every other file is left as it is, and so is a bundle in which a spot is not found exactly once (another
// Playwright version). Either way one line on stderr (the daemon's daemon.out, beside its log) says which.
"use strict";

const Module = require("node:module");
const path = require("node:path");

// The options literal of the injected script; the frame number is the only part of it that changes.
const SEQ_IN_SOURCE = "frameSeq: this.frame.seq,";
// Where the instance is built; the bundler names the source's and the handle's variables.
const BUILT = /this\._injectedScriptPromise = this\.rawEvaluateHandle\((\w+)\)\.then\(\((\w+)\) => \{/g;
// The injected script keeps the number in this field: the call below sets the same one.
const SEQ_FIELD = "this._frameSeq = options.frameSeq;";

// `source` with the injected script's frame number moved out of its text, or unchanged with the reason.
function rewrite(source) {
  const seqSpots = source.split(SEQ_IN_SOURCE).length - 1;
  const builtSpots = [...source.matchAll(BUILT)].length;
  const fieldSpots = source.split(SEQ_FIELD).length - 1;
  if (seqSpots !== 1 || builtSpots !== 1 || fieldSpots !== 1) {
    const reason = `found the frame number ${seqSpots}, the build ${builtSpots} and the field ${fieldSpots} times`;
    return { source, applied: false, reason };
  }
  const rewritten = source
    .replace(SEQ_IN_SOURCE, "frameSeq: 0,")
    .replace(
      BUILT,
      (_, script, handle) =>
        "const browserdFrameSeq = this.frame.seq;\n" +
        `this._injectedScriptPromise = this.rawEvaluateHandle(${script}).then(async (${handle}) => {\n` +
        `if (browserdFrameSeq) await ${handle}.evaluate((injected, seq) => { injected._frameSeq = seq; }, ` +
        "browserdFrameSeq);",
    );
  return { source: rewritten, applied: true, reason: "" };
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
      ? `browserd driver preload: ${filename} rewritten, its injected script keeps its text across navigations\n`
      : `browserd driver preload: ${filename} left as it is (${result.reason})\n`,
  );
  return compile.call(this, result.source, filename);
};

module.exports = { rewrite };
