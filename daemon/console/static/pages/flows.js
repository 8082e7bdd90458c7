// Flows: the stored flows (newest first), and importing one (a browserd export or a Chrome Recorder file).
import { api, fill, h, showError, table, toast } from '../dom.js';

export async function mount(view) {
  const file = h('input', { type: 'file', accept: '.json,application/json', 'aria-label': 'Flow file' });
  const format = h('select', { 'aria-label': 'Format' },
    h('option', { value: 'browserd' }, 'browserd JSON'), h('option', { value: 'chrome_recorder' }, 'Chrome Recorder'));
  const importer = h('form', { class: 'row', onsubmit: async (event) => {
    event.preventDefault();
    try {
      const flow = JSON.parse(await file.files[0].text());
      const saved = await api('flows/import', { flow, format: format.value });
      toast(`Imported ${saved.flowId}`);
      location.hash = `#/flows/${saved.flowId}`;
    } catch (error) { showError(error); }
  } }, file, format, h('button', {}, 'Import'));

  async function load() {
    try {
      const { flows } = await api('flows');
      const rows = flows.map((flow) => h('tr', {},
        h('td', {}, h('a', { href: `#/flows/${flow.flowId}` }, flow.name)), h('td', {}, h('code', {}, flow.flowId)),
        h('td', { class: 'num' }, `v${flow.version}`), h('td', {}, flow.published ? `flow_${flow.slug}` : '')));
      fill(view, h('h1', {}, 'Flows'),
        rows.length ? table(['Name', 'Id', 'Version', 'Tool'], rows) : h('p', { class: 'muted' }, 'No flows yet: record one with flow_record_start.'),
        h('h2', {}, 'Import'), importer);
    } catch (error) { showError(error); }
  }

  await load();
  return { refresh: load };
}
