// The translate page (seq2seq models, POST /v1/translate with alignments): a sentence in, the
// n-best translations out, and for the chosen one the attention α of every target token over
// the source tokens, as a heatmap and as the flashlight of common.js. "Watch it decode" streams a
// greedy translation ("stream": true) and replays it a token at a time (play / step): the α bars
// over the source tokens and the context vector c_t = Σ_i α_ti h_i with the step's numbers. With
// several seq2seq models loaded, "all models" translates with each, side by side (an attention
// model beside a fixed-C one).
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
    // Empty = the model's own length penalty (its run's decode: section); a value overrides it.
    const alpha = el('input', {type: 'number', id: 'translate-alpha', min: 0, max: 10, step: 0.1,
      placeholder: "model's"});
    const alphaField = () => (alpha.value === '' ? {} : {alpha: Number(alpha.value)});
    const go = el('button', {type: 'submit', id: 'translate-go', text: 'Translate'});
    const compare = el('input', {type: 'checkbox', id: 'translate-compare'});
    const status = el('div', {class: 'status'});
    const hyps = el('ol', {class: 'hyps', id: 'translate-hyps'});
    const picture = el('div', {id: 'translate-picture'});
    const sideBySide = el('div', {id: 'translate-compared', class: 'compared'});
    // The seeds' sentence for a Chinese -> English model (its name or directory says zh).
    if (models.some((m) => /zh/i.test(`${m.name} ${m.dir}`))) src.value = '欢迎来北京';

    // Shows hypothesis h: its tokens and α (the route returns them with "alignments": true).
    const show = (list, h) => {
      [...hyps.children].forEach((li, i) => li.classList.toggle('chosen', i === h));
      const hyp = list[h];
      picture.replaceChildren(Explorer.flashlight({
        srcTokens: hyp.src_tokens, tgtTokens: hyp.tgt_tokens, alignment: hyp.alignment,
      }));
    };

    // Every seq2seq model's best translation of the sentence, each with its attention picture
    // (a model without attention says so: its decoder reads the fixed vector C).
    const translateAll = async (b, k) => {
      const columns = [];
      for (const m of models) {
        const reply = await Explorer.api('/v1/translate', {
          model: m.name, src: [src.value], beam: b, n_best: k, ...alphaField(), alignments: true,
        });
        const hyp = reply.translations[0][0];
        const hasAlpha = hyp && (hyp.alignment || []).some((row) => row.length > 0);
        columns.push(el('div', {class: 'compared-model', 'data-model': m.name}, [
          el('h3', {text: m.name}),
          el('p', {class: 'translation', text: hyp ? hyp.tgt : ''}),
          hyp && hasAlpha ? Explorer.flashlight({srcTokens: hyp.src_tokens, tgtTokens: hyp.tgt_tokens, alignment: hyp.alignment})
            : el('p', {class: 'hint', text: 'No attention: every output token is decoded from the one fixed vector C.'}),
        ]));
      }
      sideBySide.replaceChildren(...columns);
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
          model: picker.value(), src: [src.value], beam: b, n_best: k, ...alphaField(), alignments: true,
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
        if (compare.checked) await translateAll(b, k);
        else sideBySide.replaceChildren();
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
    const compareField = Explorer.field('all models side by side', compare);
    if (models.length < 2) compareField.hidden = true;
    form.append(compareField);

    // ---- Watching the decoder: a greedy stream replayed one token per frame. ----
    const watch = el('button', {type: 'button', id: 'translate-watch', text: 'Watch it decode'});
    const play = el('button', {type: 'button', id: 'decode-play', text: 'Pause', disabled: true});
    const step = el('button', {type: 'button', id: 'decode-step', text: 'Step', disabled: true});
    const progress = el('span', {id: 'decode-progress', class: 'hint'});
    const srcRow = el('div', {class: 'token-row', id: 'decode-src'});
    const outRow = el('div', {class: 'token-row', id: 'decode-out'});
    const formula = el('p', {id: 'decode-formula', class: 'formula'});
    const decodePanel = el('section', {id: 'translate-decode', class: 'decode', hidden: true}, [
      el('div', {class: 'controls'}, [play, step, progress]),
      el('div', {class: 'token-row'}, [el('span', {class: 'row-name', text: 'input'}), srcRow]),
      el('div', {class: 'token-row'}, [el('span', {class: 'row-name', text: 'output'}), outRow]),
      formula,
    ]);
    let frames = [], shown = 0, srcTokens = [], timer = null, finished = false;
    const render = () => {
      const f = shown > 0 ? frames[shown - 1] : null;
      const alpha = f ? f.alpha : [];
      srcRow.replaceChildren(...srcTokens.map((t, i) => {
        const a = alpha[i] || 0;
        const bar = el('span', {class: 'bar-fill'});
        bar.style.height = `${Math.round(a * 100)}%`;
        bar.style.backgroundColor = Explorer.alphaColor(a);
        return el('span', {class: 'token src-token decode-src', 'data-index': i, 'data-alpha': f ? a.toFixed(4) : ''}, [
          el('span', {class: 'bar'}, [bar]),
          el('span', {class: 'tok', text: Explorer.showToken(t)}),
          el('span', {class: 'alpha', text: f ? a.toFixed(2) : ''}),
        ]);
      }));
      outRow.replaceChildren(...frames.slice(0, shown).map((fr, i) => el('span', {
        class: 'token tgt-token decode-out' + (i === shown - 1 ? ' active' : ''), 'data-index': i,
      }, [el('span', {class: 'tok', text: Explorer.showToken(fr.token)})])));
      if (!f) {
        formula.replaceChildren();
      } else if (alpha.length === 0) {
        formula.replaceChildren(el('span', {text: `step ${f.step + 1}: no attention, the decoder reads the fixed vector C`}));
      } else {
        // c_t = Σ_i α_ti h_i with the step's α, one term per source token (the seeds' formula).
        const terms = alpha.map((a, i) => el('span', {class: 'term', 'data-index': i, 'data-alpha': a.toFixed(4),
          text: `${a.toFixed(2)}·h${i + 1}`, title: Explorer.showToken(srcTokens[i] || '')}));
        const parts = [el('span', {text: `c${f.step + 1} = `})];
        terms.forEach((t, i) => { if (i > 0) parts.push(' + '); parts.push(t); });
        parts.push(el('span', {class: 'hint', text: `  → "${Explorer.showToken(f.token)}"`}));
        formula.replaceChildren(...parts);
      }
      progress.textContent = `step ${shown} of ${frames.length}${finished ? '' : ' (decoding…)'}`;
      step.disabled = shown >= frames.length && finished;
      if (finished && shown >= frames.length) {
        stop();
        play.disabled = true;
        root.dataset.decode = 'done';
      }
    };
    const stop = () => { clearInterval(timer); timer = null; play.textContent = 'Play'; };
    const advance = () => { if (shown < frames.length) { shown += 1; render(); } else if (finished) render(); };
    const start = () => { if (!timer) { timer = setInterval(advance, 600); play.textContent = 'Pause'; } };
    play.addEventListener('click', () => (timer ? stop() : start()));
    step.addEventListener('click', () => { stop(); advance(); });
    watch.addEventListener('click', async () => {
      stop();
      frames = []; shown = 0; srcTokens = []; finished = false;
      delete root.dataset.decode;
      decodePanel.hidden = false;
      play.disabled = false;
      step.disabled = false;
      watch.disabled = true;
      Explorer.showError(status, null);
      render();
      start();
      try {
        await Explorer.stream('/v1/translate', {model: picker.value(), src: [src.value]}, (name, data) => {
          if (name !== 'token') return;
          if (data.src_tokens) srcTokens = data.src_tokens;
          frames.push(data);
        });
        finished = true;
        render();
      } catch (err) {
        stop();
        Explorer.showError(status, err);
        root.dataset.decode = 'error';
      } finally {
        watch.disabled = false;
      }
    });

    root.append(
      el('p', {class: 'intro', text: 'The decoder writes one target token at a time; at each step it ' +
        'attends over the encoder states of the source tokens with weights α that sum to 1. ' +
        'The darker a cell, the more that target token looked at that source token.'}),
      form, el('div', {class: 'controls'}, [watch]), status, decodePanel, hyps, picture, sideBySide);
  },
});
