"""browserd's preload for Playwright's driver (runtime/node/driver_preload.js): its patches apply to the
Playwright installed here, each whole or not at all; it leaves any other file and any other bundle as they
are, and NODE_OPTIONS carries it once."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from browserd.daemon.runtime.driver import PRELOAD, driver_files, node_options_with_preload, preload_misses

NODE, BUNDLE = driver_files()


def _node(script: str, *args: str, node_options: str = "") -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "NODE_OPTIONS": node_options}
    return subprocess.run([str(NODE), "-e", script, *args], capture_output=True, text=True, env=env, timeout=60)


# Reads the installed bundle (after replacing argv[3] with argv[4] in it, when given), rewrites it and prints
# what the rewrite applied and why not, and for each name of the JSON object argv[5] whether the rewritten
# source holds its text.
_REWRITE_JS = (
    "const [, preload, bundle, from, to, texts] = process.argv;"
    "let source = require('node:fs').readFileSync(bundle, 'utf8');"
    "if (from) source = source.replace(from, to);"
    "const result = require(preload).rewrite(source);"
    "const holds = Object.fromEntries("
    "Object.entries(JSON.parse(texts)).map(([name, text]) => [name, result.source.includes(text)]));"
    "console.log(JSON.stringify({ applied: result.applied, reason: result.reason, ...holds }));"
)


def _rewritten(texts: dict[str, str], replace: tuple[str, str] = ("", "")) -> dict[str, object]:
    done = _node(_REWRITE_JS, str(PRELOAD), str(BUNDLE), *replace, json.dumps(texts))
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_the_installed_playwright_bundle_is_rewritten() -> None:
    """When a Playwright upgrade moves the spots, this fails here instead of navigations silently losing what
    the patches save."""
    texts = {
        "seqInSource": "frameSeq: this.frame.seq,",
        "setAfter": "injected._frameSeq = seq",
        "moduleKept": 'if (this.world === "utility") browserdKeepModule(this.frame);',
        "builtFromKept": "this.rawEvaluateHandle(browserdFromKeptModule(",
        "clientWrite": "this._pipeWrite.write(Buffer.concat([dataLength, data]));",
        "browserWrite": 'this._pipeWrite.write(JSON.stringify(message) + "\\0");',
        "noMainWorldPreview": 'if (this._context.world === "main" && !this._context._injectedScriptPromise) return;',
    }
    assert _rewritten(texts) == {
        "applied": [
            "the injected script keeps its text across navigations and its module per page",
            "each message crosses a pipe in one write",
            "an element handle in a main world builds no injected script for its preview",
        ],
        "reason": "",
        "seqInSource": False,
        "setAfter": True,
        "moduleKept": True,
        "builtFromKept": True,
        "clientWrite": True,
        "browserWrite": True,
        "noMainWorldPreview": True,
    }
    assert preload_misses() == "", "what browserd doctor reports agrees"


def test_a_bundle_without_the_spots_loads_as_it_is_and_says_why(tmp_path: Path) -> None:
    bundle = tmp_path / "coreBundle.js"
    bundle.write_text("module.exports.InjectedScript = 'host'; module.exports.frameSeq = 'this.frame.seq';\n")
    other = tmp_path / "other.js"
    other.write_text("module.exports = 'frameSeq: this.frame.seq,';\n")
    script = "console.log(require(process.argv[1]).InjectedScript, require(process.argv[2]));"
    done = _node(script, str(bundle), str(other), node_options=node_options_with_preload(""))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["host", "frameSeq:", "this.frame.seq,"], "both files load unchanged"
    assert 'left as it is (not "the injected script' in done.stderr, done.stderr
    assert "found the frame number 0" in done.stderr and "the client's writes 0" in done.stderr, done.stderr
    assert str(bundle) in done.stderr


def test_a_bundle_missing_one_spot_of_a_patch_gets_the_other_patches_only() -> None:
    """Half a patch could build a document's script from a module nobody sent: each patch all or nothing."""
    texts = {"seqInSource": "frameSeq: this.frame.seq,", "builtFromKept": "browserdFromKeptModule"}
    result = _rewritten(texts, replace=("_sessionForFrame(frame) {", "_sessionForFrame(frame2) {"))
    assert result["applied"] == [
        "each message crosses a pipe in one write",
        "an element handle in a main world builds no injected script for its preview",
    ], result
    assert result["seqInSource"] is True and result["builtFromKept"] is False, "the injected script as it was"
    reason = str(result["reason"])
    assert "the page's sessions 0" in reason and "the frame number 1" in reason, result


def test_node_options_keep_the_users_and_carry_the_preload_once() -> None:
    once = node_options_with_preload("--max-old-space-size=4096")
    assert once.startswith("--max-old-space-size=4096 --require ")
    assert json.dumps(str(PRELOAD)) in once
    assert node_options_with_preload(once) == once
    assert node_options_with_preload("") == f"--require {json.dumps(str(PRELOAD))}"
