// The explorer on the seeds' example, for docs/seed-example.md: serves the zh->en attention model
// and its fixed-C peer, opens the Translate page (it opens on 欢迎来北京), translates with both side
// by side, then watches the greedy decode step by step up to the "Beijing" token. Writes
// OUT_DIR/seed-explorer-compare.png and OUT_DIR/seed-explorer-decode.png and prints each decode
// step's output token and c_t formula as the page shows them.
//
// usage: node bench/tools/seed_explorer_shots.mjs ENGRAM_BINARY ATTENTION_DIR FIXED_C_DIR OUT_DIR
// Needs what the web test needs (make deps: Debian's chromium, puppeteer-core in tests/web/) and
// a font with Chinese glyphs for the screenshots (Debian's fonts-wqy-zenhei or fonts-noto-cjk).
//   node bench/tools/seed_explorer_shots.mjs build/engram runs/tatoeba-cedict-zh-en/avg \
//     runs/tatoeba-cedict-zh-en-none/avg docs/img
import path from 'node:path';
import {closeChromium, findChromium, launchChromium, startServer} from '../../tests/web/browser.mjs';

const [bin, attention, fixedC, outDir] = process.argv.slice(2);
if (!bin || !attention || !fixedC || !outDir) {
  console.error('usage: node seed_explorer_shots.mjs ENGRAM_BINARY ATTENTION_DIR FIXED_C_DIR OUT_DIR');
  process.exit(2);
}
const chromium = findChromium();
if (!chromium) throw new Error('chromium is not installed (make deps)');

const {server, listening} = startServer(bin, ['-m', `zh-en=${attention}`, '-m', `zh-en-fixed-c=${fixedC}`]);
process.on('exit', () => { if (server.exitCode === null) server.kill('SIGKILL'); });
const base = await listening;
const browser = await launchChromium(chromium);
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(60_000);
  await page.setViewport({width: 1100, height: 900});
  await page.goto(`${base}/#translate`, {waitUntil: 'load'});
  await page.waitForSelector('#page-translate', {visible: true});
  const src = await page.$eval('#translate-src', (e) => e.value);
  if (src !== '欢迎来北京') throw new Error(`the page opened on "${src}", not the seeds' sentence`);
  await page.$eval('#translate-beam', (e) => { e.value = '5'; });
  await page.click('#translate-compare');
  await page.click('#translate-go');
  await page.waitForFunction(() => ['done', 'error'].includes(document.getElementById('page-translate').dataset.state));
  const columns = await page.$$eval('#translate-compared .compared-model', (c) => c.map((x) =>
    `${x.dataset.model}: ${x.querySelector('.translation').textContent}`));
  console.log(`side by side, beam 5: ${columns.join(' | ')}`);
  await page.screenshot({path: path.join(outDir, 'seed-explorer-compare.png'), fullPage: true});

  await page.click('#translate-watch');
  await page.waitForFunction(() => document.getElementById('decode-play').textContent === 'Pause');
  await page.click('#decode-play');  // pause, then step through what the stream has sent
  await page.waitForFunction(() => !/decoding/.test(document.getElementById('decode-progress').textContent));
  let tokens = await page.$$eval('#decode-out .decode-out', (t) => t.map((x) => x.textContent));
  // The pause may land after a few frames: step on until "Beijing" is the last token written.
  for (let i = 0; i < 40 && !/Beijing/.test(tokens[tokens.length - 1] || ''); ++i) {
    await page.click('#decode-step');
    tokens = await page.$$eval('#decode-out .decode-out', (t) => t.map((x) => x.textContent));
    const formula = await page.$eval('#decode-formula', (e) => e.textContent);
    console.log(`step ${tokens.length}: ${JSON.stringify(tokens[tokens.length - 1])}  ${formula}`);
  }
  if (!/Beijing/.test(tokens[tokens.length - 1] || '')) throw new Error(`no "Beijing" step: ${JSON.stringify(tokens)}`);
  await page.screenshot({path: path.join(outDir, 'seed-explorer-decode.png'), fullPage: true});
} finally {
  await closeChromium(browser);
  server.kill('SIGTERM');
}
