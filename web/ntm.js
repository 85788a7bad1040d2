// The NTM page (ntm models, POST /v1/ntm): one sequence of the model's task (copy, repeat copy,
// associative recall) and, over time, the input, the target, the model's output, and for every
// head its write or read weighting over the memory slots (the figures of Graves et al. 2014),
// with the add and read vectors where the route returns them. Time runs left to right in every
// panel; hovering a step highlights it in all of them.
'use strict';

Explorer.pages.push({
  id: 'ntm',
  title: 'NTM',
  family: 'ntm',
  render(root, models) {
    const {el} = Explorer;
    const picker = Explorer.modelPicker(models);
    const task = () => ((picker.model().config || {}).task || {}).task || 'copy';
    const length = el('input', {type: 'number', id: 'ntm-length', min: 1, max: 200, value: 5});
    const repeat = el('input', {type: 'number', id: 'ntm-repeat', min: 1, max: 100, value: 2});
    const seed = el('input', {type: 'number', id: 'ntm-seed', min: 0, value: 1});
    const repeatField = Explorer.field('repeats', repeat);
    const go = el('button', {type: 'submit', id: 'ntm-go', text: 'Run'});
    const status = el('div', {class: 'status'});
    const summary = el('p', {class: 'answer', id: 'ntm-summary'});
    const picture = el('div', {id: 'ntm-picture'});
    const showRepeat = () => { repeatField.hidden = task() !== 'repeat-copy'; };
    showRepeat();
    picker.element.addEventListener('change', showRepeat);

    // One panel: rows × T cells from series[t][row]; `scale` maps a value into [0, 1].
    const panels = [];
    const panel = (name, series, scale, rowName) => {
      const steps = series.length, rows = steps ? series[0].length : 0;
      const cw = Math.max(4, Math.min(18, Math.floor(900 / Math.max(1, steps))));
      const map = Explorer.heatmap({
        rowLabels: Array.from({length: rows}, (_, r) => `${rowName} ${r}`),
        colLabels: Array.from({length: steps}, (_, t) => String(t)),
        value: (r, t) => scale(series[t][r]),
        title: (r, t, v) => `${name}, step ${t}, ${rowName} ${r}: ${series[t][r].toFixed(3)}`,
        cell: 14, cellWidth: cw, left: 64,  // one margin: the steps line up from panel to panel
        onCol: (t) => panels.forEach((p) => p.setCol(t)),
        className: 'ntm-map',
      });
      panels.push(map);
      return el('figure', {class: 'panel'}, [el('figcaption', {text: name}), map.element]);
    };
    const unit = (v) => v;
    // Vectors with no fixed range (add and read vectors): min-max over the panel.
    const minmax = (series) => {
      const all = series.flat();
      const lo = Math.min(...all), hi = Math.max(...all);
      return (v) => (hi > lo ? (v - lo) / (hi - lo) : 0.5);
    };

    const form = el('form', {class: 'controls', onsubmit: async (ev) => {
      ev.preventDefault();
      Explorer.showError(status, null);
      go.disabled = true;
      try {
        const body = {model: picker.value(), length: Number(length.value), seed: Number(seed.value)};
        if (task() === 'repeat-copy') body.repeat = Number(repeat.value);
        const r = await Explorer.api('/v1/ntm', body);
        summary.replaceChildren(
          el('span', {text: `${r.bit_errors} wrong bits`}),
          el('span', {class: 'score', text: ` (cost ${r.bits.toFixed(3)} bits, ${r.input.length} steps)`}));
        summary.dataset.errors = r.bit_errors;
        panels.length = 0;
        const figs = [panel('input', r.input, unit, 'bit'), panel('target', r.target, unit, 'bit'),
          panel('output (sigmoid)', r.output, unit, 'bit')];
        const heads = (list, name, rowName, scale) => list.forEach((w, h) => {
          if (w.length) figs.push(panel(list.length > 1 ? `${name} ${h}` : name, w, scale(w), rowName));
        });
        heads(r.write_weightings, 'write weighting', 'slot', () => unit);
        heads(r.add_vectors || [], 'add vector (scaled)', 'col', minmax);
        heads(r.read_weightings, 'read weighting', 'slot', () => unit);
        heads(r.read_vectors || [], 'read vector (scaled)', 'col', minmax);
        if (r.write_weightings.length === 0) {
          figs.push(el('p', {class: 'hint', text: 'This is the LSTM baseline: it has no memory to show.'}));
        }
        picture.replaceChildren(
          el('p', {class: 'hint', text: 'In the copy tasks a trained NTM writes each input vector to the next slot ' +
            '(a diagonal in the write weighting), then reads them back in the same order. Hover a step.'}),
          ...figs);
        root.dataset.state = 'done';
      } catch (err) {
        Explorer.showError(status, err);
        root.dataset.state = 'error';
      } finally {
        go.disabled = false;
      }
    }}, [picker.element, Explorer.field('length', length), repeatField, Explorer.field('seed', seed), go]);
    root.append(
      el('p', {class: 'intro', text: 'A Neural Turing Machine: an LSTM controller with a memory ' +
        'matrix it reads and writes through soft weightings over the slots. The sequence is generated ' +
        'from the task the model was trained on.'}),
      form, status, summary, picture);
  },
});
