// A service worker that precaches an image at install, as offline-ready sites do.
self.addEventListener("install", function (event) {
  event.waitUntil(fetch("/network-pixel.png?precache"));
});
