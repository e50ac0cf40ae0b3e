// Drives the realtime web page (web/realtime.html, GET /_genhost/realtime/page) in headless
// Chromium (Debian's chromium, through playwright-core pinned in package.json) as a person
// would: the page joins the session named in its URL, the microphone is a fake device playing a
// WAV file (a spoken question, looped by Chromium), the camera a fake device. It waits until the
// transcript shows the user's question and the avatar's answer, avatar audio arrived and the
// avatar's video frames change; then types a text into the page's text box that calls a
// client_event tool and waits for the event; then clicks Hang up.
//
// Run by the gtest RealtimePage.* (tests/http/realtime_page_test.cpp) through
// run_realtime_page.sh. Environment:
//   GENHOST_PAGE_URL        the page's URL with ?session=ID&key=KEY
//   GENHOST_WAV             the fake microphone's WAV file
//   GENHOST_QUESTION_WORDS  comma-separated words the user's transcript must hold
//   GENHOST_ANSWER_WORD     a word the avatar's answer must hold
//   GENHOST_TOOL_TEXT       the text typed to call the tool
//   GENHOST_CHROMIUM        the browser (default /usr/bin/chromium)
//   GENHOST_STEP_MS         the bound of each wait (default 45000)
// Prints one JSON line with what it saw ({..., "error": {step, message}} when a step failed) and
// exits 1 on a failure; every wait is bounded.
import { chromium } from 'playwright-core';

const env = (name, fallback) => {
  const v = process.env[name];
  if (v === undefined || v === '') {
    if (fallback !== undefined) return fallback;
    throw new Error(`${name} is not set`);
  }
  return v;
};

const out = { steps: {}, console: [], socketText: { received: [], sent: [] } };
const started = Date.now();
const mark = (step) => { out.steps[step] = Date.now() - started; };

let browser;
let page;
let exitCode = 0;
let step = 'setup';
try {
  const pageUrl = env('GENHOST_PAGE_URL');
  const wav = env('GENHOST_WAV');
  const questionWords = env('GENHOST_QUESTION_WORDS').split(',').map((w) => w.trim().toLowerCase()).filter(Boolean);
  const answerWord = env('GENHOST_ANSWER_WORD').toLowerCase();
  const toolText = env('GENHOST_TOOL_TEXT');
  const stepMs = Number(env('GENHOST_STEP_MS', '45000'));

  step = 'launch';
  browser = await chromium.launch({
    executablePath: env('GENHOST_CHROMIUM', '/usr/bin/chromium'),
    headless: true,
    timeout: 30000,
    args: [
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${wav}`,
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
  out.browserVersion = browser.version();
  page = await browser.newPage();
  page.setDefaultTimeout(stepMs);
  page.on('console', (m) => { if (out.console.length < 50) out.console.push(`${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => { if (out.console.length < 50) out.console.push(`pageerror: ${e.message}`); });
  page.on('websocket', (ws) => {
    ws.on('framereceived', (f) => {
      if (typeof f.payload === 'string' && out.socketText.received.length < 200) {
        out.socketText.received.push([Date.now() - started, f.payload.slice(0, 300)]);
      }
    });
    ws.on('framesent', (f) => {
      if (typeof f.payload === 'string') out.socketText.sent.push([Date.now() - started, f.payload.slice(0, 300)]);
    });
  });

  step = 'load';
  const response = await page.goto(pageUrl, { waitUntil: 'load' });
  out.page = { status: response.status(), contentType: response.headers()['content-type'] };
  mark('loaded');

  step = 'join';
  await page.waitForFunction(() => window.genhostRealtime && ['joined', 'ended', 'error'].includes(window.genhostRealtime.status));
  const afterJoin = await page.evaluate(() => window.genhostRealtime.status);
  if (afterJoin !== 'joined') throw new Error(`the page did not join: ${afterJoin}`);
  mark('joined');

  // The spoken question, then the answer that holds the fact, the avatar's audio and video.
  step = 'question';
  await page.waitForFunction((words) => window.genhostRealtime.transcript.some(
    (e) => e.role === 'user' && words.every((w) => e.text.toLowerCase().split(/[^a-z0-9']+/).includes(w))), questionWords);
  mark('question');
  step = 'answer';
  await page.waitForFunction((word) => window.genhostRealtime.transcript.some(
    (e) => e.role === 'assistant' && e.text.toLowerCase().split(/[^a-z0-9']+/).includes(word)), answerWord);
  mark('answer');
  step = 'media';
  await page.waitForFunction(() => {
    const s = window.genhostRealtime;
    return s.audioSeconds > 1 && new Set(s.lastFrameHashes).size >= 3 && s.framesDrawn > 0;
  });
  mark('media');
  out.beforeTool = await page.evaluate(() => JSON.parse(JSON.stringify(window.genhostRealtime)));

  // The tool, through the page's text box.
  step = 'tool';
  await page.fill('#say', toolText);
  await page.click('#send');
  mark('typed');
  await page.waitForFunction(() => window.genhostRealtime.clientEvents.length > 0);
  mark('clientEvent');
  // The answer that follows the tool's result ("Done.").
  await page.waitForTimeout(1500);

  step = 'hangup';
  out.beforeHangup = await page.evaluate(() => JSON.parse(JSON.stringify(window.genhostRealtime)));
  await page.click('#hangup');
  await page.waitForFunction(() => window.genhostRealtime.status === 'ended', null, { timeout: 10000 });
  mark('ended');
  step = 'done';
} catch (e) {
  out.error = { step, message: String(e && e.message ? e.message : e).slice(0, 2000) };
  exitCode = 1;
}
if (page) {
  try {
    out.final = await page.evaluate(() => JSON.parse(JSON.stringify(window.genhostRealtime)), null);
  } catch (e) {
    out.final = { unreadable: String(e.message || e) };
  }
}
if (browser) await browser.close().catch(() => {});
console.log(JSON.stringify(out));
process.exit(exitCode);
