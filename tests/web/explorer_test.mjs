// The web explorer in a real browser: starts `engram serve` on the golden models
// (tests/golden/models/), drives Debian's headless Chromium through puppeteer-core and checks
// what a learner would see. Translate: typing a sentence gives the golden translation, the
// heatmap has one cell per (target, source) token pair holding the reply's α, and hovering a
// target token lights the source tokens with exactly that token's α (and hovering another one
// changes them). bAbI, NTM, pointer, copy (pointer-generator) and sentiment tree: each page gives
// its golden answer and draws one cell / mark per value of the reply. Every page loads under
// the server's Content-Security-Policy with no violation and no script error. Screenshots of
// every page go to OUT_DIR. The server must exit 0 on SIGTERM (under ASan: no leak report).
//
// usage: node explorer_test.mjs ENGRAM_BINARY SOURCE_DIR OUT_DIR
// The whole run is bounded (kDeadlineMs): it fails, never hangs. A missing chromium or
// puppeteer-core is a failure that says to run `make deps`.
import fs from 'node:fs';
import path from 'node:path';
import {closeChromium, findChromium, launchChromium, startServer as spawnServer} from './browser.mjs';

const kDeadlineMs = 240_000;  // the ASan server is a few times slower than the release one
const [bin, sourceDir, outDir] = process.argv.slice(2);
if (!bin || !sourceDir || !outDir) {
  console.error('usage: node explorer_test.mjs ENGRAM_BINARY SOURCE_DIR OUT_DIR');
  process.exit(2);
}

let server = null, browser = null, failed = 0, passed = 0;
const log = (...a) => console.log('explorer_test:', ...a);

async function cleanup() {
  if (browser) {
    const b = browser;
    browser = null;
    await closeChromium(b);  // bounded; removes the profile a failing run would leave in /tmp
  }
  if (server && server.exitCode === null) server.kill('SIGKILL');
}

let failing = false;
async function fail(message) {
  if (failing) return new Promise(() => {});  // the first failure is reported and exits
  failing = true;
  console.error(`explorer_test: FAIL: ${message}`);
  await cleanup();
  process.exit(1);
}

