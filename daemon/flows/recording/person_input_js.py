"""The script that listens to a person's input in a recorded tab (S4-34..S4-39, D-47).

It runs in an isolated world of its own in every frame of the tab (the page's scripts cannot see it,
stop its capture-phase listeners, or call its binding), describes each target with the same
CAPTURE_JS as the session's own recorded actions, and reports through one binding, as JSON:

- `click`, `dblclick` {t}: pointer clicks; the target is described at pointerdown, before the page
  reacts to it. Clicks with `detail` 0 (keyboard activation) are left to the key that caused them;
  clicks on checkboxes, radios, selects and their labels are left to the change they cause.
- `fill` {b, t, v?}: one per edit burst of a field (typing, pasting, IME composition), sent when the
  person leaves the field, presses a recorded key, or acts elsewhere. `v` only for a non-sensitive
  field when the daemon keeps such values (D-48); a sensitive field's value never leaves the page.
- `select` {t, labels}, `check` / `uncheck` {t}.
- `drag` {t, e, p}: a drag and drop, HTML5 (dragstart .. drop) or with pointer events (pressed, moved past
  5 px, released over another element, as sortables built on pointer events see it). `t` is the source as
  pressed, `e` the element the pointer last came over other than the source and its own containers
  (described then, before the page reacted to it, so a sortable that moves the source under the pointer
  does not hide it), `p` the pointer's way sampled at most every 50 ms: [x, y, ms] from `e`'s centre. The
  click a pointer drag ends with is not reported.
- `key` {keys, t?}: Enter, Escape and Tab in fields; any key or combination elsewhere.
- `scroll` {b, t?, d}: a person's wheel or touch scrolling of the page (no t) or of an element,
  sampled at most every 200 ms and 120 px, plus the rest when the scrolling stops.
- `began` {b}: the start of a burst or scroll that is reported later, so the daemon can tell whether
  it began while a tool call of its own was acting on the tab.
Every message carries `f`, the frame path from the top document (CSS of each iframe element).
"""

from __future__ import annotations

import json

from browserd.daemon.flows.fingerprint_js import CAPTURE_JS, FRAME_CSS_JS
from browserd.daemon.runtime.page_js import called, load_js

BINDING = "__browserdPerson"
WORLD = "browserd-recorder"

_SCRIPT = load_js("browserd.daemon.flows.recording", "person_input.js")


def person_script(keep_values: bool) -> str:
    """The recorder script for one recording: CAPTURE_JS is the one description of a target (fingerprint_js).

    An init script takes no argument, so the options go in as a JSON literal of the call.
    """
    options = json.dumps({"binding": BINDING, "keepValues": keep_values})
    return called(_SCRIPT, options, CAPTURE_JS, FRAME_CSS_JS)


STOP_JS = load_js("browserd.daemon.flows.recording", "person_stop.js")
