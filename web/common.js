// The explorer's shared helpers: the JSON API, DOM and SVG builders, the α colour scale, the
// heatmap and the "flashlight" (hover an output token, its input tokens light up with their α).
// Every page registers itself in Explorer.pages; app.js shows the pages whose family is loaded.
// The pages run under a Content-Security-Policy of 'self' only: no inline scripts or style
// attributes, so colours are set as SVG attributes or through element.style (CSSOM).
'use strict';

const Explorer = {
  pages: [],  // {id, title, family, render(root, models)}, in menu order
};

// POSTs `body` as JSON to `path` (GET when body is undefined); resolves to the reply's JSON,
// rejects with the server's one-line error.
Explorer.api = async function (path, body) {
  const init = body === undefined ? {} : {
    method: 'POST',
    headers: {'Content-Type': 'application/json'},
    body: JSON.stringify(body),
  };
  const res = await fetch(path, init);
  let data;
  try {
    data = await res.json();
  } catch (e) {
    throw new Error(`${path}: HTTP ${res.status}, not JSON`);
  }
  if (!res.ok) throw new Error(data.error || `${path}: HTTP ${res.status}`);
  return data;
};

// POSTs `body` (with "stream": true) to `path` and reads its Server-Sent Events as they arrive:
// onEvent(name, data) for each (data parsed as JSON). Resolves to the "result" event's data;
// rejects with the server's error (a JSON reply before streaming, or an "error" event).
Explorer.stream = async function (path, body, onEvent) {
  const res = await fetch(path, {
    method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({...body, stream: true}),
  });
  if (!res.ok || !(res.headers.get('Content-Type') || '').startsWith('text/event-stream')) {
    let data = {};
    try { data = await res.json(); } catch (e) { /* not JSON: the status says it */ }
    throw new Error(data.error || `${path}: HTTP ${res.status}`);
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '', result = null;
  for (;;) {
    const {value, done} = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), {stream: !done});
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = 'message', data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) name = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      const parsed = JSON.parse(data);
      if (name === 'error') throw new Error(parsed.error || `${path}: error ${parsed.status}`);
      if (name === 'result') result = parsed;
      onEvent(name, parsed);
    }
    if (done) break;
  }
  if (result === null) throw new Error(`${path}: the stream ended without a result`);
  return result;
};

// el('div', {class: 'x', text: 'hi', onclick: f}, [children]): an HTML element.
Explorer.el = function (tag, attrs = {}, children = []) {
  const e = document.createElement(tag);
  Explorer.setAttrs(e, attrs);
  for (const c of children) e.append(c);
  return e;
};

const SVG_NS = 'http://www.w3.org/2000/svg';
// svg('rect', {x: 1, ...}, [children]): an SVG element.
Explorer.svg = function (tag, attrs = {}, children = []) {
  const e = document.createElementNS(SVG_NS, tag);
  Explorer.setAttrs(e, attrs);
  for (const c of children) e.append(c);
  return e;
};

Explorer.setAttrs = function (e, attrs) {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
};

// A labelled form control: <label>text <input ...></label>.
Explorer.field = function (label, input) {
  return Explorer.el('label', {class: 'field'}, [label + ' ', input]);
};

// A <select> of the family's models, hidden when there is only one.
Explorer.modelPicker = function (models) {
  const s = Explorer.el('select', {class: 'model-picker', 'aria-label': 'model'},
      models.map((m) => Explorer.el('option', {value: m.name, text: m.name})));
  const f = Explorer.field('model', s);
  if (models.length < 2) f.hidden = true;
  return {element: f, value: () => s.value, model: () => models.find((m) => m.name === s.value)};
};

// Replaces the children of `box` with an error line (or nothing when err is null).
Explorer.showError = function (box, err) {
  box.replaceChildren();
  if (err) box.append(Explorer.el('p', {class: 'error', role: 'alert', text: err.message || String(err)}));
};

// α in [0, 1] -> a colour from white to deep blue (a sequential scale like matplotlib's Blues).
Explorer.alphaColor = function (a) {
  const t = Math.max(0, Math.min(1, Number.isFinite(a) ? a : 0));
  const lo = [247, 251, 255], hi = [8, 48, 107];
  const c = lo.map((l, i) => Math.round(l + (hi[i] - l) * t));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
};

