// The extension bridge: whether it listens, the paired and connected extensions, and a pairing code.
import { api, fill, h, showError, table } from '../dom.js';

export async function mount(view) {
  const code = h('p');
  async function pair() {
    try {
      const answer = await api('bridge/pair', {});
      fill(code, 'Enter this code in the extension\'s side panel within ', `${answer.expiresInS} s: `,
        h('strong', { class: 'code' }, answer.code));
    } catch (error) { showError(error); }
  }
  async function load() {
    try {
      const bridge = await api('bridge');
      const rows = Object.entries(bridge.paired).map(([id, at]) => h('tr', {}, h('td', {}, h('code', {}, id)),
        h('td', {}, at), h('td', {}, bridge.connected.includes(id) ? 'connected' : 'not connected')));
      fill(view, h('h1', {}, 'Extension bridge'),
        h('p', {}, bridge.listening ? `Listening on ${bridge.address}.` : `Not listening${bridge.failure ? `: ${bridge.failure}` : ' ([bridge] enabled is false)'}.`),
        rows.length ? table(['Extension', 'Paired', 'State'], rows) : h('p', { class: 'muted' }, 'No extension is paired.'),
        h('button', { disabled: !bridge.listening, onclick: pair }, 'New pairing code'), code);
    } catch (error) { showError(error); }
  }
  await load();
  return { refresh: load };
}
