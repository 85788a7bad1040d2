// The explorer's shell: asks the server which models are loaded (GET /v1/models), shows a menu
// entry for every page whose family is among them, and renders the page the URL's #hash names.
'use strict';

(async function main() {
  const {el} = Explorer;
  const nav = document.getElementById('nav');
  const main = document.getElementById('main');
  const loaded = document.getElementById('loaded');
  let models;
  try {
    models = (await Explorer.api('/v1/models')).models;
  } catch (err) {
    Explorer.showError(main, err);
    return;
  }
  loaded.textContent = 'models: ' + models.map((m) => `${m.name} (${m.family})`).join(', ');
  const pages = Explorer.pages
      .map((p) => ({page: p, models: models.filter((m) => m.family === p.family)}))
      .filter((p) => p.models.length > 0);
  if (pages.length === 0) {
    main.replaceChildren(el('p', {text: 'No loaded model has a page here.'}));
    return;
  }
  // Each page is rendered once, on its first visit, and kept (its inputs survive a menu switch).
  const sections = new Map();
  const show = () => {
    const id = location.hash.slice(1);
    const chosen = pages.find((p) => p.page.id === id) || pages[0];
    for (const a of nav.querySelectorAll('a')) a.classList.toggle('current', a.dataset.page === chosen.page.id);
    if (!sections.has(chosen.page.id)) {
      const section = el('section', {id: `page-${chosen.page.id}`, class: 'page'},
          [el('h2', {text: chosen.page.title})]);
      chosen.page.render(section, chosen.models);
      sections.set(chosen.page.id, section);
      main.append(section);
    }
    for (const [pid, s] of sections) s.hidden = pid !== chosen.page.id;
    document.getElementById('status').hidden = true;
  };
  nav.replaceChildren(...pages.map((p) => el('a', {href: `#${p.page.id}`, 'data-page': p.page.id, text: p.page.title})));
  window.addEventListener('hashchange', show);
  show();
  document.body.dataset.ready = 'true';
})();
