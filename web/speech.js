// The speech page (speech models, POST /v1/transcribe): a WAV file in, the recognised text out,
// with each output token's attention over the encoder steps drawn over the log-mel spectrogram
// (each encoder step covers frames_per_step feature frames) and as a heatmap.
'use strict';

Explorer.pages.push({
  id: 'speech',
  title: 'Speech',
  family: 'speech',
  render(root, models) {
    const {el, svg} = Explorer;
    const picker = Explorer.modelPicker(models);
    const file = el('input', {type: 'file', id: 'speech-file', accept: '.wav,audio/wav', 'aria-label': 'WAV file'});
    const beam = el('input', {type: 'number', id: 'speech-beam', min: 1, max: 16, value: 1});
    const go = el('button', {type: 'submit', id: 'speech-go', text: 'Transcribe'});
    const status = el('div', {class: 'status'});
    const summary = el('p', {class: 'answer', id: 'speech-summary'});
    const picture = el('div', {id: 'speech-picture'});

    const base64 = (f) => new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
      reader.onerror = () => reject(new Error(`cannot read ${f.name}`));
      reader.readAsDataURL(f);
    });

    // The spectrogram [T][M] (low frequencies at the bottom) with one band per encoder step
    // whose opacity is the hovered token's α; returns {element, light(token | null)}.
    // It starts `left` px in, so its frames line up with the heatmap's columns below it.
    const spectrogram = (spec, attention, framesPerStep, cw, left) => {
      const T = spec.length, M = T ? spec[0].length : 0;
      const ch = 4;
      const W = left + T * cw, H = M * ch;
      const all = spec.flat();
      const lo = Math.min(...all), hi = Math.max(...all);
      const out = svg('svg', {class: 'spectrogram', width: W, height: H, viewBox: `0 0 ${W} ${H}`});
      for (let t = 0; t < T; ++t) for (let m = 0; m < M; ++m) {
        const v = hi > lo ? (spec[t][m] - lo) / (hi - lo) : 0;
        out.append(svg('rect', {x: left + t * cw, y: H - (m + 1) * ch, width: cw, height: ch, fill: Explorer.alphaColor(v)}));
      }
      const steps = attention.length ? attention[0].length : 0;
      const bands = Array.from({length: steps}, (_, s) => {
        const b = svg('rect', {x: left + s * framesPerStep * cw, y: 0, width: framesPerStep * cw, height: H,
          class: 'band', 'fill-opacity': 0});
        out.append(b);
        return b;
      });
      const light = (tok) => {
        const row = tok === null ? null : attention[tok];
        const top = row ? Math.max(...row, 1e-9) : 1;
        bands.forEach((b, s) => b.setAttribute('fill-opacity', row ? (0.65 * row[s] / top).toFixed(3) : 0));
      };
      return {element: out, light};
    };

    const form = el('form', {class: 'controls', onsubmit: async (ev) => {
      ev.preventDefault();
      Explorer.showError(status, null);
      if (!file.files.length) return Explorer.showError(status, new Error('choose a WAV file first'));
      go.disabled = true;
      try {
        const r = await Explorer.api('/v1/transcribe', {model: picker.value(), wav_base64: await base64(file.files[0]),
          beam: Math.max(1, Number(beam.value) || 1)});
        summary.textContent = `text: ${r.text || '(nothing)'}  (log p = ${r.score.toFixed(3)})`;
        const tokens = r.attention.map((_, i) => (i < r.digits.length ? String(r.digits[i]) : '<eos>'));
        // Pixels per frame: the whole recording within about 900 px; an encoder step is
        // frames_per_step of them, in the spectrogram and in the heatmap alike.
        const frames = r.spectrogram ? r.spectrogram.length : (r.attention[0] || []).length * r.frames_per_step;
        const fw = Math.max(1, Math.min(12, Math.floor(900 / Math.max(1, frames))));
        let spec = null;
        const map = Explorer.heatmap({
          rowLabels: tokens,
          colLabels: (r.attention[0] || []).map((_, s) => String(s)),
          value: (t, s) => r.attention[t][s],
          title: (t, s, v) => `${tokens[t]} ← encoder step ${s} (frames ${s * r.frames_per_step}–` +
            `${(s + 1) * r.frames_per_step - 1}): α = ${v.toFixed(3)}`,
          cell: 20, cellWidth: fw * r.frames_per_step,
          onRow: (t) => { map.setRow(t); if (spec) spec.light(t); },
          className: 'speech-map',
        });
        if (r.spectrogram) spec = spectrogram(r.spectrogram, r.attention, r.frames_per_step, fw, map.left);
        picture.replaceChildren(
          ...(spec ? [el('p', {class: 'hint', text: 'The log-mel spectrogram; hover a row of the map below ' +
            'to see where that output token listened.'}), spec.element] : []),
          map.element);
        root.dataset.state = 'done';
      } catch (err) {
        Explorer.showError(status, err);
        root.dataset.state = 'error';
      } finally {
        go.disabled = false;
      }
    }}, [picker.element, Explorer.field('WAV (16-bit mono, the model\'s rate)', file), Explorer.field('beam', beam), go]);
    root.append(
      el('p', {class: 'intro', text: 'A listen-attend-spell recogniser: an encoder over the audio ' +
        'frames, and a decoder that attends over its steps while it writes each output token.'}),
      form, status, summary, picture);
  },
});
