"""What a snapshot shows of a link's URL: what tells a reader where it goes, without what only tracks.

A link's /url line is often the longest of its lines, and on real pages much of it is tracking: campaign
parameters (utm_*) and ad click ids, which by their definition never change what the page shows. Those
are left out, so is the page's own origin, and a URL still longer than `MAX_URL_CHARS` is cut (the link's
ref clicks it; `browser_get` reads its whole href).
"""

from __future__ import annotations

# Long enough for a path and its readable parameters; what is longer is mostly opaque tokens.
MAX_URL_CHARS = 100
CUT = "…"
# Ad platforms' click ids and mailing tools' ids (the query parameters browsers' own tracking protection
# strips), besides every utm_* campaign parameter.
_TRACKING = frozenset({
    "gclid", "gclsrc", "gbraid", "wbraid", "dclid", "fbclid", "msclkid", "yclid", "twclid", "ttclid", "igshid",
    "mc_cid", "mc_eid", "_hsenc", "_hsmi", "mkt_tok", "oly_anon_id", "oly_enc_id", "vero_id", "_openstat",
    "rb_clickid", "s_cid", "srsltid",
})  # fmt: skip


def shown_url(url: str, origin: str = "") -> str:
    """`url` as a snapshot line shows it: no tracking parameters, no leading `origin` (scheme://host[:port]
    of the page), at most MAX_URL_CHARS."""
    if origin and url.startswith(origin + "/"):
        url = url[len(origin) :]
    head, mark, rest = url.partition("?")
    if mark:
        query, hash_mark, fragment = rest.partition("#")
        kept = [part for part in query.split("&") if part and not _tracking(part.split("=", 1)[0])]
        url = head + ("?" + "&".join(kept) if kept else "") + hash_mark + fragment
    return url if len(url) <= MAX_URL_CHARS else url[: MAX_URL_CHARS - len(CUT)] + CUT


def _tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith("utm_") or lowered in _TRACKING