// A token as shown: spaces visible, empty tokens marked.
Explorer.showToken = function (t) {
  if (t === '') return '∅';
  return String(t).replace(/ /g, '␣');
};

// A heatmap as SVG: rows × cols cells coloured by value(r, c) in [0, 1].
//   opts: {rowLabels, colLabels, value, cell (px), cellWidth (px), left (px of row labels), title(r, c, v),
//          values (print numbers in wide cells), onRow(r | null), onCol(c | null), className}
// Returns {element, cells[r][c], setRow(r | null), setCol(c | null), left}: setRow outlines a row and
// fades the others (hovering a cell or row label calls onRow); setCol outlines a column.
Explorer.heatmap = function (opts) {
  const S = Explorer.svg;
  const rows = opts.rowLabels.length, cols = opts.colLabels.length;
  const cw = opts.cellWidth || opts.cell || 22, ch = opts.cell || 22;
  const charW = 7.2;
  const longest = (labels) => labels.reduce((m, l) => Math.max(m, String(l).length), 0);
  const left = opts.left || Math.ceil(longest(opts.rowLabels) * charW) + 10;
  const rotate = longest(opts.colLabels) > 2 || cw < 14;
  const top = rotate ? Math.ceil(Math.min(longest(opts.colLabels), 24) * charW * 0.72) + 14 : 18;
  const width = left + cols * cw + 4, height = top + rows * ch + 4;
  const root = S('svg', {class: 'heatmap ' + (opts.className || ''), width, height,
    viewBox: `0 0 ${width} ${height}`, role: 'img'});
  const cells = [];
  const rowLabels = [], colLabels = [];
  const labelEvery = Math.max(1, Math.ceil(12 / cw));  // thin columns: every k-th label
  for (let c = 0; c < cols; ++c) {
    const x = left + c * cw + cw / 2;
    const show = c % labelEvery === 0;
    const t = S('text', show && rotate ?
      {x, y: top - 6, class: 'col-label', transform: `rotate(-45 ${x} ${top - 6})`, 'text-anchor': 'start'} :
      {x, y: top - 6, class: 'col-label', 'text-anchor': 'middle'});
    t.textContent = show ? String(opts.colLabels[c]) : '';
    colLabels.push(t);
    root.append(t);
  }
  for (let r = 0; r < rows; ++r) {
    const y = top + r * ch;
    const label = S('text', {x: left - 6, y: y + ch / 2 + 4, class: 'row-label', 'text-anchor': 'end',
      'data-row': r});
    label.textContent = String(opts.rowLabels[r]);
    rowLabels.push(label);
    root.append(label);
    if (opts.onRow) label.addEventListener('mouseenter', () => opts.onRow(r));
    const row = [];
    for (let c = 0; c < cols; ++c) {
      const v = opts.value(r, c);
      const rect = S('rect', {x: left + c * cw, y, width: cw - 1, height: ch - 1, class: 'cell',
        fill: Explorer.alphaColor(v), 'data-row': r, 'data-col': c, 'data-value': v.toFixed(4)});
      const tip = S('title');
      tip.textContent = opts.title ? opts.title(r, c, v) : v.toFixed(3);
      rect.append(tip);
      root.append(rect);
      // Hovering a cell highlights its row or column (whichever the page listens to).
      if (opts.onRow) rect.addEventListener('mouseenter', () => opts.onRow(r));
      if (opts.onCol) rect.addEventListener('mouseenter', () => opts.onCol(c));
      if (opts.values && cw >= 30) {
        const n = S('text', {x: left + c * cw + cw / 2, y: y + ch / 2 + 4, 'text-anchor': 'middle',
          class: 'cell-value' + (v > 0.55 ? ' on-dark' : '')});
        n.textContent = v.toFixed(2);
        root.append(n);
      }
      row.push(rect);
    }
    cells.push(row);
  }
  root.addEventListener('mouseleave', () => {
    if (opts.onRow) opts.onRow(null);
    if (opts.onCol) opts.onCol(null);
  });
  // The outline of the highlighted row or column, drawn above the cells.
  const outline = S('rect', {class: 'outline', visibility: 'hidden', fill: 'none'});
  root.append(outline);
  const fade = (keep) => {
    for (let r = 0; r < rows; ++r) for (let c = 0; c < cols; ++c) {
      cells[r][c].classList.toggle('faded', keep !== null && !keep(r, c));
    }
  };
  const setRow = (r) => {
    fade(r === null ? null : (rr) => rr === r);
    rowLabels.forEach((l, i) => l.classList.toggle('active', i === r));
    if (r === null) return outline.setAttribute('visibility', 'hidden');
    Explorer.setAttrs(outline, {x: left - 1, y: top + r * ch - 1, width: cols * cw + 1, height: ch + 1,
      visibility: 'visible'});
  };
  const setCol = (c) => {  // outlined only: the other columns stay readable beside it
    colLabels.forEach((l, i) => l.classList.toggle('active', i === c));
    if (c === null) return outline.setAttribute('visibility', 'hidden');
    Explorer.setAttrs(outline, {x: left + c * cw - 1, y: top - 1, width: cw + 1, height: rows * ch + 1,
      visibility: 'visible'});
  };
  return {element: root, cells, setRow, setCol, left};  // left: x of the first column
};

