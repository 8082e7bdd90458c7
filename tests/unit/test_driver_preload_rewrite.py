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


def test_the_installed_playwright_bundle_is_rewritten() -> None:
    """When a Playwright upgrade moves the spots, this fails here instead of navigations silently losing what
    the patches save."""
    script = (
        "const { rewrite } = require(process.argv[1]);"
        "const source = require('node:fs').readFileSync(process.argv[2], 'utf8');"
        "const result = rewrite(source);"
        "console.log(JSON.stringify({ applied: result.applied, reason: result.reason,"
        " seqInSource: result.source.includes('frameSeq: this.frame.seq,'),"
        " setAfter: result.source.includes('injected._frameSeq = seq'),"
        " moduleKept: result.source.includes('source: browserdModuleScript(),'),"
        " builtFromKept: result.source.includes('this.rawEvaluateHandle(browserdFromKeptModule('),"
        " clientWrite: result.source.includes('this._pipeWrite.write(Buffer.concat([dataLength, data]));'),"
        " browserWrite: result.source.includes('this._pipeWrite.write(JSON.stringify(message) + \"\\\\0\");') }));"
    )
    done = _node(script, str(PRELOAD), str(BUNDLE))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "applied": [
            "the injected script keeps its text across navigations and its module per page",
            "each message crosses a pipe in one write",
        ],
        "reason": "",
        "seqInSource": False,
        "setAfter": True,
        "moduleKept": True,
        "builtFromKept": True,
        "clientWrite": True,
        "browserWrite": True,
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


def test_a_bundle_missing_one_spot_of_a_patch_gets_the_other_patch_only() -> None:
    """Half a patch could build a document's script from a module nobody sent: each patch all or nothing."""
    script = (
        "const { rewrite } = require(process.argv[1]);"
        "const source = require('node:fs').readFileSync(process.argv[2], 'utf8')"
        ".replace('source: \"\",', 'source: \"\" ,');"
        "const result = rewrite(source);"
        "console.log(JSON.stringify({ applied: result.applied, reason: result.reason,"
        " seqInSource: result.source.includes('frameSeq: this.frame.seq,'),"
        " builtFromKept: result.source.includes('browserdFromKeptModule') }));"
    )
    done = _node(script, str(PRELOAD), str(BUNDLE))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["applied"] == ["each message crosses a pipe in one write"], result
    assert result["seqInSource"] is True and result["builtFromKept"] is False, "the injected script as it was"
    assert "the utility world 0" in result["reason"] and "the frame number 1" in result["reason"], result
