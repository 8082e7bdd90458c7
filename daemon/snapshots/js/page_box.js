// The viewport's scroll offset and size, and the document's size: [scrollX, scrollY, viewW, viewH, pageW, pageH].
() => [window.scrollX, window.scrollY, window.innerWidth, window.innerHeight,
  document.documentElement.scrollWidth, document.documentElement.scrollHeight]
