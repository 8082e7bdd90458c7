"""The JavaScript that runs in the page: describe an element when it is recorded, find it again on replay.

Both share one prelude (js/fingerprint.prelude.js: `describe`), so the fingerprint a replay compares is
computed exactly as the recorded one was. Each is one `evaluate`: one page round trip per recorded target
and per replayed step.
"""

from __future__ import annotations

from browserd.daemon.elements.fields import FIELD_PRELUDE
from browserd.daemon.flows.match_js import MATCH_JS
from browserd.daemon.runtime.page_js import load_js, with_prelude

_PRELUDE = load_js("browserd.daemon.flows", "fingerprint.prelude.js")

CAPTURE_JS = with_prelude(load_js("browserd.daemon.flows", "capture.js"), _PRELUDE)

# The CSS of an iframe element inside its own document, for a recorded target's frame path.
FRAME_CSS_JS = load_js("browserd.daemon.flows", "frame_css.js")

# Resolves a target (args: [candidates, fingerprint, shadow path, threshold, margin, options]) and answers the
# report of how, marking the element it found (flows/replay/resolution.py); the options are in resolve.js. It
# reads a field the way a fill does (elements/fields.FIELD_PRELUDE), so a replayed fill pays no read of its own.
RESOLVE_ELEMENT_JS = with_prelude(load_js("browserd.daemon.flows", "resolve.js"), _PRELUDE, MATCH_JS, FIELD_PRELUDE)

# Inputs whose values a failure screenshot must never show, and that a model's choice never is.
SENSITIVE_CSS = (
    "input[type=password], [autocomplete=one-time-code], [autocomplete^=cc-], "
    "[autocomplete=current-password], [autocomplete=new-password]"
)
