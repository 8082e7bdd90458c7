// Where the scroller comes to rest after a wheel: the page, or the nearest scrollable box around the
// element the wheel turned over (a feed, a virtual list), whose offset is what the answer reports.
(el) => new Promise((resolve) => {
  const scrolls = (node) => node.scrollHeight > node.clientHeight + 1
    && /auto|scroll/.test(getComputedStyle(node).overflowY + getComputedStyle(node).overflowX);
  let box = el;
  while (box && box !== document.body && !scrolls(box)) box = box.parentElement;
  const inner = box && box !== document.body;
  const at = inner ? () => [box.scrollLeft, box.scrollTop] : () => [window.scrollX, window.scrollY];
  // Frames the daemon waits for leave no mark of a page that animates (settle_tracker.js).
  const frame = (window.__browserdSettle || {}).ownFrame || requestAnimationFrame;
  let last = null, still = 0;
  const done = () => resolve(at());
  const cap = setTimeout(done, 1000);
  const tick = () => {
    const now = at().join(',');
    still = now === last ? still + 1 : 0;
    last = now;
    if (still >= 3) { clearTimeout(cap); done(); } else { frame(tick); }
  };
  frame(tick);
})
