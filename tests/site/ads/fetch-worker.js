// A dedicated worker that fetches an image and reports to an EasyList-listed beacon.
fetch("/network-dot.svg?worker");
fetch("/ads/beacon.js?worker");