const deadline = setTimeout(() => fail(`not finished within ${kDeadlineMs / 1000} s`), kDeadlineMs);
// However the test ends (ctest's timeout sends SIGTERM), neither the server nor Chromium outlives it.
process.on('exit', () => {
  try { browser?.process()?.kill('SIGKILL'); } catch (e) { /* gone */ }
  if (server && server.exitCode === null) server.kill('SIGKILL');
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => fail(`stopped by ${sig}`));

function check(cond, what) {
  if (failing) return;  // stopping: the pages are going away under the checks
  if (cond) {
    ++passed;
  } else {
    ++failed;
    console.error(`explorer_test: check failed: ${what}`);
  }
}

// The first INPUT<TAB>EXPECTED lines of a golden model's cases.tsv (engram's recorded outputs).
function goldenCases(family) {
  const text = fs.readFileSync(path.join(sourceDir, 'tests/golden/models', family, 'cases.tsv'), 'utf8');
  return text.split('\n').filter((l) => l.includes('\t')).map((l) => l.split('\t'));
}

// Starts the server on the golden models; resolves to its base URL once it prints its address.
function startServer() {
  const g = path.join(sourceDir, 'tests/golden/models');
  const args = ['--max-wait-ms', '0'];
  for (const f of ['seq2seq', 'memn2n', 'ntm', 'pointer', 'pointer_generator', 'tree']) args.push('-m', path.join(g, f));
  args.push('-m', path.join(sourceDir, 'tests/web/models/speech'));  // no golden speech model: tests/web/models/README.md
  const started = spawnServer(bin, args);
  server = started.server;
  return started.listening;
}

async function post(base, route, body) {
  const res = await fetch(base + route, {method: 'POST', body: JSON.stringify(body), headers: {'Content-Type': 'application/json'}});
  if (!res.ok) throw new Error(`${route}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

const near = (a, b, tol = 1e-4) => Math.abs(a - b) <= tol;
const argmax = (row) => row.reduce((best, v, i) => (v > row[best] ? i : best), 0);

// Goes to a page, fills its fields ({selector: text}), submits it and waits for the answer.
async function runPage(page, base, id, fields, submit) {
  await page.goto(`${base}/#${id}`, {waitUntil: 'load'});
  await page.waitForSelector(`#page-${id}`, {visible: true, timeout: 30_000});
  for (const [selector, value] of Object.entries(fields)) {
    await page.$eval(selector, (e) => { e.value = ''; });
    await page.type(selector, String(value));
  }
  await page.click(submit);
  await page.waitForFunction((pid) => ['done', 'error'].includes(document.getElementById(`page-${pid}`).dataset.state),
      {timeout: 60_000}, id);
  const state = await page.$eval(`#page-${id}`, (e) => e.dataset.state);
  const error = await page.$eval(`#page-${id}`, (e) => e.querySelector('.error')?.textContent || '');
  check(state === 'done', `${id}: the page shows an answer, not the error "${error}"`);
}

// The data-value attributes of the cells under `selector`, as numbers [row][col].
const cellValues = (page, selector) => page.$$eval(`${selector} rect.cell`, (cells) => {
  const rows = [];
  for (const c of cells) (rows[Number(c.dataset.row)] ||= [])[Number(c.dataset.col)] = Number(c.dataset.value);
  return rows;
});

function sameMatrix(got, want, what) {
  const ok = got.length === want.length && want.every((row, r) => got[r] && got[r].length === row.length &&
    row.every((v, c) => near(got[r][c], v)));
  check(ok, `${what}: the heatmap's cells hold the reply's values (${got.length} rows drawn, ${want.length} in the reply)`);
}

async function testTranslate(page, base) {
  const [sentence, expected] = goldenCases('seq2seq')[0];
  await runPage(page, base, 'translate', {'#translate-src': sentence, '#translate-beam': 1, '#translate-nbest': 1},
      '#translate-go');
  const shown = await page.$eval('#translate-hyps .translation', (e) => e.textContent);
  check(shown === expected, `translate: "${sentence}" shows "${shown}", the golden translation is "${expected}"`);
  const reply = await post(base, '/v1/translate', {src: [sentence], beam: 1, n_best: 1, alignments: true});
  const hyp = reply.translations[0][0];
  const cells = await page.$$eval('#translate-picture rect.cell', (c) => c.length);
  check(cells === hyp.tgt_tokens.length * hyp.src_tokens.length,
      `translate: ${cells} heatmap cells for ${hyp.tgt_tokens.length} target × ${hyp.src_tokens.length} source tokens`);
  sameMatrix(await cellValues(page, '#translate-picture'), hyp.alignment, 'translate');
  const fills = await page.$$eval('#translate-picture rect.cell', (c) => new Set(c.map((x) => x.getAttribute('fill'))).size);
  check(fills > 2, `translate: the cells are coloured by α (${fills} distinct colours)`);

  // Hover: before, no source token is lit; hovering target token t lights each source token i
  // with α[t][i], the darkest at the argmax; another target token changes the picture.
  const sourceAlphas = () => page.$$eval('#translate-picture .src-token', (s) => s.map((x) => x.dataset.alpha || ''));
  const before = await sourceAlphas();
  check(before.length === hyp.src_tokens.length && before.every((a) => a === ''),
      'translate: before any hover the source tokens are not lit');
  // Two target tokens that attend to different source tokens (the first, and the first that differs).
  const t1 = 0;
  const t2 = hyp.alignment.findIndex((row) => argmax(row) !== argmax(hyp.alignment[t1]));
  check(t2 > 0, 'translate: two target tokens attend to different source tokens (the model aligns)');
  let firstShot = null;
  for (const t of [t1, t2 > 0 ? t2 : 1]) {
    await page.hover(`#translate-picture .tgt-token[data-index="${t}"]`);
    const lit = (await sourceAlphas()).map(Number);
    check(lit.length === hyp.alignment[t].length && lit.every((a, i) => near(a, hyp.alignment[t][i])),
        `translate: hovering target token ${t} ("${hyp.tgt_tokens[t]}") lights the source tokens with its α row`);
    const colours = await page.$$eval('#translate-picture .src-token', (s) => s.map((x) => getComputedStyle(x).backgroundColor));
    const darkest = colours.map((c) => c.match(/\d+/g).map(Number).reduce((a, b) => a + b, 0));
    check(argmax(darkest.map((d) => -d)) === argmax(hyp.alignment[t]),
        `translate: the darkest source token under target token ${t} is its most attended one (${argmax(hyp.alignment[t])})`);
    const faded = await page.$$eval('#translate-picture rect.cell.faded', (c) => c.length);
    check(faded === (hyp.tgt_tokens.length - 1) * hyp.src_tokens.length,
        `translate: hovering fades every heatmap row but the hovered one (${faded} faded cells)`);
    if (firstShot === null) firstShot = lit;
  }
  const second = (await sourceAlphas()).map(Number);
  check(second.some((a, i) => !near(a, firstShot[i], 1e-3)), 'translate: hovering another target token changes the lit source tokens');
  await page.screenshot({path: path.join(outDir, 'translate.png'), fullPage: true});
  // Hovering a heatmap cell of row t1 lights the source tokens with that row too.
  await page.hover(`#translate-picture rect.cell[data-row="${t1}"][data-col="0"]`);
  const byRow = (await sourceAlphas()).map(Number);
  check(byRow.every((a, i) => near(a, hyp.alignment[t1][i])), 'translate: hovering a heatmap row lights the source tokens with its α');
  await page.mouse.move(1, 1);
  check((await sourceAlphas()).every((a) => a === ''), 'translate: moving away turns the light off');

  // Beam 4, n-best 3: three hypotheses as the route ranks them; choosing the second draws its α.
  await page.$eval('#translate-beam', (e) => { e.value = ''; });
  await page.type('#translate-beam', '4');
  await page.$eval('#translate-nbest', (e) => { e.value = ''; });
  await page.type('#translate-nbest', '3');
  await page.$eval('#page-translate', (e) => { delete e.dataset.state; });
  await page.click('#translate-go');
  await page.waitForFunction(() => document.getElementById('page-translate').dataset.state === 'done', {timeout: 60_000});
  const nbest = (await post(base, '/v1/translate', {src: [sentence], beam: 4, n_best: 3, alignments: true})).translations[0];
  const listed = await page.$$eval('#translate-hyps .translation', (t) => t.map((x) => x.textContent));
  check(JSON.stringify(listed) === JSON.stringify(nbest.map((h) => h.tgt)), `translate: n-best 3 lists ${JSON.stringify(listed)}`);
  await page.click('#translate-hyps li:nth-child(2)');
  sameMatrix(await cellValues(page, '#translate-picture'), nbest[1].alignment, 'translate, the second hypothesis');

  // Watching the decoder: the greedy stream replayed a token at a time. Paused and stepped, each
  // step shows one more output token, the α bars and the c_t formula of that step's α row (the
  // route's alignment row); played on, it reaches the whole translation.
  await page.click('#translate-watch');
  await page.waitForSelector('#translate-decode:not([hidden])', {timeout: 30_000});
  await page.waitForFunction(() => document.getElementById('decode-play').textContent === 'Pause', {timeout: 30_000});
  await page.click('#decode-play');  // pause
  await page.waitForFunction(() => !/decoding/.test(document.getElementById('decode-progress').textContent), {timeout: 60_000});
  const shownBefore = await page.$$eval('#decode-out .decode-out', (t) => t.length);
  await page.click('#decode-step');
  const steps = await page.$$eval('#decode-out .decode-out', (t) => t.map((x) => x.textContent));
  check(steps.length === shownBefore + 1, `decode: a step adds one output token (${shownBefore} -> ${steps.length})`);
  const last = steps.length - 1;
  const terms = await page.$$eval('#decode-formula .term', (x) => x.map((e) => Number(e.dataset.alpha)));
  check(terms.length === hyp.src_tokens.length && terms.every((a, i) => near(a, hyp.alignment[last][i])),
      `decode: step ${last + 1}'s formula has one term per source token with the route's α row (${JSON.stringify(terms)})`);
  const bars = await page.$$eval('#decode-src .decode-src', (x) => x.map((e) => Number(e.dataset.alpha)));
  check(bars.every((a, i) => near(a, hyp.alignment[last][i])), 'decode: the α bars over the source tokens are the step\'s α row');
  const formula = await page.$eval('#decode-formula', (e) => e.textContent);
  check(formula.startsWith(`c${last + 1} = `) && formula.includes('·h1'), `decode: the formula reads "${formula}"`);
  await page.screenshot({path: path.join(outDir, 'translate-decode-step.png'), fullPage: true});
  await page.click('#decode-play');  // play on to the end
  await page.waitForFunction(() => document.getElementById('page-translate').dataset.decode === 'done', {timeout: 60_000});
  const written = await page.$$eval('#decode-out .decode-out', (x) => x.map((e) => e.textContent));
  check(written.length === hyp.tgt_tokens.length, `decode: the animation writes all ${hyp.tgt_tokens.length} tokens (${written.length})`);
  await page.screenshot({path: path.join(outDir, 'translate-decode.png'), fullPage: true});
}

// Two seq2seq models side by side, one with attention and one without (the fixed-C baseline),
// and a Chinese -> English model's page opening on the seeds' sentence. The page is shown the
// golden model under two zh-en names (its /v1/models and /v1/translate requests intercepted);
// the "fixed-C" one's replies lose their α rows, as a model with attention: none answers.
async function testCompare(browser, base) {
  const page = await browser.newPage();
  page.setDefaultTimeout(30_000);
  await page.setViewport({width: 1200, height: 900});
  await page.setRequestInterception(true);
  const seq = (await (await fetch(base + '/v1/models')).json()).models.find((m) => m.family === 'seq2seq');
  const names = ['zh-en-attention', 'zh-en-fixed-c'];
  const bodies = [];  // every /v1/translate body the page sent
  page.on('request', async (req) => {
    const route = new URL(req.url()).pathname;
    if (route === '/v1/models') {
      return req.respond({status: 200, contentType: 'application/json',
        body: JSON.stringify({models: names.map((name) => ({...seq, name}))})});
    }
    if (route === '/v1/translate' && req.method() === 'POST') {
      const body = JSON.parse(req.postData());
      bodies.push({...body});
      const fixed = body.model === names[1];
      body.model = seq.name;
      const res = await fetch(base + route, {method: 'POST', body: JSON.stringify(body), headers: {'Content-Type': 'application/json'}});
      const data = await res.json();
      if (fixed && data.translations) for (const hyps of data.translations) for (const h of hyps) h.alignment = h.alignment.map(() => []);
      return req.respond({status: res.status, contentType: 'application/json', body: JSON.stringify(data)});
    }
    return req.continue();
  });
  await page.goto(`${base}/#translate`, {waitUntil: 'load'});
  await page.waitForSelector('#page-translate', {visible: true});
  const opened = await page.$eval('#translate-src', (e) => e.value);
  check(opened === '欢迎来北京', `translate: with a zh model loaded the page opens on the seeds' sentence ("${opened}")`);
  const [sentence, expected] = goldenCases('seq2seq')[0];
  await page.$eval('#translate-src', (e) => { e.value = ''; });
  await page.type('#translate-src', sentence);
  await page.click('#translate-compare');
  await page.click('#translate-go');
  await page.waitForFunction(() => ['done', 'error'].includes(document.getElementById('page-translate').dataset.state));
  const columns = await page.$$eval('#translate-compared .compared-model', (c) => c.map((x) => ({
    name: x.dataset.model, text: x.querySelector('.translation').textContent,
    cells: x.querySelectorAll('rect.cell').length, hint: (x.querySelector('.hint') || {}).textContent || ''})));
  check(columns.length === 2 && columns.every((c, i) => c.name === names[i] && c.text === expected),
      `translate: all models side by side, each with its translation: ${JSON.stringify(columns.map((c) => [c.name, c.text]))}`);
  check(columns.length === 2 && columns[0].cells > 0 && columns[1].cells === 0 && /fixed vector C/.test(columns[1].hint),
      'translate: the attention model shows its heatmap, the fixed-C model says it has none');
  // An empty length-penalty field leaves each model its own (its run's decode: section): no
  // "alpha" in the request; a typed value is sent.
  check(bodies.length === 3 && bodies.every((b) => !('alpha' in b)),
      `translate: an empty length penalty sends no alpha: ${JSON.stringify(bodies)}`);
  await page.screenshot({path: path.join(outDir, 'translate-compare.png'), fullPage: true});
  await page.type('#translate-alpha', '0.6');
  await page.$eval('#page-translate', (e) => { delete e.dataset.state; });
  await page.click('#translate-go');
  await page.waitForFunction(() => ['done', 'error'].includes(document.getElementById('page-translate').dataset.state));
  check(bodies.length === 6 && bodies.slice(3).every((b) => b.alpha === 0.6),
      `translate: a typed length penalty is sent: ${JSON.stringify(bodies.slice(3))}`);
  await page.close();
}

async function testBabi(page, base) {
  const [line, expected] = goldenCases('memn2n')[0];
  const sentences = line.match(/[^.?]+[.?]/g).map((s) => s.trim());
  const question = sentences.pop();
  await runPage(page, base, 'babi', {'#babi-story': sentences.join('\n'), '#babi-question': question}, '#babi-go');
  const shown = await page.$eval('#babi-answer .answer-word', (e) => e.textContent);
  check(shown === expected, `babi: the answer shown is "${shown}", the golden one "${expected}"`);
  const reply = await post(base, '/v1/babi', {story: sentences, question});
  // Rows: sentences; columns: hops.
  const want = reply.story.map((_, s) => reply.hops.map((hop) => hop[s]));
  sameMatrix(await cellValues(page, '#babi-picture'), want, 'babi (sentences × hops)');
  const labels = await page.$$eval('#babi-picture .row-label', (l) => l.map((x) => x.textContent));
  check(JSON.stringify(labels) === JSON.stringify(reply.story), 'babi: the rows are the story\'s sentences');
  // Hovering hop 2 outlines its column and marks its label.
  await page.hover('#babi-picture rect.cell[data-row="0"][data-col="1"]');
  const outlined = await page.$eval('#babi-picture .outline', (o) => o.getAttribute('visibility') === 'visible' &&
      Number(o.getAttribute('x')) < Number(document.querySelector('#babi-picture rect.cell[data-col="1"]').getAttribute('x')) + 1);
  const label = await page.$eval('#babi-picture .col-label.active', (l) => l.textContent).catch(() => '');
  check(outlined && label === 'hop 2', `babi: hovering hop 2 outlines its column (label "${label}")`);
  await page.mouse.move(1, 1);
  await page.screenshot({path: path.join(outDir, 'babi.png'), fullPage: true});
}

async function testNtm(page, base) {
  const [line, expected] = goldenCases('ntm')[1];  // "LENGTH REPEAT SEED"
  const [length, , seed] = line.split(' ').map(Number);
  await runPage(page, base, 'ntm', {'#ntm-length': length, '#ntm-seed': seed}, '#ntm-go');
  const wrong = Number(expected.match(/(\d+) wrong bits/)[1]);
  const shown = await page.$eval('#ntm-summary', (e) => Number(e.dataset.errors));
  check(shown === wrong, `ntm: ${shown} wrong bits shown, the golden run has ${wrong}`);
  const reply = await post(base, '/v1/ntm', {length, seed});
  const panels = await page.$$eval('#ntm-picture figure.panel', (f) => f.map((x) => x.querySelector('figcaption').textContent));
  const heads = reply.write_weightings.length + reply.read_weightings.length;
  check(panels.length === 3 + 2 * heads, `ntm: panels ${JSON.stringify(panels)}: input, target, output and two per head`);
  const T = reply.input.length;
  // The write weighting panel: slots as rows, time as columns.
  const writeIndex = panels.indexOf('write weighting');
  check(writeIndex >= 0, 'ntm: a write weighting panel');
  const write = await page.$$eval('#ntm-picture figure.panel', (f, i) => [...f[i].querySelectorAll('rect.cell')].map(
      (c) => [Number(c.dataset.row), Number(c.dataset.col), Number(c.dataset.value)]), writeIndex);
  const N = reply.write_weightings[0][0].length;
  check(write.length === N * T, `ntm: ${write.length} write weighting cells for ${N} slots × ${T} steps`);
  check(write.every(([n, t, v]) => near(v, reply.write_weightings[0][t][n])), 'ntm: the write weighting cells hold the reply\'s weights');
  // Hovering a step highlights it in every panel.
  await page.hover(`#ntm-picture rect.cell[data-row="0"][data-col="${T - 1}"]`);
  const active = await page.$$eval('#ntm-picture svg', (s, t) => s.filter((x) =>
    x.querySelector('.outline').getAttribute('visibility') === 'visible' &&
    x.querySelector('.col-label.active')?.textContent === String(t)).length, T - 1);
  check(active === panels.length, `ntm: hovering step ${T - 1} highlights it in all ${panels.length} panels (${active})`);
  await page.mouse.move(1, 1);
  await page.screenshot({path: path.join(outDir, 'ntm.png'), fullPage: true});
}

async function testPointer(page, base) {
  const [line, expected] = goldenCases('pointer')[0];  // numbers -> 1-based order
  const points = line.split(' ').map(Number);
  await runPage(page, base, 'pointer', {'#pointer-points': line}, '#pointer-go');
  const order = expected.split(' ').map((i) => Number(i) - 1).join(' → ');
  const shown = await page.$eval('#pointer-summary', (e) => e.textContent);
  check(shown.startsWith(`order: ${order} `), `pointer: "${shown}" shows the golden order ${order}`);
  const reply = await post(base, '/v1/pointer', {points});
  sameMatrix(await cellValues(page, '#pointer-picture'), reply.attention, 'pointer (steps × points)');
  // Hovering step 0 colours every bar by its α: the pointed-at bar darkest.
  await page.hover('#pointer-picture rect.cell[data-row="0"][data-col="0"]');
  const bars = await page.$$eval('#pointer-picture .bar', (b) => b.map((x) => [Number(x.dataset.alpha),
    getComputedStyle(x).fill.match(/\d+/g).map(Number).reduce((a, c) => a + c, 0)]));
  check(bars.length === points.length && bars.every(([a], i) => near(a, reply.attention[0][i])),
      'pointer: hovering step 0 gives every bar its α');
  const darkest = argmax(bars.map(([, sum]) => -sum));
  check(darkest === reply.output[0], `pointer: the darkest bar under step 0 is the one it points at (${darkest})`);
  await page.screenshot({path: path.join(outDir, 'pointer.png'), fullPage: true});
}

async function testSummarize(page, base) {
  const [article, expected] = goldenCases('pointer_generator')[0];
  await runPage(page, base, 'summarize', {'#summarize-article': article, '#summarize-beam': 1}, '#summarize-go');
  const shown = await page.$eval('#summarize-summary', (e) => e.textContent);
  check(shown === expected, `copy: the summary shown is "${shown}", the golden one "${expected}"`);
  const reply = await post(base, '/v1/summarize', {article, beam: 1});
  const marks = await page.$$eval('#summarize-picture .tgt-token', (t) => t.map((x) => x.classList.contains('copied')));
  check(JSON.stringify(marks) === JSON.stringify(reply.tokens.map((t) => t.copied)),
      'copy: each summary token is marked copied or generated as the reply\'s p_gen says');
  sameMatrix(await cellValues(page, '#summarize-picture'), reply.tokens.map((t) => t.attention), 'copy (summary × article)');
  await page.hover('#summarize-picture .tgt-token[data-index="0"]');
  await page.screenshot({path: path.join(outDir, 'copy.png'), fullPage: true});
}

async function testSentiment(page, base) {
  const [text, expected] = goldenCases('tree').find(([t]) => !t.startsWith('('));
  await runPage(page, base, 'sentiment', {'#sentiment-text': text}, '#sentiment-go');
  const reply = await post(base, '/v1/sentiment', {text});
  const shown = await page.$eval('#sentiment-summary', (e) => e.textContent);
  check(expected.startsWith(`${reply.label} ${reply.name} (`) && shown.startsWith(reply.name),
      `sentiment: "${shown}" names the golden root class of "${expected.split('  ')[0]}"`);
  const nodes = await page.$$eval('#sentiment-picture circle.tree-node', (c) => c.map((x) => Number(x.dataset.label)));
  check(nodes.length === reply.nodes.length, `sentiment: ${nodes.length} nodes drawn for ${reply.nodes.length} in the tree`);
  const labels = await page.$$eval('#sentiment-picture circle.tree-node', (c) => c.map((x) => [Number(x.dataset.index), Number(x.dataset.label)]));
  check(labels.every(([i, l]) => reply.nodes[i].label === l), 'sentiment: every node carries its predicted class');
  await page.screenshot({path: path.join(outDir, 'sentiment.png'), fullPage: true});
}

async function testSpeech(page, base) {
  const wav = path.join(sourceDir, 'tests/golden/audio/synth8k.wav');
  await page.goto(`${base}/#speech`, {waitUntil: 'load'});
  await page.waitForSelector('#page-speech', {visible: true});
  const input = await page.$('#speech-file');
  await input.uploadFile(wav);
  await page.click('#speech-go');
  await page.waitForFunction(() => ['done', 'error'].includes(document.getElementById('page-speech').dataset.state),
      {timeout: 60_000});
  const state = await page.$eval('#page-speech', (e) => e.dataset.state);
  check(state === 'done', 'speech: the uploaded WAV is transcribed');
  const reply = await post(base, '/v1/transcribe', {wav_base64: fs.readFileSync(wav).toString('base64')});
  const shown = await page.$eval('#speech-summary', (e) => e.textContent);
  check(shown.startsWith(`text: ${reply.text || '(nothing)'} `), `speech: "${shown}" is the reply's text "${reply.text}"`);
  sameMatrix(await cellValues(page, '#speech-picture'), reply.attention, 'speech (tokens × encoder steps)');
  const T = reply.spectrogram.length, M = reply.spectrogram[0].length;
  const spec = await page.$$eval('#speech-picture svg.spectrogram rect:not(.band)', (r) => r.length);
  check(spec === T * M, `speech: the spectrogram has ${spec} cells for ${T} frames × ${M} mel bins`);
  // Hovering token 0 lays its α over the spectrogram: the most opaque band is its most attended step.
  await page.hover('#speech-picture rect.cell[data-row="0"][data-col="0"]');
  const bands = await page.$$eval('#speech-picture .band', (b) => b.map((x) => Number(x.getAttribute('fill-opacity'))));
  check(bands.length === reply.attention[0].length && argmax(bands) === argmax(reply.attention[0]) && Math.max(...bands) > 0,
      `speech: hovering the first token shades the spectrogram where it listened (step ${argmax(reply.attention[0])})`);
  await page.screenshot({path: path.join(outDir, 'speech.png'), fullPage: true});
}

async function main() {
  fs.mkdirSync(outDir, {recursive: true});
  const chromium = findChromium();
  if (!chromium) await fail('chromium is not installed (make deps installs Debian\'s chromium; ENGRAM_CHROMIUM names another)');
  const base = await startServer().catch((e) => fail(e.message));
  log(`server at ${base}, browser ${chromium}`);

  // The explorer's files: their types and the security policy.
  for (const [route, type] of [['/', 'text/html'], ['/static/common.js', 'text/javascript'], ['/static/style.css', 'text/css']]) {
    const res = await fetch(base + route);
    check(res.status === 200 && (res.headers.get('content-type') || '').startsWith(type), `GET ${route} is ${type}`);
    check((res.headers.get('content-security-policy') || '').includes("default-src 'self'"), `GET ${route} has the CSP`);
  }
  check((await fetch(base + '/static/..%2FCMakeLists.txt')).status === 404, 'a path outside web/ is 404');

  browser = await launchChromium(chromium).catch((e) => fail(e.message));
  const page = await browser.newPage();
  page.setDefaultTimeout(30_000);
  await page.setViewport({width: 1200, height: 900});
  const problems = [];
  page.on('pageerror', (e) => problems.push(`script error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  await page.evaluateOnNewDocument(() => {
    document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`));
  });

  await page.goto(base + '/', {waitUntil: 'load'});
  await page.waitForSelector('body[data-ready="true"]', {timeout: 30_000});
  const menu = await page.$$eval('#nav a', (a) => a.map((x) => x.dataset.page));
  check(JSON.stringify(menu) === JSON.stringify(['translate', 'babi', 'ntm', 'pointer', 'summarize', 'sentiment', 'speech']),
      `the menu lists a page per loaded family: ${JSON.stringify(menu)}`);

  for (const [name, fn] of [['translate', testTranslate], ['babi', testBabi], ['ntm', testNtm], ['pointer', testPointer],
    ['copy', testSummarize], ['sentiment', testSentiment], ['speech', testSpeech]]) {
    try {
      await fn(page, base);
    } catch (e) {
      check(false, `${name}: ${e.stack || e.message}`);
      await page.screenshot({path: path.join(outDir, `${name}-failed.png`), fullPage: true}).catch(() => {});
    }
  }
  check(problems.length === 0, `no script error or CSP violation: ${JSON.stringify(problems)}`);
  await testCompare(browser, base).catch((e) => check(false, `compare: ${e.stack || e.message}`));

  // A page only for the loaded families: the same server's /v1/models with the memn2n model alone.
  const only = await browser.newPage();
  await only.setRequestInterception(true);
  const models = await (await fetch(base + '/v1/models')).json();
  only.on('request', (req) => {
    if (new URL(req.url()).pathname !== '/v1/models') return req.continue();
    req.respond({status: 200, contentType: 'application/json',
      body: JSON.stringify({models: models.models.filter((m) => m.family === 'memn2n')})});
  });
  await only.goto(base + '/#translate', {waitUntil: 'load'});
  await only.waitForSelector('body[data-ready="true"]');
  const onlyMenu = await only.$$eval('#nav a', (a) => a.map((x) => x.dataset.page));
  const onlyShown = await only.$$eval('section.page:not([hidden])', (s) => s.map((x) => x.id));
  check(JSON.stringify(onlyMenu) === '["babi"]' && JSON.stringify(onlyShown) === '["page-babi"]',
      `with only a memn2n model loaded the menu is ${JSON.stringify(onlyMenu)} and #translate shows ${JSON.stringify(onlyShown)}`);
  await only.close();

  await closeChromium(browser);
  browser = null;
  // SIGTERM: the server finishes and exits 0 (under ASan, a leak would make it non-zero).
  const code = await new Promise((resolve) => {
    server.once('exit', (c, sig) => resolve(c === null ? sig : c));
    server.kill('SIGTERM');
  });
  check(code === 0, `engram serve exits 0 on SIGTERM (got ${code})`);
  clearTimeout(deadline);
  log(`screenshots in ${outDir}`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

main().catch((e) => fail(e.stack || e.message));
