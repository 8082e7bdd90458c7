// Runs: every kept run, newest first, with a progress bar that moves as the daemon reports steps.
import { api, badge, fill, h, progress, showError, table, throttle, when } from '../dom.js';

const ACTIVE = new Set(['queued', 'running']);

export async function mount(view) {
  let runs = [];
  const rows = new Map(); // runId -> its table row

  function row(run) {
    const tr = h('tr', { dataset: { runId: run.runId } },
      h('td', {}, h('a', { href: `#/runs/${run.runId}` }, run.runId)),
      h('td', {}, run.templateId, run.flowId ? h('small', { class: 'muted' }, ` ${run.flowId}`) : ''),
      h('td', {}, badge(run.status)),
      h('td', {}, progress(run.doneSteps, run.totalSteps), h('small', { class: 'muted' }, ` ${run.doneSteps}/${run.totalSteps}`)),
      h('td', {}, when(run.createdAt)),
      h('td', {}, ACTIVE.has(run.status) ? h('button', { onclick: () => cancel(run.runId) }, 'Cancel') : ''));
    rows.set(run.runId, tr);
    return tr;
  }

  async function cancel(runId) {
    try { await api(`runs/${runId}/cancel`, {}); } catch (error) { showError(error); }
  }

  async function load() {
    try {
      runs = (await api('runs?limit=50')).runs;
      rows.clear();
      fill(view, h('h1', {}, 'Runs'), runs.length
        ? table(['Run', 'Template', 'Status', 'Progress', 'Created', ''], runs.map(row))
        : h('p', { class: 'muted' }, 'No runs yet.'));
    } catch (error) { showError(error); }
  }

  const reload = throttle(load, 1000);
  await load();
  return {
    refresh: load,
    onEvent(event) {
      if (event.kind !== 'run') return;
      const known = runs.find((run) => run.runId === event.runId);
      if (!known) { reload(); return; }
      // A crawl's total is its page limit, which the event does not know: the larger of the two stays.
      Object.assign(known, { status: event.status, doneSteps: event.doneSteps,
        totalSteps: ACTIVE.has(event.status) ? Math.max(known.totalSteps, event.totalSteps) : event.totalSteps });
      rows.get(event.runId)?.replaceWith(row(known));
    },
  };
}
