// The summarize page (pointer_generator models, POST /v1/summarize): an article in, a summary
// out, each summary word marked as copied from the article or generated from the vocabulary
// (by the model's switch p_gen), with its attention over the article's words.
'use strict';

Explorer.pages.push({
  id: 'summarize',
  title: 'Copy',
  family: 'pointer_generator',
  render(root, models) {
    const {el} = Explorer;
    const picker = Explorer.modelPicker(models);
    const article = el('textarea', {id: 'summarize-article', rows: 5, cols: 70, 'aria-label': 'article',
      placeholder: models[0].input || 'an article'});
    const beam = el('input', {type: 'number', id: 'summarize-beam', min: 1, max: 16, value: 2});
    const go = el('button', {type: 'submit', id: 'summarize-go', text: 'Summarize'});
    const status = el('div', {class: 'status'});
    const summary = el('p', {class: 'answer', id: 'summarize-summary'});
    const picture = el('div', {id: 'summarize-picture'});

    const form = el('form', {class: 'controls stacked', onsubmit: async (ev) => {
      ev.preventDefault();
      Explorer.showError(status, null);
      go.disabled = true;
      try {
        const r = await Explorer.api('/v1/summarize', {model: picker.value(), article: article.value,
          beam: Math.max(1, Number(beam.value) || 1)});
        summary.textContent = r.summary;
        const toks = r.tokens;
        picture.replaceChildren(
          el('p', {class: 'legend'}, [
            el('span', {class: 'token copied', text: 'copied'}), ' from the article (p_gen < 0.5), ',
            el('span', {class: 'token generated', text: 'generated'}), ' from the vocabulary (p_gen ≥ 0.5).']),
          Explorer.flashlight({
            srcTokens: r.source_tokens,
            tgtTokens: toks.map((t) => t.token),
            alignment: toks.map((t) => t.attention),
            tgtClass: (t) => (toks[t].copied ? 'copied' : 'generated'),
            tgtTitle: (t) => `p_gen = ${toks[t].p_gen.toFixed(3)}`,
          }));
        root.dataset.state = 'done';
      } catch (err) {
        Explorer.showError(status, err);
        root.dataset.state = 'error';
      } finally {
        go.disabled = false;
      }
    }}, [picker.element, Explorer.field('article', article), Explorer.field('beam', beam), go]);
    root.append(
      el('p', {class: 'intro', text: 'A pointer-generator network mixes two distributions at each ' +
        'step: generating a word from its vocabulary (weight p_gen) or copying one from the article ' +
        'through its attention (weight 1 − p_gen), which lets it write names it has never seen.'}),
      form, status, summary, picture);
  },
});
