// A flow replay's per-step reports, shared by a run's page and the flow editor: how each step found its
// element (matched by, score), and for a step that stopped, its masked screenshot and the candidates it weighed.
import { badge, h, table } from '../dom.js';

export function candidatesTable(details) {
  const candidates = details?.candidates || [];
  const elements = details?.elements || [];
  return h('div', { class: 'weighed' },
    candidates.length ? table(['#', 'Candidate', 'Found', 'Leads'], candidates.map((c) => h('tr', {},
      h('td', {}, c.index), h('td', {}, `${c.type}: ${c.value}`), h('td', { class: 'num' }, c.count),
      h('td', {}, c.hitsWinner ? '✓' : '')))) : null,
    elements.length ? table(['Element', 'Score', 'Visible', 'Container'], elements.map((e) => h('tr', {},
      h('td', {}, `<${e.tag}> ${e.name || ''}`), h('td', { class: 'num' }, e.score),
      h('td', {}, e.visible ? 'yes' : 'no'), h('td', {}, e.container || '')))) : null);
}

export function failure(report) {
  return h('div', { class: 'failure' },
    h('p', {}, h('b', {}, report.errorCode || 'failed'), ' ', report.message || ''),
    report.recoverHint ? h('p', { class: 'muted' }, report.recoverHint) : null,
    report.screenshotArtifactId ? h('a', { href: `api/artifacts/${report.screenshotArtifactId}`, target: '_blank' },
      h('img', { class: 'shot', src: `api/artifacts/${report.screenshotArtifactId}`,
        alt: `The page when step ${report.stepId} stopped (sensitive fields masked)` })) : null,
    candidatesTable(report.details));
}

export function stepReports(steps) {
  return h('div', { class: 'reports' }, steps.map((report) => h('div', { class: `report ${report.status}`,
    dataset: { stepId: report.stepId } },
    h('div', { class: 'row' }, h('code', {}, report.stepId), h('span', {}, report.type), badge(report.status),
      report.matchedBy ? h('small', {}, `via ${report.matchedBy}`) : null,
      report.score != null ? h('small', { class: 'score' }, `score ${report.score}`) : null,
      report.llm ? h('small', { class: 'tag', title: report.llm.reason }, `chosen by ${report.llm.model || 'the model'}`)
        : report.fallback ? h('small', { class: 'tag' }, 'fallback') : null,
      h('small', { class: 'muted' }, `${report.tookMs} ms`)),
    report.status === 'failed' ? failure(report) : null)));
}
