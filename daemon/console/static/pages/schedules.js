// Schedules and triggers: each flow's cron schedules (with the next time they fire) and onPage triggers; add
// and remove. Arguments are stored, so a flow with sensitive variables cannot be scheduled (the daemon says so).
import { api, fill, h, showError, table, toast, when } from '../dom.js';

export async function mount(view) {
  async function remove(id) {
    try { await api(`schedules/${id}/remove`, {}); toast(`Removed ${id}`); load(); } catch (error) { showError(error); }
  }

  async function load() {
    try {
      const [{ schedules }, { flows }] = await Promise.all([api('schedules'), api('flows')]);
      const flow = h('select', { name: 'flowId', 'aria-label': 'Flow' },
        flows.map((f) => h('option', { value: f.flowId }, `${f.name} (${f.flowId})`)));
      const kind = h('select', { 'aria-label': 'Trigger' }, h('option', { value: 'cron' }, 'cron'), h('option', { value: 'onPage' }, 'on page (URL glob)'));
      const when_ = h('input', { placeholder: '*/15 * * * *', 'aria-label': 'Cron or URL glob', required: true });
      const args = h('input', { placeholder: '{"query": "teapot"}', 'aria-label': 'Arguments (JSON)' });
      const form = h('form', { class: 'row', onsubmit: async (event) => {
        event.preventDefault();
        try {
          const body = { flowId: flow.value, [kind.value]: when_.value, args: args.value ? JSON.parse(args.value) : {} };
          const added = await api('schedules', body);
          toast(`Added ${added.scheduleId}`);
          load();
        } catch (error) { showError(error); }
      } }, flow, kind, when_, args, h('button', {}, 'Add'));
      const rows = schedules.map((s) => h('tr', {},
        h('td', {}, h('code', {}, s.scheduleId)), h('td', {}, h('a', { href: `#/flows/${s.flowId}` }, s.flowId)),
        h('td', {}, s.cron ? `cron ${s.cron}${s.systemd ? ' (systemd timer)' : ''}` : `on page ${s.onPage}`),
        h('td', {}, s.nextAt ? when(s.nextAt) : '—'),
        h('td', {}, s.lastRunId ? h('a', { href: `#/runs/${s.lastRunId}` }, when(s.lastAt)) : '—'),
        h('td', {}, h('button', { class: 'danger', onclick: () => remove(s.scheduleId) }, 'Remove'))));
      fill(view, h('h1', {}, 'Schedules and triggers'),
        rows.length ? table(['Schedule', 'Flow', 'Trigger', 'Next', 'Last run', ''], rows) : h('p', { class: 'muted' }, 'No schedules.'),
        h('h2', {}, 'Add'), flows.length ? form : h('p', { class: 'muted' }, 'No flows to schedule.'));
    } catch (error) { showError(error); }
  }

  await load();
  return { refresh: load };
}
