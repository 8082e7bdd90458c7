// A worker that fetches an image and reports to an EasyList-listed beacon; `?shared` when a shared worker.
fetch("/network-dot.svg?worker" + location.search.replace("?", "&"));
fetch("/ads/beacon.js?worker" + location.search.replace("?", "&"));
