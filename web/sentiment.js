// The sentiment page (tree models, POST /v1/sentiment): a sentence or a PTB tree in, the tree
// drawn with every node coloured by its predicted class (as in the Stanford Sentiment Treebank
// figures); hovering a node shows its class distribution.
'use strict';

Explorer.pages.push({
  id: 'sentiment',
  title: 'Sentiment tree',
  family: 'tree',
  render(root, models) {
    const {el, svg} = Explorer;
    const picker = Explorer.modelPicker(models);
    const text = el('input', {type: 'text', id: 'sentiment-text', class: 'wide',
      value: 'an intelligent and moving drama', 'aria-label': 'sentence or tree'});
    const go = el('button', {type: 'submit', id: 'sentiment-go', text: 'Label'});
    const status = el('div', {class: 'status'});
    const summary = el('p', {class: 'answer', id: 'sentiment-summary'});
    const picture = el('div', {id: 'sentiment-picture'});

    // Class colours from negative (red) through neutral (grey) to positive (blue).
    const colour = (label, classes) => {
      const t = classes > 1 ? label / (classes - 1) : 0.5;
      const neg = [202, 0, 32], mid = [220, 220, 220], pos = [5, 113, 176];
      const [a, b, u] = t < 0.5 ? [neg, mid, t * 2] : [mid, pos, (t - 0.5) * 2];
      const c = a.map((x, i) => Math.round(x + (b[i] - x) * u));
      return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
    };
    const names5 = ['very negative', 'negative', 'neutral', 'positive', 'very positive'];
    const className = (label, classes) => (classes === 5 ? names5[label] : classes === 2 ?
      ['negative', 'positive'][label] : `class ${label}`);

    // Leaves evenly spaced in reading order; a parent above the middle of its children.
    const drawTree = (nodes, rootIndex) => {
      const classes = nodes[rootIndex].probs.length;
      const pos = new Map();
      let leaf = 0, depthMax = 0;
      const place = (n, depth) => {
        depthMax = Math.max(depthMax, depth);
        const kids = nodes[n].children;
        if (kids.length === 0) {
          pos.set(n, {x: leaf++, depth});
        } else {
          kids.forEach((k) => place(k, depth + 1));
          const xs = kids.map((k) => pos.get(k).x);
          pos.set(n, {x: (Math.min(...xs) + Math.max(...xs)) / 2, depth});
        }
      };
      place(rootIndex, 0);
      const dx = 64, dy = 46, pad = 30;
      const W = pad * 2 + Math.max(1, leaf - 1) * dx, H = pad * 2 + depthMax * dy + 24;
      const X = (n) => pad + pos.get(n).x * dx, Y = (n) => pad + pos.get(n).depth * dy;
      const out = svg('svg', {class: 'tree-plot', width: W, height: H, viewBox: `0 0 ${W} ${H}`});
      for (const n of pos.keys()) {
        for (const k of nodes[n].children) {
          out.append(svg('line', {x1: X(n), y1: Y(n), x2: X(k), y2: Y(k), class: 'edge'}));
        }
      }
      for (const n of pos.keys()) {
        const node = nodes[n];
        const dot = svg('circle', {cx: X(n), cy: Y(n), r: 11, class: 'tree-node', fill: colour(node.label, classes),
          'data-label': node.label, 'data-index': n});
        const tip = svg('title');
        tip.textContent = `${className(node.label, classes)} (p = ${node.probability.toFixed(2)})\n` +
          node.probs.map((p, c) => `${className(c, classes)}: ${p.toFixed(3)}`).join('\n');
        dot.append(tip);
        const label = svg('text', {x: X(n), y: Y(n) + 4, 'text-anchor': 'middle', class: 'node-label'});
        label.textContent = String(node.label);
        out.append(dot, label);
        if (node.word !== undefined) {
          const w = svg('text', {x: X(n), y: Y(n) + 28, 'text-anchor': 'middle', class: 'word'});
          w.textContent = node.word;
          out.append(w);
        }
      }
      const legend = el('p', {class: 'legend'}, Array.from({length: classes}, (_, c) => {
        const chip = el('span', {class: 'token', text: `${c} ${className(c, classes)}`});
        chip.style.backgroundColor = colour(c, classes);
        if (Math.abs(c - (classes - 1) / 2) > classes / 4) chip.style.color = '#fff';  // the dark ends
        return chip;
      }));
      return [legend, out];
    };

    const form = el('form', {class: 'controls', onsubmit: async (ev) => {
      ev.preventDefault();
      Explorer.showError(status, null);
      go.disabled = true;
      try {
        const r = await Explorer.api('/v1/sentiment', {model: picker.value(), text: text.value});
        summary.textContent = `${r.name} (p = ${r.probability.toFixed(2)})`;
        picture.replaceChildren(...drawTree(r.nodes, r.root),
          el('p', {class: 'hint', text: 'Hover a node for its class distribution.'}));
        root.dataset.state = 'done';
      } catch (err) {
        Explorer.showError(status, err);
        root.dataset.state = 'error';
      } finally {
        go.disabled = false;
      }
    }}, [picker.element, Explorer.field('sentence or PTB tree', text), go]);
    root.append(
      el('p', {class: 'intro', text: 'A recursive network composes the sentence bottom-up along its ' +
        'parse tree and predicts a sentiment class at every node, so you can see where the meaning turns.'}),
      form, status, summary, picture);
  },
});
