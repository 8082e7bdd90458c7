// Runs in every document before its scripts (snapshots/settle.py): marks the work a user input starts (timers
// set by an input event's handlers, the fetches and XHRs they start, their DOM changes), so that the settle
// after an action waits for that work and no other. It also keeps when the page last changed at all, and what
// it has in flight, due or open, which tell a flow's replay when a page is still (flows/js/resolve.js).
(() => {
  if (window.__browserdSettle) return;
  // Timers longer than this are no reaction to the input an agent waits for (a 30 s session timeout...).
  const TRACKED_DELAY_MS = 1000;
  // A timer chain deeper than this is a loop the input started, not one reaction to it.
  const MAX_GENERATION = 4;
  // A timer due within this long may still change the page: until it has run, the page is not still (a flow's
  // replay waits for a page that is, daemon/flows/replay/step_runner.py).
  const DUE_DELAY_MS = 5000;
  // Style properties that never change what a snapshot shows: colours, borders, outlines, shadows, fades.
  const cosmetic = /^(outline-|border(-(top|right|bottom|left|block|inline)(-(start|end))?)?-(color|style|width)$|border-.*radius$|box-shadow$|background|color$|caret-color$|accent-color$|text-decoration|text-shadow$|opacity$|transition|filter$|-webkit-tap-highlight-color$)/;
  const s = { timers: new Set(), pending: 0, lastActivity: 0, navigating: false, opening: false,
    downloading: false, ticking: new Set(), messagesUntil: 0, lastInput: 0, lastFrameRequest: 0, settledAt: 0,
    lastRestyle: 0, cosmetic, lastChange: 0, inflight: 0, due: new Set(), streams: new Set() };
  Object.defineProperty(window, '__browserdSettle', { value: s });
  const INPUT = new Set(['click', 'dblclick', 'auxclick', 'contextmenu', 'mousedown', 'mouseup', 'mousemove',
    'mouseover', 'mouseenter', 'mouseout', 'mouseleave', 'pointerdown', 'pointerup', 'pointermove', 'pointerover',
    'pointerenter', 'keydown', 'keyup', 'keypress', 'beforeinput', 'input', 'change', 'submit', 'focus', 'blur',
    'focusin', 'focusout', 'wheel', 'scroll', 'drop', 'dragstart', 'dragend', 'paste']);
  // When the page last saw an input, for the settle's quick answer (settle_action.js).
  const inputSeen = () => { s.lastInput = performance.now(); };
  for (const type of INPUT) window.addEventListener(type, inputSeen, { capture: true, passive: true });
  // An animation or a transition that starts or ends, and a popover shown or hidden (showPopover() sets no
  // attribute; beforetoggle comes at once, toggle a task later), change what the page shows with no DOM change: a fill answered from the last snapshot
  // (snapshots/field_edit.py) needs none since then. A colour fade is no such change; a loop's next round
  // shows what the last one did.
  const restyled = (e) => {
    if (!(e.propertyName && cosmetic.test(e.propertyName))) s.lastRestyle = performance.now();
  };
  for (const type of ['animationstart', 'animationend', 'animationcancel', 'transitionrun', 'transitionend',
    'transitioncancel', 'beforetoggle', 'toggle']) {
    window.addEventListener(type, restyled, { capture: true, passive: true });
  }
  let generation = 0;  // of the tracked callback running now; 0 outside one
  // A message from another window (a frame the action worked in) while an action there is settled is
  // that action's continuation in this document: what its handlers start is waited for too.
  const relayed = (e) => e.type === 'message' && e.source !== window && performance.now() < s.messagesUntil;
  const caused = () => generation || (window.event && (INPUT.has(window.event.type) || relayed(window.event)) ? 1 : 0);
  const counts = new WeakMap();
  const background = (records) => {
    // Counted once per callback: an element that one-shot callback edits twice does not tick.
    const changed = new Set(records.map((r) => r.target.nodeType === 1 ? r.target : r.target.parentElement));
    for (const e of changed) {
      if (!e) continue;
      const n = (counts.get(e) || 0) + 1;
      counts.set(e, n);
      if (n >= 2 && s.ticking.size < 50) s.ticking.add(e);
    }
  };
  // The daemon's own marks on a page (data-browserd-*: the element a replayed step acts on, flows/replay/
  // resolution.py) are no change the page made: setting or taking one away holds no settle.
  const own = (r) => r.type === 'attributes' && r.attributeName.startsWith('data-browserd-');
  const observer = new MutationObserver((records) => {
    if (!records.every(own)) s.lastActivity = s.lastChange = performance.now();
  });
  const observe = () => observer.observe(document, { subtree: true, childList: true, attributes: true,
    characterData: true });
  // The parser's own insertions are the load, which is over when a load is settled: only later changes
  // count, so the observer starts when the parse ends. Watching the parse would cost a record for every
  // node of the page, and every load would wait out a quiet window for its own markup.
  if (document.readyState === 'loading') {
    document.addEventListener('readystatechange', observe, { once: true });
  } else {
    observe();
  }
  // Runs `fn` as part of the action (gen > 0) or of the page's own life, and files its DOM changes so.
  const run = (gen, fn, self, args) => {
    const outer = generation;
    generation = gen;
    try { return fn.apply(self, args); } finally {
      generation = outer;
      const records = observer.takeRecords();
      if (!records.every(own)) s.lastChange = performance.now();
      if (gen) { s.lastActivity = performance.now(); } else if (records.length) { background(records); }
    }
  };
  const wrapTimer = (name, clearName, delayed) => {
    const original = window[name], clear = window[clearName];
    window[name] = function (fn, delay, ...args) {
      if (typeof fn !== 'function') return original.apply(this, arguments);
      if (!delayed) s.lastFrameRequest = performance.now();
      const parent = caused();
      const gen = parent && parent < MAX_GENERATION && (!delayed || (+delay || 0) <= TRACKED_DELAY_MS)
        ? parent + 1 : 0;
      // A frame request's id is of another series than a timer's: the sets hold frames as negative ids.
      let key;
      const callback = function (...given) {
        s.timers.delete(key);
        s.due.delete(key);
        return run(gen, fn, this, delayed ? args : given);
      };
      const id = delayed ? original.call(this, callback, delay) : original.call(this, callback);
      key = delayed ? id : -id;
      if (gen) s.timers.add(key);
      if (delayed && (+delay || 0) <= DUE_DELAY_MS) s.due.add(key);
      return id;
    };
    window[clearName] = function (id) {
      const key = delayed ? id : -id;
      s.timers.delete(key);
      s.due.delete(key);
      return clear.apply(this, arguments);
    };
  };
  wrapTimer('setTimeout', 'clearTimeout', true);
  // The daemon's own scripts wait for frames too (the settle's grace): through this, they leave no mark of a
  // page that animates (lastFrameRequest, which a click at rest reads, elements/js/rest_point.js).
  const frame = window.requestAnimationFrame;
  s.ownFrame = (fn) => frame.call(window, fn);
  wrapTimer('requestAnimationFrame', 'cancelAnimationFrame', false);
  const interval = window.setInterval;
  window.setInterval = function (fn, ...rest) {
    if (typeof fn !== 'function') return interval.apply(this, arguments);
    return interval.call(this, function (...given) { return run(0, fn, this, given); }, ...rest);
  };
  const track = (promise) => {
    s.pending++;
    const done = () => { s.pending--; s.lastActivity = performance.now(); };
    promise.then(done, done);
  };
  // Every request the page's scripts have in flight, whoever started it: a page waiting for one is not still.
  const inflight = (promise) => {
    s.inflight++;
    const done = () => { s.inflight--; };
    promise.then(done, done);
    return promise;
  };
  const fetch = window.fetch;
  if (fetch) window.fetch = function () {
    const answer = inflight(fetch.apply(this, arguments));
    if (caused()) track(answer);
    return answer;
  };
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function () {
    const ended = inflight(new Promise((resolve) => { this.addEventListener('loadend', resolve, { once: true }); }));
    if (caused()) track(ended);
    return send.apply(this, arguments);
  };
  // Every WebSocket and event stream the page has open: the server may yet push what it waits for, at any
  // time, so a page with one open is never still. The classes stay what they were to the page's scripts
  // (instanceof, their constants): only construction is seen.
  const streamed = (name, onClosed) => {
    const Original = window[name];
    if (typeof Original !== 'function') return;
    window[name] = new Proxy(Original, {
      construct(target, args, newTarget) {
        const stream = Reflect.construct(target, args, newTarget);
        s.streams.add(stream);
        onClosed(stream, () => s.streams.delete(stream));
        return stream;
      },
    });
  };
  streamed('WebSocket', (socket, closed) => socket.addEventListener('close', closed));
  streamed('EventSource', (source, closed) => {
    source.addEventListener('error', () => { if (source.readyState === 2) closed(); });  // 2: CLOSED
  });
  if (window.EventSource) {
    const close = window.EventSource.prototype.close;
    window.EventSource.prototype.close = function () {
      s.streams.delete(this);
      return close.apply(this, arguments);
    };
  }
  if (window.navigation) navigation.addEventListener('navigate', (e) => {
    if (e.downloadRequest !== null) s.downloading = true;
    else if (!e.destination.sameDocument) s.navigating = true;
  });
  // A tab the browser opens arrives as its own event, later than the click that opened it.
  const opens = (e) => {
    const link = !e.defaultPrevented && e.target instanceof Element && e.target.closest('a[href]');
    if (link && (link.target === '_blank' || e.ctrlKey || e.metaKey || e.shiftKey || e.button === 1)) {
      s.opening = true;
    }
  };
  window.addEventListener('click', opens);
  window.addEventListener('auxclick', opens);
  const open = window.open;
  window.open = function () {
    const opened = open.apply(this, arguments);
    if (opened) s.opening = true;
    return opened;
  };
})();
