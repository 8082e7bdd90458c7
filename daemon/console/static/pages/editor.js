// The flow editor: steps as a timeline (drag to reorder, enable/disable, delete, batch select), a property
// panel per step (candidates with the scores the last replay or dry run gave them, fingerprint, waits, retry,
// timeout), the variables (types, the sensitive flag: a sensitive value never comes here), save as a new
// version, diff, export/import; replay, replay from a step, dry run. A V2 flow is drawn as a graph.
import { api, badge, fill, h, showError, table, toast } from '../dom.js';
import { diffView } from './diff.js';
import { graphView } from './graph.js';
import { candidatesTable, stepReports } from './reports.js';

const TYPES = ['string', 'number', 'boolean', 'enum', 'array'];
const ACTIVE = new Set(['queued', 'running']);
// A run step is named "<prefix><step id> <type>"; rows and foreach lanes prefix it ("r3 ", "n2[0] ").
const stepOf = (name) => name.split(' ').slice(-2)[0];

function summary(step) {
  const first = step.target?.candidates?.[0];
  if (first) return `${first.type}: ${first.value}`;
  return step.url || step.keys || step.waitText || step.condition || step.value || '';
}

export async function mount(view, [flowId]) {
  let saved = null, draft = null, focus = null, replay = null, dry = {}, dryShot = null, last = {};
  const selected = new Set();
  const live = {}; // stepId -> status in the replay under way

  const steps = () => (draft.nodes.length ? draft.nodes : draft.steps);
  const dirty = () => JSON.stringify(saved) !== JSON.stringify(draft);

  async function load() {
    try {
      saved = await api(`flows/${encodeURIComponent(flowId)}`);
      draft = structuredClone(saved);
      const run = await api(`flows/${encodeURIComponent(flowId)}/last-run`);
      last = Object.fromEntries((run?.result?.steps || []).map((report) => [report.stepId, report]));
    } catch (error) { showError(error); fill(view, h('p', {}, error.message)); return; }
    argsForm();
    fill(diffBox); // a diff drawn before a save compares versions that have moved on
    render();
    listTabs();
  }

  // -- the timeline ---------------------------------------------------------------------------------

  function move(id, to) {
    const list = steps();
    const from = list.findIndex((s) => s.id === id);
    if (from < 0 || to < 0 || to >= list.length || from === to) return;
    const [step] = list.splice(from, 1);
    list.splice(to, 0, step);
    render();
  }

  function status(step) {
    const now = live[step.id];
    if (now) return badge(now);
    const report = last[step.id];
    return report ? badge(report.status) : null;
  }

  function line(step, index) {
    const graph = draft.nodes.length > 0;
    const li = h('li', { class: `step${step.disabled ? ' disabled' : ''}${focus === step.id ? ' focus' : ''}`,
      draggable: graph ? undefined : 'true', dataset: { stepId: step.id },
      onclick: (event) => { if (!event.target.closest('button,input')) { focus = step.id; render(); } } },
    h('input', { type: 'checkbox', 'aria-label': `Select ${step.id}`, checked: selected.has(step.id),
      onchange: (event) => { if (event.target.checked) selected.add(step.id); else selected.delete(step.id); render(); } }),
    h('span', { class: 'num' }, index + 1), h('code', {}, step.id), h('span', { class: 'type' }, step.type),
    h('span', { class: 'what' }, summary(step)),
    dry[step.id] ? h('span', { class: `dry ${dry[step.id].status}`, title: 'Dry run' },
      `${dry[step.id].status} ${dry[step.id].score ?? ''}`) : null,
    h('span', { class: 'status' }, status(step)),
    h('label', { class: 'toggle' }, h('input', { type: 'checkbox', checked: !step.disabled,
      'aria-label': `Enable ${step.id}`, onchange: (event) => { step.disabled = !event.target.checked || undefined; render(); } }), 'on'),
    graph ? null : h('button', { title: 'Move up', 'aria-label': `Move ${step.id} up`, onclick: () => move(step.id, index - 1) }, '↑'),
    graph ? null : h('button', { title: 'Move down', 'aria-label': `Move ${step.id} down`, onclick: () => move(step.id, index + 1) }, '↓'),
    h('button', { title: 'Replay from this step', 'aria-label': `Replay from ${step.id}`, onclick: () => run(step.id) }, '▶'),
    graph ? null : h('button', { class: 'danger', title: 'Delete', 'aria-label': `Delete ${step.id}`,
      onclick: () => { draft.steps = draft.steps.filter((s) => s.id !== step.id); render(); } }, '✕'));
    li.addEventListener('dragstart', (event) => { event.dataTransfer.setData('text/plain', step.id); li.classList.add('dragging'); });
    li.addEventListener('dragend', () => li.classList.remove('dragging'));
    li.addEventListener('dragover', (event) => event.preventDefault());
    li.addEventListener('drop', (event) => {
      event.preventDefault();
      const dragged = event.dataTransfer.getData('text/plain');
      const box = li.getBoundingClientRect();
      const target = index + (event.clientY > box.top + box.height / 2 ? 1 : 0);
      const from = steps().findIndex((s) => s.id === dragged);
      move(dragged, from < target ? target - 1 : target);
    });
    return li;
  }

  function batch() {
    const pick = (change) => () => { for (const step of steps()) if (selected.has(step.id)) change(step); render(); };
    return h('div', { class: 'row batch' }, h('span', { class: 'muted' }, `${selected.size} selected`),
      h('button', { disabled: !selected.size, onclick: pick((s) => { s.disabled = true; }) }, 'Disable'),
      h('button', { disabled: !selected.size, onclick: pick((s) => { delete s.disabled; }) }, 'Enable'),
      draft.nodes.length ? null : h('button', { class: 'danger', disabled: !selected.size, onclick: () => {
        draft.steps = draft.steps.filter((s) => !selected.has(s.id));
        selected.clear();
        render();
      } }, 'Delete'));
  }

  // -- the property panel ---------------------------------------------------------------------------

  function field(label, step, key, type = 'text') {
    const value = step[key];
    const input = h('input', { type, value: value ?? '', 'aria-label': label, onchange: (event) => {
      const text = event.target.value;
      if (text === '') delete step[key];
      else step[key] = type === 'number' ? Number(text) : text;
      render();
    } });
    return h('label', { class: 'field' }, h('span', {}, label), input);
  }

  function panel(step) {
    if (!step) return h('aside', { class: 'panel muted' }, 'Pick a step to see its target, waits, retry and timeout.');
    const retry = step.retry || {};
    const setRetry = (key, value) => { step.retry = { count: 2, intervalMs: 100, backoff: 'exp', ...step.retry, [key]: value }; render(); };
    const report = dry[step.id] || last[step.id];
    const weighed = dry[step.id] ? dry[step.id] : last[step.id]?.details;
    return h('aside', { class: 'panel' }, h('h2', {}, step.id, ' ', h('small', {}, step.type)),
      ['fill', 'select', 'extract'].includes(step.type) ? field('Value', step, 'value') : null,
      ['navigate', 'openTab', 'switchTab', 'http'].includes(step.type) ? field('URL', step, 'url') : null,
      step.type === 'key' ? field('Keys', step, 'keys') : null,
      step.type === 'wait' ? field('Wait for text', step, 'waitText') : null,
      ['if', 'while'].includes(step.type) ? field('Condition', step, 'condition') : null,
      field('Timeout (ms)', step, 'timeoutMs', 'number'),
      h('fieldset', {}, h('legend', {}, 'Retry'),
        h('label', { class: 'field' }, h('span', {}, 'Count'), h('input', { type: 'number', min: 0, value: retry.count ?? 2,
          onchange: (e) => setRetry('count', Number(e.target.value)) })),
        h('label', { class: 'field' }, h('span', {}, 'Interval (ms)'), h('input', { type: 'number', min: 0,
          value: retry.intervalMs ?? 100, onchange: (e) => setRetry('intervalMs', Number(e.target.value)) })),
        h('label', { class: 'field' }, h('span', {}, 'Backoff'), h('select', { onchange: (e) => setRetry('backoff', e.target.value) },
          ['exp', 'none'].map((b) => h('option', { value: b, selected: (retry.backoff || 'exp') === b }, b))))),
      h('label', { class: 'field' }, h('input', { type: 'checkbox', checked: step.screenshotOnFail !== false,
        onchange: (e) => { if (e.target.checked) delete step.screenshotOnFail; else step.screenshotOnFail = false; render(); } }),
      ' Screenshot on failure (sensitive fields masked)'),
      step.target ? [
        h('h3', {}, 'Target candidates'),
        report?.score != null ? h('p', {}, `${dry[step.id] ? 'Dry run' : 'Last replay'}: score ${report.score}`,
          report.matchedBy ? ` via ${report.matchedBy}` : '') : null,
        table(['#', 'Type', 'Value', 'Weight', ''], step.target.candidates.map((c, i) => h('tr', {},
          h('td', {}, i), h('td', {}, c.type), h('td', {}, c.value), h('td', { class: 'num' }, c.weight ?? ''),
          h('td', {}, h('button', { 'aria-label': `Candidate ${i} first`, disabled: i === 0, onclick: () => {
            step.target.candidates.unshift(...step.target.candidates.splice(i, 1)); render();
          } }, 'first'))))),
        weighed ? candidatesTable(weighed) : null,
        h('h3', {}, 'Fingerprint'),
        table(['Field', 'Value'], Object.entries(step.target.fingerprint || {}).map(([k, v]) => h('tr', {}, h('td', {}, k), h('td', {}, v)))),
        step.target.frame?.length ? h('p', {}, 'In frame: ', step.target.frame.join(' › ')) : null,
        step.target.shadow?.length ? h('p', {}, 'In shadow root of: ', step.target.shadow.join(' › ')) : null,
      ] : null,
      last[step.id]?.status === 'failed' ? [h('h3', {}, 'Last replay stopped here'), stepReports([last[step.id]])] : null);
  }

  // -- variables ------------------------------------------------------------------------------------

  function variables() {
    const rows = draft.variables.map((v) => h('tr', {},
      h('td', {}, h('code', {}, v.key)),
      h('td', {}, h('select', { 'aria-label': `Type of ${v.key}`, onchange: (e) => { v.type = e.target.value; render(); } },
        TYPES.map((t) => h('option', { value: t, selected: (v.type || 'string') === t }, t)))),
      h('td', {}, h('input', { type: 'checkbox', 'aria-label': `${v.key} required`, checked: v.required !== false,
        onchange: (e) => { v.required = e.target.checked; render(); } })),
      h('td', {}, h('input', { type: 'checkbox', 'aria-label': `${v.key} sensitive`, checked: !!v.sensitive,
        onchange: (e) => { v.sensitive = e.target.checked; if (v.sensitive) v.default = null; render(); } })),
      // A sensitive variable has no default, and its value is never shown or asked for here.
      h('td', {}, v.sensitive ? h('span', { class: 'muted' }, 'sensitive: given at run time only')
        : h('input', { value: v.default ?? '', 'aria-label': `Default of ${v.key}`,
          onchange: (e) => { v.default = e.target.value === '' ? null : e.target.value; render(); } })),
      h('td', {}, v.type === 'enum' ? (v.options || []).join(', ') : v.pattern || '')));
    return rows.length ? table(['Variable', 'Type', 'Required', 'Sensitive', 'Default', 'Options / pattern'], rows)
      : h('p', { class: 'muted' }, 'No variables.');
  }

  // -- actions --------------------------------------------------------------------------------------

  async function save() {
    try {
      const answer = await api(`flows/${encodeURIComponent(flowId)}`, { flow: draft });
      toast(`Saved as version ${answer.version}`);
      await load();
    } catch (error) { showError(error); }
  }

  async function showDiff(box) {
    try {
      let before = saved, after = draft, title = `Unsaved changes against version ${saved.version}`;
      if (!dirty()) {
        if (saved.version < 2) { fill(box, h('p', { class: 'muted' }, 'Version 1 has no previous version.')); return; }
        before = await api(`flows/${encodeURIComponent(flowId)}?version=${saved.version - 1}`);
        after = saved;
        title = `Version ${saved.version} against version ${saved.version - 1}`;
      }
      fill(box, h('h3', {}, title), diffView(JSON.stringify(before, null, 2), JSON.stringify(after, null, 2)));
    } catch (error) { showError(error); }
  }

  function args() {
    const values = {};
    for (const input of view.querySelectorAll('.args input[data-key]')) {
      if (input.value !== '') values[input.dataset.key] = input.value;
    }
    return values;
  }

  async function run(fromStep) {
    if (dirty()) { toast('Save first: a replay runs the saved version', 'error'); return; }
    try {
      const answer = await api(`flows/${encodeURIComponent(flowId)}/run`, { args: args(), fromStep });
      replay = answer.runId;
      for (const key of Object.keys(live)) delete live[key];
      toast(`Replay ${replay} started${fromStep ? ` from ${fromStep}` : ''}`);
      render();
    } catch (error) { showError(error); }
  }

  // Where a dry run looks: the console's own tab (opened on the flow's page), or any session's tab.
  const dryTab = h('select', { 'aria-label': 'Dry run on', class: 'dry-tab' }, h('option', { value: '' }, 'the console\'s tab'));
  async function listTabs() {
    try {
      const { sessions, consoleSessionId } = await api('sessions');
      const choices = sessions.filter((s) => s.sessionId !== consoleSessionId).flatMap((s) => s.tabs.map((tab) =>
        h('option', { value: `${s.sessionId}/${tab.tabId}` }, `${s.client} ${tab.tabId}: ${tab.url}`)));
      fill(dryTab, dryTab.options[0], ...choices);
    } catch (error) { showError(error); }
  }

  async function dryRun() {
    try {
      const [sessionId, tabId] = dryTab.value ? dryTab.value.split('/') : [];
      const answer = await api(`flows/${encodeURIComponent(flowId)}/dry-run`, { sessionId, tabId });
      dry = Object.fromEntries(answer.steps.map((s) => [s.stepId, s]));
      dryShot = { ...answer, at: Date.now() };
      render();
    } catch (error) { showError(error); }
  }

  // Built once per load, so what the person typed survives every re-render of the editor.
  const argsBox = h('details', { class: 'args' });
  function argsForm() {
    fill(argsBox, h('summary', {}, 'Arguments for a replay'),
      saved.variables.map((v) => h('label', { class: 'field' }, h('span', {}, v.key),
        v.sensitive ? h('input', { disabled: true, placeholder: 'sensitive: give it with flow_run or browserd flows run' })
          : h('input', { dataset: { key: v.key }, value: v.default ?? '' }))));
  }

  // -- the page -------------------------------------------------------------------------------------

  const diffBox = h('div');
  function render() {
    const list = steps();
    const step = list.find((s) => s.id === focus);
    const name = h('input', { class: 'title', value: draft.name, 'aria-label': 'Flow name',
      onchange: (e) => { draft.name = e.target.value; render(); } });
    const exports = `api/flows/${encodeURIComponent(flowId)}/export`;
    fill(view, 
      h('div', { class: 'row' }, name, h('span', { class: 'tag' }, `v${saved.version}`),
        dirty() ? h('span', { class: 'unsaved' }, 'unsaved changes') : null),
      h('div', { class: 'row toolbar' },
        h('button', { class: 'primary', disabled: !dirty(), onclick: save }, 'Save as new version'),
        h('button', { onclick: () => showDiff(diffBox) }, 'Diff'),
        h('a', { class: 'button', href: `${exports}?format=json`, download: '' }, 'Export JSON'),
        h('a', { class: 'button', href: `${exports}?format=playwright`, download: '' }, 'Export Playwright'),
        h('button', { onclick: () => run(undefined) }, 'Replay'),
        h('button', { disabled: !focus, onclick: () => run(focus) }, 'Replay from selected'),
        h('button', { onclick: dryRun }, 'Dry run'), h('span', { class: 'muted' }, 'on'), dryTab,
        replay ? h('a', { href: `#/runs/${replay}` }, `replay ${replay}`) : null),
      diffBox,
      argsBox,
      draft.nodes.length ? graphView(draft, (id) => { focus = id; render(); }, (id) => live[id] || last[id]?.status) : null,
      h('div', { class: 'editor' },
        h('div', {}, batch(), h('ol', { class: 'timeline' }, list.map(line))),
        panel(step)),
      dryShot ? h('figure', { class: 'dryshot' },
        h('img', { class: 'shot', alt: 'The tab of the dry run, each step\'s element outlined with its score',
          src: `api/sessions/${dryShot.sessionId}/tabs/${dryShot.tabId}/thumbnail?at=${dryShot.at}` }),
        h('figcaption', {}, `Dry run on ${dryShot.url}`)) : null,
      h('h2', {}, 'Variables'), variables());
  }

  await load();
  return {
    refresh: load,
    async onEvent(event) {
      if (event.kind !== 'run' || event.runId !== replay) return;
      if (event.step) live[stepOf(event.step.name)] = event.step.status;
      if (!ACTIVE.has(event.status)) {
        const run = await api(`runs/${replay}`);
        last = Object.fromEntries((run.result?.steps || []).map((report) => [report.stepId, report]));
        for (const report of Object.values(last)) live[report.stepId] = report.status;
      }
      render();
    },
  };
}
