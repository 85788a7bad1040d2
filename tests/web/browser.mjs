// What the explorer's test (explorer_test.mjs) and bench/tools/seed_explorer_shots.mjs share:
// finding Chromium, starting `engram serve` on a free port, launching headless Chromium.
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// ENGRAM_CHROMIUM when set (and then only it), else Debian's chromium; undefined when none.
export function findChromium() {
  const candidates = process.env.ENGRAM_CHROMIUM ? [process.env.ENGRAM_CHROMIUM] : ['/usr/bin/chromium', '/usr/bin/chromium-browser'];
  return candidates.find((p) => fs.existsSync(p));
}

// Starts `BIN serve --port 0 ARGS...`; its standard error goes to ours. Returns the process and a
// promise of its base URL, resolved when it prints "listening on", rejected if it exits first or
// prints nothing within 90 s.
export function startServer(bin, args) {
  const server = spawn(bin, ['serve', '--port', '0', ...args], {stdio: ['ignore', 'pipe', 'pipe']});
  let stderr = '';
  server.stderr.on('data', (d) => { stderr += d; process.stderr.write(d); });
  const listening = new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('no "listening on" line from engram serve in 90 s')), 90_000);
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    server.on('exit', (code) => { clearTimeout(timer); reject(new Error(`engram serve exited ${code} before listening: ${stderr}`)); });
  });
  return {server, listening};
}

const profiles = new WeakMap();  // browser -> its profile directory

// puppeteer-core from tests/web/node_modules (make deps runs npm ci there), launched headless on
// CHROMIUM with a fresh profile (closeChromium removes it).
export async function launchChromium(chromium) {
  let puppeteer;
  try {
    puppeteer = (await import('puppeteer-core')).default;
  } catch (e) {
    throw new Error(`puppeteer-core is not installed in tests/web/node_modules (make deps runs npm ci there): ${e.message}`);
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    // CI runs as root: no sandbox. --headless as the Debian package expects it.
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
      '--disable-extensions', '--disable-background-networking', `--user-data-dir=${profile}`],
    timeout: 60_000,
    protocolTimeout: 60_000,
  });
  profiles.set(browser, profile);
  return browser;
}

// Closes a browser of launchChromium and removes its profile. close() waits for Chromium; one
// stuck for 10 s is killed.
export async function closeChromium(browser) {
  await Promise.race([browser.close().catch(() => {}), new Promise((r) => setTimeout(r, 10_000))]);
  try { browser.process()?.kill('SIGKILL'); } catch (e) { /* already gone */ }
  fs.rmSync(profiles.get(browser), {recursive: true, force: true});
}