// The seeds' picture, live: the input tokens in a row, the output tokens under them; hovering
// output token t (or row t of the heatmap) lights each input token i with α[t][i], its value
// written beneath it. alignment[t][i]: α of output t over input i (rows sum to 1).
//   opts: {srcTokens, tgtTokens, alignment, tgtClass(t) (extra class of an output token),
//          tgtTitle(t)}
// Returns an element holding both rows and the heatmap (output tokens × input tokens).
Explorer.flashlight = function (opts) {
  const {el} = Explorer;
  const srcChips = opts.srcTokens.map((t, i) => el('span', {class: 'token src-token', 'data-index': i}, [
    el('span', {class: 'tok', text: Explorer.showToken(t)}),
    el('span', {class: 'alpha', text: ''}),
  ]));
  const tgtChips = opts.tgtTokens.map((t, i) => el('span', {
    class: 'token tgt-token ' + (opts.tgtClass ? opts.tgtClass(i) : ''), 'data-index': i, tabindex: 0,
    title: opts.tgtTitle ? opts.tgtTitle(i) : undefined,
  }, [el('span', {class: 'tok', text: Explorer.showToken(t)})]));
  let map = null;
  const light = (t) => {
    srcChips.forEach((chip, i) => {
      const a = t === null ? null : (opts.alignment[t] || [])[i] || 0;
      chip.classList.toggle('lit', a !== null);
      chip.style.backgroundColor = a === null ? '' : Explorer.alphaColor(a);
      chip.style.color = a !== null && a > 0.55 ? '#fff' : '';
      chip.dataset.alpha = a === null ? '' : a.toFixed(4);
      chip.lastChild.textContent = a === null ? '' : a.toFixed(2);
    });
    tgtChips.forEach((chip, i) => chip.classList.toggle('active', i === t));
    if (map) map.setRow(t);
  };
  for (const [t, chip] of tgtChips.entries()) {
    chip.addEventListener('mouseenter', () => light(t));
    chip.addEventListener('focus', () => light(t));
    chip.addEventListener('mouseleave', () => light(null));
    chip.addEventListener('blur', () => light(null));
  }
  map = Explorer.heatmap({
    rowLabels: opts.tgtTokens.map(Explorer.showToken),
    colLabels: opts.srcTokens.map(Explorer.showToken),
    value: (r, c) => (opts.alignment[r] || [])[c] || 0,
    title: (r, c, v) => `${Explorer.showToken(opts.tgtTokens[r])} ← ${Explorer.showToken(opts.srcTokens[c])}: α = ${v.toFixed(3)}`,
    onRow: light,
    className: 'attention-map',
  });
  return el('div', {class: 'flashlight'}, [
    el('div', {class: 'token-row'}, [el('span', {class: 'row-name', text: 'input'}), ...srcChips]),
    el('div', {class: 'token-row'}, [el('span', {class: 'row-name', text: 'output'}), ...tgtChips]),
    el('p', {class: 'hint', text: 'Hover an output token (or a row of the map): its input tokens light up with their attention weight α.'}),
    map.element,
  ]);
};
