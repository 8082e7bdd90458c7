// The console's shell: a hash router that loads one page module at a time, and the one push channel
// (Server-Sent Events from the daemon) whose events go to the page on screen.
import { fill, h } from './dom.js';

// #/<name> and #/<name>/<id>: the list page, or the page of one item.
const PAGES = {
  sessions: ['./pages/sessions.js'],
  runs: ['./pages/runs.js', './pages/run.js'],
  flows: ['./pages/flows.js', './pages/editor.js'],
  schedules: ['./pages/schedules.js'],
  datasets: ['./pages/datasets.js'],
  profiles: ['./pages/profiles.js'],
  bridge: ['./pages/bridge.js'],
};

let current = null;
let routing = 0;

async function route() {
  const [name, ...rest] = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  if (!PAGES[name]) { location.replace('#/sessions'); return; }
  const ticket = ++routing;
  const [list, item] = PAGES[name];
  const module = await import(rest.length && item ? item : list);
  if (ticket !== routing) return; // the person went elsewhere meanwhile
  current?.stop?.();
  current = null;
  // Each page draws into an element of its own: one still loading when the person moves on draws into a
  // detached element, never over the page that replaced it.
  const view = h('section', {}, h('p', { class: 'muted' }, 'Loading…'));
  fill(document.getElementById('view'), view);
  for (const link of document.querySelectorAll('header nav a')) {
    link.classList.toggle('active', link.getAttribute('href') === `#/${name}`);
  }
  const page = await module.mount(view, rest.map(decodeURIComponent));
  if (ticket === routing) current = page;
  else page?.stop?.();
}

function listen() {
  const live = document.getElementById('live');
  const source = new EventSource('api/events');
  let before = false;
  // After a reconnect the page may have missed events: it reads its state again.
  source.addEventListener('hello', () => {
    live.textContent = 'live';
    live.className = 'live on';
    if (before) current?.refresh?.();
    before = true;
  });
  source.addEventListener('resync', () => current?.refresh?.());
  source.onmessage = (message) => current?.onEvent?.(JSON.parse(message.data));
  source.onerror = () => { live.textContent = 'reconnecting…'; live.className = 'live'; };
}

window.addEventListener('hashchange', route);
route();
listen();
