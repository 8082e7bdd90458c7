// Datasets: the rows a flow's datasetWrite nodes wrote, or a replay over rows' per-row results, as a paged
// table, exported as CSV or JSON by dataset_export itself.
import { api, fill, h, showError, table } from '../dom.js';

const PAGE = 50;

export async function mount(view) {
  let source = null, offset = 0;
  const out = h('div');

  async function show() {
    if (!source) return;
    const query = `${source.kind}=${encodeURIComponent(source.id)}`;
    try {
      const page = await api(`datasets?${query}&offset=${offset}&limit=${PAGE}`);
      const columns = [...new Set(page.rows.flatMap((row) => Object.keys(row)))];
      const cell = (value) => (value !== null && typeof value === 'object' ? JSON.stringify(value) : value ?? '');
      fill(out, 
        h('div', { class: 'row' }, h('span', {}, `${page.total} row(s)`),
          h('a', { class: 'button', href: `api/datasets/export?${query}&format=csv`, download: '' }, 'Export CSV'),
          h('a', { class: 'button', href: `api/datasets/export?${query}&format=json`, download: '' }, 'Export JSON'),
          h('button', { disabled: offset === 0, onclick: () => { offset = Math.max(0, offset - PAGE); show(); } }, '← Previous'),
          h('span', { class: 'muted' }, page.total ? `${offset + 1}–${Math.min(offset + PAGE, page.total)}` : ''),
          h('button', { disabled: offset + PAGE >= page.total, onclick: () => { offset += PAGE; show(); } }, 'Next →')),
        page.rows.length ? table(columns, page.rows.map((row) => h('tr', {}, columns.map((c) => h('td', {}, cell(row[c])))))) : null);
    } catch (error) { showError(error); fill(out, h('p', { class: 'bad' }, error.message)); }
  }

  async function load() {
    try {
      const [{ flows }, { runs }] = await Promise.all([api('flows'), api('runs?templateId=flow&limit=50')]);
      const pick = h('select', { 'aria-label': 'Dataset', onchange: (event) => {
        const [kind, id] = event.target.value.split(':');
        source = id ? { kind, id } : null;
        offset = 0;
        show();
      } }, h('option', { value: '' }, 'Choose a dataset…'),
      h('optgroup', { label: 'Rows a flow wrote (datasetWrite)' }, flows.map((f) => h('option', { value: `flowId:${f.flowId}` }, f.name))),
      h('optgroup', { label: 'Per-row results of a replay' }, runs.map((r) => h('option', { value: `runId:${r.runId}` }, `${r.runId} (${r.flowId || ''})`))));
      fill(view, h('h1', {}, 'Datasets'), pick, out);
      if (source) { pick.value = `${source.kind}:${source.id}`; show(); }
    } catch (error) { showError(error); }
  }

  await load();
  return { refresh: show };
}
