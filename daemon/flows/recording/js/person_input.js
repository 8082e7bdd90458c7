// The script that listens to a person's input in a recorded tab: recording/person_input_js.py says what it
// reports. Called once per document with the recording's options and the two functions that describe a target
// (capture.js, frame_css.js of daemon/flows/js), so a person's target is described as a tool's is.
(OPTIONS, capture, frameCss) => {
const running = globalThis.__browserdPersonRecorder;
if (running) { running.resume(OPTIONS); return; }
const framePath = () => {
  const path = [];
  try {
    for (let w = window; w !== w.top; w = w.parent) {
      if (!w.frameElement) return null;
      path.unshift(frameCss(w.frameElement));
    }
  } catch (e) { return null; }
  return path;
};
const frame = framePath();
if (frame === null) return;  // a cross-origin frame: not recorded (D-47)
let options = OPTIONS, on = true, seq = 0, burst = null, filled = null, down = null;
let scroll = null, scrollTimer = 0, intent = -1e9;
let press = null, drag = null, dragged = false;
const send = (msg) => {
  const binding = globalThis[options.binding];
  if (on && typeof binding === 'function') binding(JSON.stringify({ ...msg, f: frame }));
};
const describe = (el) => { try { return capture(el); } catch (e) { return null; } };
const origin = (e) => {
  const n = e.composedPath()[0] || e.target;
  return n && n.nodeType === 1 ? n : n && n.parentElement;
};
const typeOf = (el) => (el.getAttribute('type') || '').toLowerCase();
const TEXTLIKE = new Set(['', 'text', 'email', 'password', 'search', 'tel', 'url', 'number', 'date', 'datetime-local',
  'month', 'week', 'time', 'color', 'range']);
const fillable = (el) => !!el && ((el.localName === 'input' && TEXTLIKE.has(typeOf(el))) || el.localName === 'textarea'
  || el.isContentEditable);
const checkable = (el) => !!el && el.localName === 'input' && ['checkbox', 'radio'].includes(typeOf(el));
const formField = (el) => !!el && (fillable(el) || checkable(el) || el.localName === 'select');
// What a click acts on: the element itself unless it sits inside one of these (a button's icon, a link's text);
// landmarks and other containers with a role or a tabindex of -1 are not it.
const WIDGET_ROLES = ['button', 'link', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'option', 'checkbox',
  'radio', 'switch', 'treeitem', 'gridcell', 'combobox', 'textbox', 'slider', 'spinbutton'];
const ACTS = ['button', 'a[href]', 'input', 'select', 'textarea', 'label', 'summary', '[onclick]', '[contenteditable]',
  '[tabindex]:not([tabindex="-1"])', ...WIDGET_ROLES.map((r) => `[role="${r}"]`)].join(', ');
const actionable = (el) => (el && el.closest(ACTS)) || el;
// Their change says what happened; a click step as well would toggle or open them twice on replay.
const changeOnly = (el) => checkable(el) || ['select', 'option'].includes(el.localName)
  || (el.localName === 'label' && !!el.control && (checkable(el.control) || el.control.localName === 'select'));
const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();

const flushFill = () => {
  if (!burst) return;
  const b = burst; burst = null; filled = b.el;
  if (!b.t) return;
  const msg = { k: 'fill', b: b.id, t: b.t };
  if (options.keepValues && !b.t.sensitive) msg.v = b.el.isContentEditable ? b.el.innerText : b.el.value;
  send(msg);
};
const flushScroll = (ended = true) => {
  if (!scroll) return;
  const [dx, dy] = [scroll.at[0] - scroll.from[0], scroll.at[1] - scroll.from[1]];
  if (dx || dy) send({ k: 'scroll', b: scroll.id, t: scroll.t, d: [Math.round(dx), Math.round(dy)] });
  scroll.from = scroll.at; scroll.sent = performance.now();
  if (ended) { clearTimeout(scrollTimer); scroll = null; }
};
const startBurst = (el) => { burst = { el, id: ++seq }; send({ k: 'began', b: burst.id }); burst.t = describe(el); };
const flush = () => { flushScroll(); flushFill(); };
const listen = (type, handler, passive = false) => window.addEventListener(type, (e) => {
  if (on && e.isTrusted) handler(e);
}, { capture: true, passive });

listen('input', (e) => {
  const el = origin(e);
  if (!fillable(el)) return;
  if (burst && burst.el !== el) flushFill();
  if (!burst) startBurst(el);
});
listen('change', (e) => {
  const el = origin(e);
  if (fillable(el)) {
    // A field's change ends the burst its typing began (which may have been reported already); a change
    // with no typing before it (a picker, autofill) is a fill of its own.
    if (el === filled && (!burst || burst.el !== el)) return;
    if (!burst || burst.el !== el) { flushFill(); startBurst(el); }
    flushFill();
  } else if (checkable(el)) {
    flush();
    send({ k: el.checked || typeOf(el) === 'radio' ? 'check' : 'uncheck', t: describe(el) });
  } else if (el && el.localName === 'select') {
    flush();
    send({ k: 'select', t: describe(el), labels: [...el.selectedOptions].map((o) => norm(o.label || o.textContent)) });
  }
});
listen('focusout', (e) => { if (burst && burst.el === origin(e)) flushFill(); });
listen('pointerdown', (e) => {
  flushScroll();
  const el = actionable(origin(e));
  if (burst && burst.el !== el) flushFill();
  down = el && !changeOnly(el) ? { el, t: describe(el) } : null;
  drag = null; dragged = false;
  press = el && e.isPrimary && e.button === 0
    ? { el, t: down && down.t, x: e.clientX, y: e.clientY, at: performance.now() } : null;
});

// -- drags -------------------------------------------------------------------------------------------
const DRAG_PX = 5, SAMPLE_MS = 50, MAX_POINTS = 600;
// Where a drag at (x, y) would land: the topmost element that is neither the source (nor inside it) nor
// one of the source's own containers (a list the source sits in is not somewhere else).
const landing = (x, y, source) => {
  for (const el of document.elementsFromPoint(x, y)) {
    if (source.contains(el)) continue;
    if (el.contains(source)) return null;
    const act = actionable(el);
    return act.contains(source) ? el : act;
  }
  return null;
};
const sample = (x, y, last) => {
  const now = performance.now();
  if (!last && (now - drag.sampled < SAMPLE_MS || drag.points.length >= MAX_POINTS)) return;
  drag.sampled = now;
  drag.points.push([x, y, Math.round(now - drag.at)]);
};
const dragTo = (x, y, last = false) => {
  const el = landing(x, y, drag.el);
  if (el && el !== drag.over) {
    // Described now, before the page reacts to the pointer coming over it.
    const box = el.getBoundingClientRect();
    drag.over = { el, t: describe(el), centre: [box.left + box.width / 2, box.top + box.height / 2] };
  }
  sample(x, y, last);
};
const startDrag = (el, html5) => {
  flush();
  const t = press && press.el === el && press.t ? press.t : describe(el);
  const from = press || { x: 0, y: 0, at: performance.now() };
  drag = { el, t, html5, at: from.at, sampled: -1e9, points: [], over: null };
  if (press) sample(press.x, press.y, true);
};
const endDrag = (x, y) => {
  if (x !== undefined) dragTo(x, y, true);
  const d = drag; drag = null; press = null; down = null;
  if (!d.over || !d.t || !d.over.t) return;
  dragged = true;
  const [cx, cy] = d.over.centre;
  const p = d.points.map(([px, py, ms]) => [Math.round(px - cx), Math.round(py - cy), ms]);
  send({ k: 'drag', t: d.t, e: d.over.t, p });
};
listen('pointermove', (e) => {
  if (!press || (drag && drag.html5) || !e.isPrimary) return;
  if (!(e.buttons & 1)) { press = null; drag = null; return; }
  if (!drag) {
    if (Math.hypot(e.clientX - press.x, e.clientY - press.y) < DRAG_PX) return;
    startDrag(press.el, false);
  }
  dragTo(e.clientX, e.clientY);
}, true);
listen('pointerup', (e) => {
  if (drag && !drag.html5 && e.isPrimary) endDrag(e.clientX, e.clientY);
  press = null;
});
listen('pointercancel', () => { if (drag && !drag.html5) drag = null; press = null; });
listen('dragstart', (e) => {
  const el = origin(e);
  if (el) startDrag(el, true);
});
listen('dragover', (e) => { if (drag && drag.html5) dragTo(e.clientX, e.clientY); });
listen('drop', (e) => { if (drag && drag.html5) endDrag(e.clientX, e.clientY); });
// A drop the page did not accept still ends the drag where the pointer last was (a sortable that moved
// the source on dragover has already done its work).
listen('dragend', () => { if (drag && drag.html5) endDrag(); });

const clicked = (kind) => (e) => {
  if (e.detail === 0) return;  // a keyboard's or script's activation: the key is the step
  if (dragged) return;  // the click that ends a pointer drag: the drag is the step
  const el = actionable(origin(e));
  if (!el || changeOnly(el)) return;
  if (burst && burst.el !== el) flushFill();
  const t = down && down.el === el ? down.t : describe(el);
  if (kind === 'click') down = null;
  if (t) send({ k: kind, t });
};
listen('click', clicked('click'));
listen('dblclick', clicked('dblclick'));
const MODIFIERS = new Set(['Control', 'Shift', 'Alt', 'Meta', 'CapsLock', 'NumLock', 'Dead', 'Unidentified', 'Process',
  'AltGraph', 'Fn']);
listen('keydown', (e) => {
  if (e.isComposing || e.keyCode === 229 || e.repeat || MODIFIERS.has(e.key)) return;
  const el = origin(e);
  const mods = e.ctrlKey || e.metaKey || e.altKey;
  // In a field, typing is the fill: only keys that leave or submit it are steps (Enter in a text area types).
  const submits = e.key === 'Enter' && (mods || (el.localName !== 'textarea' && !el.isContentEditable));
  if (formField(el) && !(e.key === 'Escape' || e.key === 'Tab' || submits)) return;
  const name = e.key === ' ' ? 'Space' : e.key;
  const keys = (e.ctrlKey ? 'Control+' : '') + (e.altKey ? 'Alt+' : '') + (e.metaKey ? 'Meta+' : '')
    + (e.shiftKey && (name.length > 1 || mods) ? 'Shift+' : '') + name;
  flush();
  const target = el && el !== document.body && el !== document.documentElement ? describe(el) : null;
  send(target ? { k: 'key', keys, t: target } : { k: 'key', keys });
});
for (const type of ['wheel', 'touchmove']) listen(type, () => { intent = performance.now(); }, true);
// Where each scroller was last seen, so a run of scrolling counts from where it started.
const positions = new WeakMap([[document, [window.scrollX, window.scrollY]]]);
listen('scroll', (e) => {
  const now = performance.now();
  const page = e.target === document || e.target === document.documentElement || e.target === document.scrollingElement;
  const el = page ? null : e.target;
  const at = el ? [el.scrollLeft, el.scrollTop] : [window.scrollX, window.scrollY];
  const before = positions.get(el || document) || [0, 0];
  positions.set(el || document, at);
  if (now - intent > 500) return;  // the page scrolled itself (an anchor, a script), not the person
  if (!scroll || scroll.el !== el) {
    flushScroll();
    scroll = { el, id: ++seq, from: before, at, sent: now };
    send({ k: 'began', b: scroll.id });
    scroll.t = el ? describe(el) : null;
  }
  scroll.at = at;
  const moved = Math.abs(at[0] - scroll.from[0]) + Math.abs(at[1] - scroll.from[1]);
  if (now - scroll.sent >= 200 && moved >= 120) flushScroll(false);
  clearTimeout(scrollTimer);
  scrollTimer = setTimeout(() => flushScroll(), 200);
}, true);
window.addEventListener('pagehide', () => flush(), true);
globalThis.__browserdPersonRecorder = {
  // Recording stops: what is still pending is reported, then nothing more.
  stop: () => { flush(); on = false; },
  resume: (next) => { options = next; burst = null; down = null; scroll = null; press = null; drag = null; on = true; },
};
}
