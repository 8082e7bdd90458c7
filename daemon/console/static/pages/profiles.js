// Login profiles: each profile's version, last publish and writer (never its cookies), and how to log in.
import { api, fill, h, showError, table } from '../dom.js';

export async function mount(view) {
  async function load() {
    try {
      const { profiles } = await api('profiles');
      const rows = profiles.map((p) => h('tr', {}, h('td', {}, h('code', {}, p.profileId)), h('td', { class: 'num' }, p.version),
        h('td', {}, p.updatedAt), h('td', {}, p.writerId)));
      fill(view, h('h1', {}, 'Login profiles'),
        rows.length ? table(['Profile', 'Version', 'Last publish', 'Writer'], rows) : h('p', { class: 'muted' }, 'No profiles yet.'),
        h('p', {}, 'To log in to a site for a profile, run ', h('code', {}, 'browserd login --profile NAME --url URL'),
          ' in a terminal: a browser window opens for you, and its state is published to the profile as you go.'));
    } catch (error) { showError(error); }
  }
  await load();
  return { refresh: load };
}
