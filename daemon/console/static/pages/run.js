// One run: live progress and step log, its result, its artifacts (previewed and downloadable), cancel, and
// run again with the same inputs.
import { api, badge, fill, h, progress, showError, toast, when } from '../dom.js';
import { stepReports } from './reports.js';

const ACTIVE = new Set(['queued', 'running']);
const PREVIEW_CHARS = 20000;

function artifactView(artifact) {
  const url = `api/artifacts/${artifact.artifactId}`;
  const preview = h('div', { class: 'preview' });
  if (artifact.mimeType.startsWith('image/')) {
    preview.append(h('img', { class: 'shot', src: url, alt: artifact.name || artifact.artifactId, loading: 'lazy' }));
  } else if (/^(text\/|application\/json)/.test(artifact.mimeType)) {
    const show = h('button', { onclick: async () => {
      const text = await (await fetch(url)).text();
      fill(preview, h('pre', {}, text.slice(0, PREVIEW_CHARS)));
    } }, 'Preview');
    preview.append(show);
  }
  return h('li', {}, h('a', { href: `${url}?download=1` }, artifact.name || artifact.artifactId),
    h('small', { class: 'muted' }, ` ${artifact.mimeType}, ${artifact.size} bytes`), preview);
}

export async function mount(view, [runId]) {
  let run = null;
  const bar = h('span');
  const status = h('span');
  const log = h('ol', { class: 'steplog' });

  function stepItem(step) {
    return h('li', { dataset: { index: step.index } }, badge(step.status), ' ', step.name,
      step.error ? h('small', { class: 'bad' }, ` ${step.errorCode}: ${step.error}`) : '');
  }

  function header() {
    fill(bar, progress(run.doneSteps, run.totalSteps), ` ${run.doneSteps}/${run.totalSteps} steps`);
    fill(status, badge(run.status));
  }

  async function load() {
    try {
      run = await api(`runs/${runId}`);
    } catch (error) { showError(error); fill(view, h('p', {}, error.message)); return; }
    header();
    fill(log, ...(run.steps || []).map(stepItem));
    const actions = h('div', { class: 'row' },
      ACTIVE.has(run.status) ? h('button', { onclick: async () => {
        try { await api(`runs/${runId}/cancel`, {}); toast('Cancel requested'); } catch (error) { showError(error); }
      } }, 'Cancel') : null,
      ACTIVE.has(run.status) ? null : h('button', { onclick: async () => {
        try { const again = await api(`runs/${runId}/again`, {}); location.hash = `#/runs/${again.runId}`; }
        catch (error) { showError(error); }
      } }, 'Run again'),
      run.flowId ? h('a', { href: `#/flows/${run.flowId}` }, 'Open the flow') : null);
    const result = run.result || {};
    fill(view, 
      h('h1', {}, 'Run ', h('code', {}, run.runId), ' ', status),
      h('p', {}, `${run.templateId} · created ${when(run.createdAt)} · session ${run.sessionId}`), bar, actions,
      run.error ? h('p', { class: 'bad' }, `${run.error.errorCode}: ${run.error.error}`) : null,
      h('details', {}, h('summary', {}, 'Inputs'), h('pre', {}, JSON.stringify(run.inputs, null, 2))),
      h('h2', {}, 'Steps'), log,
      result.steps ? [h('h2', {}, 'Flow steps'), stepReports(result.steps)] : null,
      run.result ? h('details', {}, h('summary', {}, 'Result'), h('pre', {}, JSON.stringify(run.result, null, 2))) : null,
      run.artifacts?.length ? [h('h2', {}, 'Artifacts'), h('ul', { class: 'artifacts' }, run.artifacts.map(artifactView))] : null);
  }

  await load();
  return {
    refresh: load,
    onEvent(event) {
      if (event.kind !== 'run' || event.runId !== runId || !run) return;
      Object.assign(run, { status: event.status, doneSteps: event.doneSteps,
        totalSteps: ACTIVE.has(event.status) ? Math.max(run.totalSteps, event.totalSteps) : event.totalSteps });
      header();
      if (event.step) {
        const item = stepItem(event.step);
        const old = log.querySelector(`li[data-index="${event.step.index}"]`);
        if (old) old.replaceWith(item); else log.append(item);
      }
      if (!ACTIVE.has(event.status)) load(); // the result and artifacts exist once the run has ended
    },
  };
}
