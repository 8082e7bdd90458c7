// Small helpers every page uses: building elements (text only: a value from the daemon is never parsed as
// HTML), calling the console's API, and formatting.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key in el && typeof value !== 'string') el[key] = value;
    else el.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

// replaceChildren for what h() takes too: nested arrays, and null/false for "nothing here".
export function fill(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((c) => c !== undefined && c !== null && c !== false));
  return el;
}

export class ApiError extends Error {
  constructor(info, status) {
    super(info.error || `HTTP ${status}`);
    this.code = info.errorCode;
    this.hint = info.recoverHint;
    this.status = status;
  }
}

// Paths are relative to the console's own address, so the page works wherever the daemon mounts it.
export async function api(path, body) {
  const init = body === undefined ? {} : {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  };
  const answer = await fetch(`api/${path}`, init);
  const text = await answer.text();
  const data = text ? JSON.parse(text) : null;
  if (!answer.ok) throw new ApiError(data || {}, answer.status);
  return data;
}

export function toast(message, kind = 'info') {
  const box = document.getElementById('toast');
  box.textContent = message;
  box.className = `show ${kind}`;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { box.className = ''; }, kind === 'error' ? 8000 : 3000);
}

export function showError(error) {
  toast(error.hint ? `${error.message} — ${error.hint}` : error.message, 'error');
}

export function when(ms) {
  return ms ? new Date(ms).toLocaleString() : '—';
}

export function badge(status) {
  return h('span', { class: `badge ${status}` }, status);
}

export function progress(done, total) {
  return h('progress', { max: Math.max(total, 1), value: Math.min(done, Math.max(total, 1)),
    title: `${done} / ${total}` });
}

// Calls `work` at most once per `ms`, and once more after the last request, so a burst of events is one reload.
export function throttle(work, ms) {
  let timer = null, again = false;
  return (...args) => {
    if (timer) { again = true; return; }
    work(...args);
    timer = setTimeout(() => { timer = null; if (again) { again = false; work(...args); } }, ms);
  };
}

export function table(headers, rows) {
  return h('table', {}, h('thead', {}, h('tr', {}, headers.map((title) => h('th', {}, title)))),
    h('tbody', {}, rows));
}
