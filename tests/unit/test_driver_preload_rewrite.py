"""browserd's preload for Playwright's driver (runtime/node/driver_preload.js): it applies to the Playwright
installed here, leaves any other file and any other bundle as they are, and NODE_OPTIONS carries it once."""

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
    """When a Playwright upgrade moves the spots, this fails here instead of navigations silently losing the
    compiled-code reuse."""
    script = (
        "const { rewrite } = require(process.argv[1]);"
        "const source = require('node:fs').readFileSync(process.argv[2], 'utf8');"
        "const result = rewrite(source);"
        "console.log(JSON.stringify({ applied: result.applied, reason: result.reason,"
        " seqInSource: result.source.includes('frameSeq: this.frame.seq,'),"
        " setAfter: result.source.includes('injected._frameSeq = seq'),"
        " moduleKept: result.source.includes('source: browserdModuleScript(),'),"
        " builtFromKept: result.source.includes('this.rawEvaluateHandle(browserdFromKeptModule(') }));"
    )
    done = _node(script, str(PRELOAD), str(BUNDLE))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "applied": True,
        "reason": "",
        "seqInSource": False,
        "setAfter": True,
        "moduleKept": True,
        "builtFromKept": True,
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
    assert "left as it is (found the frame number 0" in done.stderr, done.stderr
    assert str(bundle) in done.stderr


def test_a_bundle_missing_one_spot_is_left_whole_and_the_spot_named() -> None:
    """Half a rewrite could build a document's script from a module nobody sent: all spots or none."""
    script = (
        "const { rewrite } = require(process.argv[1]);"
        "const source = require('node:fs').readFileSync(process.argv[2], 'utf8')"
        ".replace('source: \"\",', 'source: \"\" ,');"
        "const result = rewrite(source);"
        "console.log(JSON.stringify({ applied: result.applied, reason: result.reason,"
        " same: result.source === source }));"
    )
    done = _node(script, str(PRELOAD), str(BUNDLE))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["applied"] is False and result["same"] is True
    assert "the utility world 0" in result["reason"] and "the frame number 1" in result["reason"], result


def test_node_options_keep_the_users_and_carry_the_preload_once() -> None:
    once = node_options_with_preload("--max-old-space-size=4096")
    assert once.startswith("--max-old-space-size=4096 --require ")
    assert json.dumps(str(PRELOAD)) in once
    assert node_options_with_preload(once) == once
    assert node_options_with_preload("") == f"--require {json.dumps(str(PRELOAD))}"
