// Answers once what the last action started has finished and the DOM has been quiet for `quietMs`, at most
// `maxMs`: [texts of elements that change on their own, whether a tab opened, whether a download began,
// whether the page stayed as it was at the last answer: no DOM change, no frame asked for, no animation begun
// or ended].
([graceMs, quietMs, maxMs, textChars]) => new Promise((resolve) => {
  const s = window.__browserdSettle;
  const start = performance.now();
  let graceOver = false, answered = false;
  const over = () => { graceOver = true; };
  const frameGrace = () => {
    (s ? s.ownFrame : requestAnimationFrame)(() => setTimeout(over, 0));
    setTimeout(over, graceMs);
  };
  // Nothing changed, started work or asked for a frame since the last answer.
  const still = () => s.lastActivity <= s.settledAt && s.lastFrameRequest <= s.settledAt;
  const done = () => {
    if (answered) return;
    answered = true;
    if (!s) return resolve([[], false, false, false]);
    const ticking = [...s.ticking].filter((e) => e.isConnected)
      .map((e) => (e.textContent || '').trim().slice(0, textChars));
    resolve([ticking, s.opening, s.downloading, still() && s.lastRestyle <= s.settledAt]);
    s.opening = s.downloading = false;
    s.messagesUntil = 0;
    s.settledAt = performance.now();
  };
  // Since the last answer the page took input, or (a document never answered yet) it has loaded, and it
  // has done nothing so far: changed nothing since its parse ended and asked for no frame.
  const fresh = s && (s.settledAt > 0 ? s.lastInput > s.settledAt : document.readyState === 'complete');
  if (fresh && still()) {
    // After the messages the input or the load posted (a message of our own comes after them) and a task
    // turn (after the timers it set at once), nothing has changed still, so there is no render to wait a
    // frame for. Anything else waits for the next frame.
    const channel = new MessageChannel();
    channel.port1.onmessage = () => setTimeout(() => {
      if (!still() || s.timers.size || s.pending || s.navigating) return frameGrace();
      over();
      check();
    }, 0);
    channel.port2.postMessage(0);
  } else {
    frameGrace();
  }
  const check = () => {
    const now = performance.now();
    if (now - start >= maxMs) return done();
    if (s) {
      const busy = s.timers.size || s.pending || s.navigating || document.readyState === 'loading';
      // No change since the parse ended (lastActivity 0) holds no quiet window: the page's clock starts at
      // its navigation, so reading 0 as a change then would keep every fresh load waiting until quietMs.
      const quiet = s.lastActivity === 0 || now - s.lastActivity >= quietMs;
      if (!busy && graceOver && quiet) return done();
    } else if (now - start >= quietMs) {
      return done();  // a document without the tracker (opened before browserd attached): a fixed wait
    }
    setTimeout(check, 5);
  };
  check();
})
