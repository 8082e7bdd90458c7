"""How replay grades a name that changed: the page functions of js/match.prelude.js (read its header).

`nameTier(recorded, now)` grades a name same, normalized, count, contains, number, synonym, differs or empty;
`near` compares where an element is. Both are declarations in scope of resolve.js (fingerprint_js).
"""

from __future__ import annotations

from browserd.daemon.runtime.page_js import load_js

MATCH_JS = load_js("browserd.daemon.flows", "match.prelude.js")
