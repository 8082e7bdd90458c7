// Sessions: every client (name, trust level, transport), its windows and tabs with a live thumbnail, its
// last calls (never a value), and stop.
import { api, fill, h, showError, table, throttle, toast, when } from '../dom.js';

// A tab's thumbnail is taken again at most this often, however busy its session is.
const THUMBNAIL_EVERY_MS = 1500;

export async function mount(view, [focus]) {
  const shots = new Map(); // tabId -> when its thumbnail was last asked for
  let scrolled = false;

  // The same <img> while its tab was not asked for a new shot: a re-render of the list takes no screenshot.
  const images = new Map(); // tabId -> the img element showing its last shot
  function thumbnail(session, tab) {
    const src = `api/sessions/${session.sessionId}/tabs/${tab.tabId}/thumbnail?at=${shots.get(tab.tabId) || 0}`;
    const kept = images.get(tab.tabId);
    if (kept && kept.getAttribute('src') === src) { kept.alt = tab.title || tab.url; return kept; }
    const img = h('img', { class: 'thumb', alt: tab.title || tab.url, loading: 'lazy', width: 320, height: 200, src });
    images.set(tab.tabId, img);
    return img;
  }

  function card(session, consoleId) {
    const stop = h('button', { class: 'danger', onclick: async () => {
      if (!confirm(`Stop ${session.client} (${session.sessionId})? Its runs are canceled and its windows closed.`)) return;
      try { await api(`sessions/${session.sessionId}/stop`, {}); toast(`Stopped ${session.sessionId}`); load(); }
      catch (error) { showError(error); }
    } }, 'Stop');
    const life = [session.connected ? 'connected' : 'not connected',
      session.activeRuns ? `${session.activeRuns} run(s)` : '', session.kept ? 'kept' : ''].filter(Boolean).join(', ');
    const tabs = session.tabs.map((tab) => h('figure', { class: `tab${tab.active ? ' active' : ''}` },
      thumbnail(session, tab),
      h('figcaption', {}, h('b', {}, tab.title || '(untitled)'), h('br'), h('small', {}, tab.url),
        h('br'), h('small', { class: 'muted' }, `${tab.tabId} · ${tab.windowId} · ${tab.backend}`))));
    const calls = session.calls.slice(0, 10).map((call) => h('tr', {},
      h('td', {}, when(call.at)), h('td', {}, call.tool), h('td', {}, call.target || ''),
      h('td', { class: call.outcome === 'ok' ? 'ok' : 'bad' }, call.outcome), h('td', { class: 'num' }, `${call.ms} ms`)));
    return h('section', { class: 'card session', dataset: { sessionId: session.sessionId } },
      h('div', { class: 'row' },
        h('h2', {}, session.client, session.sessionId === consoleId ? ' (this console)' : ''),
        h('span', { class: 'tag' }, session.trustLevel), h('span', { class: 'tag' }, session.transport),
        h('span', { class: 'muted' }, `${session.sessionId} · ${life}`), h('span', { class: 'grow' }), stop),
      tabs.length ? h('div', { class: 'tabs' }, tabs) : h('p', { class: 'muted' }, 'No open tabs.'),
      calls.length ? h('details', { open: true }, h('summary', {}, `Last calls (${session.calls.length})`),
        table(['When', 'Tool', 'Target', 'Outcome', 'Took'], calls)) : null);
  }

  async function load() {
    try {
      const data = await api('sessions');
      const cards = data.sessions.map((session) => card(session, data.consoleSessionId));
      fill(view, h('h1', {}, 'Sessions'),
        cards.length ? cards : h('p', { class: 'muted' }, 'No sessions: no client is connected.'));
      // #/sessions/<id> (the extension's side panel links so): that session's card, in view.
      const chosen = focus && view.querySelector(`[data-session-id="${CSS.escape(focus)}"]`);
      chosen?.classList.add('focus');
      if (chosen && !scrolled) { chosen.scrollIntoView(); scrolled = true; }
    } catch (error) { showError(error); }
  }

  const reload = throttle(load, 700);
  await load();
  return {
    refresh: load,
    onEvent(event) {
      // A run's step may change its session's page without a tool call: its thumbnail is taken again too.
      if (event.kind !== 'session' && !(event.kind === 'run' && event.step)) return;
      const now = Date.now();
      for (const img of view.querySelectorAll(`[data-session-id="${event.sessionId}"] img.thumb`)) {
        const tabId = img.getAttribute('src').split('/tabs/')[1]?.split('/')[0];
        if (now - (shots.get(tabId) || 0) >= THUMBNAIL_EVERY_MS) shots.set(tabId, now);
      }
      reload();
    },
  };
}
