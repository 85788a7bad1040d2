// The translate page (seq2seq models, POST /v1/translate with alignments): a sentence in, the
// n-best translations out, and for the chosen one the attention α of every target token over
// the source tokens, as a heatmap and as the flashlight of common.js.
'use strict';

Explorer.pages.push({
  id: 'translate',
  title: 'Translate',
  family: 'seq2seq',
  render(root, models) {
    const {el} = Explorer;
    const picker = Explorer.modelPicker(models);
    const src = el('input', {type: 'text', id: 'translate-src', class: 'wide', autocomplete: 'off',
      placeholder: models[0].input || 'a source sentence', 'aria-label': 'source sentence'});
    const beam = el('input', {type: 'number', id: 'translate-beam', min: 1, max: 16, value: 4});
    const nbest = el('input', {type: 'number', id: 'translate-nbest', min: 1, max: 16, value: 1});
    const alpha = el('input', {type: 'number', id: 'translate-alpha', min: 0, max: 10, step: 0.1, value: 0});
    const go = el('button', {type: 'submit', id: 'translate-go', text: 'Translate'});
    const status = el('div', {class: 'status'});
    const hyps = el('ol', {class: 'hyps', id: 'translate-hyps'});
    const picture = el('div', {id: 'translate-picture'});

    // Shows hypothesis h: its tokens and α (the route returns them with "alignments": true).
    const show = (list, h) => {
      [...hyps.children].forEach((li, i) => li.classList.toggle('chosen', i === h));
      const hyp = list[h];
      picture.replaceChildren(Explorer.flashlight({
        srcTokens: hyp.src_tokens, tgtTokens: hyp.tgt_tokens, alignment: hyp.alignment,
      }));
    };

    const form = el('form', {class: 'controls', onsubmit: async (ev) => {
      ev.preventDefault();
      const k = Math.max(1, Number(nbest.value) || 1);
      const b = Math.max(k, Number(beam.value) || 1);
      beam.value = b;
      Explorer.showError(status, null);
      go.disabled = true;
      try {
        const reply = await Explorer.api('/v1/translate', {
          model: picker.value(), src: [src.value], beam: b, n_best: k, alpha: Number(alpha.value) || 0,
          alignments: true,
        });
        const list = reply.translations[0];
        hyps.replaceChildren(...list.map((hyp, i) => el('li', {class: 'hyp', tabindex: 0,
          onclick: () => show(list, i), onkeydown: (e) => { if (e.key === 'Enter') show(list, i); },
        }, [
          el('span', {class: 'translation', text: hyp.tgt}),
          el('span', {class: 'score', text: `log p = ${hyp.score.toFixed(3)}`}),
        ])));
        if (list.length === 0) {
          picture.replaceChildren(el('p', {text: 'An empty source has an empty translation.'}));
        } else {
          show(list, 0);
        }
        root.dataset.state = 'done';
      } catch (err) {
        Explorer.showError(status, err);
        root.dataset.state = 'error';
      } finally {
        go.disabled = false;
      }
    }}, [
      picker.element, Explorer.field('source', src), Explorer.field('beam', beam),
      Explorer.field('n-best', nbest), Explorer.field('length penalty', alpha), go,
    ]);

    root.append(
      el('p', {class: 'intro', text: 'The decoder writes one target token at a time; at each step it ' +
        'attends over the encoder states of the source tokens with weights α that sum to 1. ' +
        'The darker a cell, the more that target token looked at that source token.'}),
      form, status, hyps, picture);
  },
});
