// The pointer page (pointer models, POST /v1/pointer): points in, the order the Pointer Network
// points at them out: sorted numbers as bars, a convex hull or a TSP tour drawn over the
// points. Each output step is a softmax over the input points; hovering a step (a row of the
// heatmap) sizes and colours every point by that step's attention.
'use strict';

Explorer.pages.push({
  id: 'pointer',
  title: 'Pointer',
  family: 'pointer',
  render(root, models) {
    const {el, svg} = Explorer;
    const picker = Explorer.modelPicker(models);
    const task = () => (picker.model().config || {}).task || 'sort';
    const points = el('textarea', {id: 'pointer-points', rows: 4, cols: 60, 'aria-label': 'points'});
    const count = el('input', {type: 'number', id: 'pointer-count', min: 2, max: 64, value: 6});
    const random = el('button', {type: 'button', text: 'random points'});
    const go = el('button', {type: 'submit', id: 'pointer-go', text: 'Point'});
    const status = el('div', {class: 'status'});
    const summary = el('p', {class: 'answer', id: 'pointer-summary'});
    const picture = el('div', {id: 'pointer-picture', class: 'side-by-side'});

    // Numbers for sort ("0.5 0.1 0.9"), x,y pairs one a line for hull and TSP.
    const fill = () => {
      const n = Math.max(2, Math.min(64, Number(count.value) || 6));
      const r = () => Math.round(Math.random() * 1000) / 1000;
      points.value = task() === 'sort' ? Array.from({length: n}, r).join(' ') :
        Array.from({length: n}, () => `${r()}, ${r()}`).join('\n');
    };
    random.addEventListener('click', fill);
    fill();
    const parse = () => {
      if (task() === 'sort') return points.value.trim().split(/[\s,]+/).filter(Boolean).map(Number);
      return points.value.trim().split('\n').filter((l) => l.trim()).map((l) => l.split(/[\s,]+/).filter(Boolean).map(Number));
    };

    // The drawing: bars (sort) or points with the tour / hull (2-D); light(step) shows α.
    const drawing = (pts, output, attention) => {
      const W = 360, H = 360, pad = 24;
      const root = svg('svg', {class: 'pointer-plot', width: W, height: H, viewBox: `0 0 ${W} ${H}`});
      const marks = [];
      if (task() === 'sort') {
        const n = pts.length, bw = (W - 2 * pad) / n;
        const hi = Math.max(...pts.map(Math.abs), 1e-9);
        pts.forEach((v, i) => {
          const h = (H - 2 * pad - 16) * Math.abs(v) / hi;
          const bar = svg('rect', {x: pad + i * bw + 2, y: H - pad - h, width: bw - 4, height: h, class: 'bar'});
          const rank = output.indexOf(i);
          const label = svg('text', {x: pad + i * bw + bw / 2, y: H - pad + 14, 'text-anchor': 'middle', class: 'col-label'});
          label.textContent = rank >= 0 ? `#${rank + 1}` : '';
          root.append(bar, label);
          marks.push(bar);
        });
      } else {
        const X = (p) => pad + p[0] * (W - 2 * pad), Y = (p) => H - pad - p[1] * (H - 2 * pad);
        const path = output.map((i) => `${X(pts[i])},${Y(pts[i])}`).join(' ');
        root.append(svg('polyline', {points: path, class: 'tour'}));
        pts.forEach((p, i) => {
          const dot = svg('circle', {cx: X(p), cy: Y(p), r: 5, class: 'point', 'data-index': i});
          const tip = svg('title');
          tip.textContent = `point ${i}: (${p[0]}, ${p[1]})`;
          dot.append(tip);
          root.append(dot);
          marks.push(dot);
        });
      }
      const light = (step) => marks.forEach((m, i) => {
        const a = step === null ? null : (attention[step] || [])[i] || 0;
        m.style.fill = a === null ? '' : Explorer.alphaColor(0.15 + 0.85 * a);  // over the CSS default
        m.dataset.alpha = a === null ? '' : a.toFixed(4);
        m.classList.toggle('lit', a !== null);
        if (m.tagName === 'circle') m.setAttribute('r', a === null ? 5 : 4 + 10 * Math.sqrt(a));
      });
      return {element: root, light};
    };

    const form = el('form', {class: 'controls stacked', onsubmit: async (ev) => {
      ev.preventDefault();
      Explorer.showError(status, null);
      go.disabled = true;
      try {
        const pts = parse();
        const r = await Explorer.api('/v1/pointer', {model: picker.value(), points: pts});
        summary.textContent = `order: ${r.output.join(' → ')}  (log p = ${r.log_prob.toFixed(3)})`;
        const d = drawing(pts, r.output, r.attention);
        const map = Explorer.heatmap({
          rowLabels: r.attention.map((_, t) => (t === r.attention.length - 1 ? 'end' : `step ${t}`)),
          colLabels: pts.map((_, i) => String(i)),
          value: (t, i) => r.attention[t][i],
          title: (t, i, v) => `step ${t} points at ${i} with α = ${v.toFixed(3)}`,
          onRow: (t) => { map.setRow(t); d.light(t); },
          className: 'pointer-map',
        });
        picture.replaceChildren(d.element, el('div', {}, [
          el('p', {class: 'hint', text: 'Rows: output steps; columns: input points. Hover a row.'}), map.element]));
        root.dataset.state = 'done';
      } catch (err) {
        Explorer.showError(status, err);
        root.dataset.state = 'error';
      } finally {
        go.disabled = false;
      }
    }}, [picker.element, Explorer.field('points (sort: numbers; hull / TSP: "x, y" a line, in [0, 1])', points),
      el('div', {}, [Explorer.field('how many', count), random]), go]);
    root.append(
      el('p', {class: 'intro', text: 'A Pointer Network answers with positions of its input: at each ' +
        'step, attention over the input points is the output distribution itself.'}),
      form, status, summary, picture);
  },
});
