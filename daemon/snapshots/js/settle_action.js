// Answers once what the last action started has finished and the DOM has been quiet for `quietMs`, at most
// `maxMs`: [texts of elements that change on their own, whether a tab opened, whether a download began].
([graceMs, quietMs, maxMs, textChars]) => new Promise((resolve) => {
  const s = window.__browserdSettle;
  const start = performance.now();
  let graceOver = false, answered = false;
  const over = () => { graceOver = true; };
  const frameGrace = () => {
    requestAnimationFrame(() => setTimeout(over, 0));
    setTimeout(over, graceMs);
  };
  // Nothing changed, started work or asked for a frame since the last answer.
  const still = () => s.lastActivity <= s.settledAt && s.lastFrameRequest <= s.settledAt;
  const done = () => {
    if (answered) return;
    answered = true;
    if (!s) return resolve([[], false, false]);
    const ticking = [...s.ticking].filter((e) => e.isConnected)
      .map((e) => (e.textContent || '').trim().slice(0, textChars));
    resolve([ticking, s.opening, s.downloading]);
    s.opening = s.downloading = false;
    s.messagesUntil = 0;
    s.settledAt = performance.now();
  };
  if (s && s.settledAt > 0 && s.lastInput > s.settledAt && still()) {
    // The page took input since the last answer and did nothing with it so far: after the messages the
    // input posted (a message of our own comes after them) and a task turn, nothing has changed still,
    // so there is no render to wait a frame for. Anything else waits for the next frame.
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
      if (!busy && graceOver && now - s.lastActivity >= quietMs) return done();
    } else if (now - start >= quietMs) {
      return done();  // a document without the tracker (opened before browserd attached): a fixed wait
    }
    setTimeout(check, 5);
  };
  check();
})
