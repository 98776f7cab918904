// tests/e2e/serve_page.mjs - drive the web page of `skillbox serve` in
// headless Chromium: ask one question, see the answer stream in with its
// tool steps, find the session in the list, then reload at phone size and
// replay the session from the list.
//
// usage: node tests/e2e/serve_page.mjs BASE_URL TOKEN SCREENSHOT.png
//   TOKEN may be "" (a server without tokens). puppeteer-core comes from
//   $TOP/tools/peers/node_modules (TOP defaults to this file's ../..), the
//   browser from $CHROMIUM (default /usr/bin/chromium).
// Prints "PAGE OK <answer>" and exits 0, or "PAGE FAIL <reason>" and exits 1.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [base, token = '', shot = ''] = process.argv.slice(2);
const TOP = process.env.TOP ||
    path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const QUESTION = process.env.QUESTION || 'what is using my disk?';
const STEP_MS = 20000;

let browser;

function say(why) {
	console.log('PAGE FAIL ' + String(why).replace(/\s+/g, ' '));
}
// Checks throw; the one catch at the bottom reports and closes the browser.
function fail(why) {
	throw new Error(why);
}
if (!base) {
	say('usage: serve_page.mjs BASE_URL TOKEN SCREENSHOT.png');
	process.exit(1);
}
// Whatever hangs (browser start, a stream that never ends), the test ends.
setTimeout(() => {
	say('overall timeout (40 s)');
	if (browser)
		browser.process()?.kill('SIGKILL');
	process.exit(1);
}, 40000).unref();

let puppeteer;
try {
	puppeteer = createRequire(path.join(TOP, 'tools/peers/package.json'))(
	    'puppeteer-core');
} catch (e) {
	say('puppeteer-core not installed (run tools/setup): ' + e.message);
	process.exit(1);
}

const bad = [];	// uncaught errors in the page, console errors and warnings
let first = true;	// the first visit, before the token is remembered

async function open(browser, viewport) {
	const page = await browser.newPage();
	await page.setViewport(viewport);
	page.on('pageerror', (e) => bad.push(e.message));
	// The one error expected: the 401 that tells the page a token is
	// needed, on the first visit (Chromium logs every failed load).
	page.on('console', (m) => {
		if (/^(error|warn|warning|assert)$/.test(m.type()) &&
		    !(token !== '' && first && / status of 401 /.test(
		    m.text())))
			bad.push('console ' + m.type() + ': ' + m.text());
	});
	page.on('dialog', (d) => {	/* model text that ran as markup */
		bad.push('dialog: ' + d.message());
		d.dismiss().catch(() => {});
	});
	page.setDefaultTimeout(STEP_MS);
	await page.goto(base.replace(/\/$/, '') + '/', { waitUntil: 'load' });
	return page;
}

const text = (page, sel) => page.$$eval(sel, (v) => v.map((e) =>
    e.textContent.trim()));

async function run(browser) {
	let page = await open(browser, { width: 1024, height: 768 });

	if (token !== '') {
		// The page learns that a token is needed from the API's 401.
		await page.waitForSelector('#token', { visible: true });
		await page.type('#token', token);
		const [r] = await Promise.all([page.waitForResponse((r) =>
		    r.url().endsWith('/api/v1/sessions')), page.click('#tokok')]);
		if (r.status() !== 200)
			fail('the server refused the token: HTTP ' + r.status());
	}
	await page.type('#input', QUESTION);
	await page.click('#send');
	try {
		// Done: an answer, a tool step, and the send button back; or
		// the token form, which will not go away by itself.
		await page.waitForFunction(() =>
		    !document.querySelector('#auth').hidden ||
		    [...document.querySelectorAll('.answer')].some((e) =>
		    e.textContent.trim() !== '') &&
		    document.querySelector('.tool') !== null &&
		    !document.querySelector('#send').disabled);
	} catch (e) {
		const err = await text(page, '.err');
		fail('no answer with a tool step within ' + STEP_MS / 1000 +
		    ' s' + (err.length ? ': ' + err.join('; ') : ''));
	}
	if (await page.$eval('#auth', (e) => !e.hidden))
		fail(token === '' ? 'the server asked for a token' :
		    'the server refused the token');
	const err = await text(page, '.err');
	if (err.length)
		fail('errors shown: ' + err.join('; '));
	const answers = await text(page, '.answer');
	const answer = answers[answers.length - 1];
	const tools = await text(page, '.tool summary');
	if (!tools.some((s) => / (ok|FAILED) \d+ ms/.test(s)))
		fail('no finished tool step: ' + tools.join('; '));
	const name = await page.$eval('#sname', (e) => e.textContent);
	if (name === '')
		fail('no session name after the turn');
	try {
		await page.waitForFunction((n) => [...document.querySelectorAll(
		    '#sessions button')].some((b) => b.firstChild.textContent ===
		    n), { timeout: 5000 }, name);
	} catch (e) {
		fail('session ' + name + ' not in the list: ' +
		    (await text(page, '#sessions button')).join('; '));
	}
	await page.close();
	first = false;

	// A phone: the token is remembered, the list is a drawer, nothing is
	// wider than the screen, the buttons are big enough to tap.
	page = await open(browser, { width: 390, height: 844, isMobile: true,
	    hasTouch: true, deviceScaleFactor: 2 });
	await page.waitForFunction(() =>
	    document.querySelector('#sessions button') !== null);
	if (!(await page.$eval('#auth', (e) => e.hidden)))
		fail('phone: the token was not remembered');
	const m = await page.evaluate(() => {
		const r = (s) => document.querySelector(s).getBoundingClientRect();
		return { wide: document.documentElement.scrollWidth,
		    send: r('#send').height, side: r('#side').right };
	});
	if (m.wide > 390)
		fail('phone: the page is ' + m.wide + ' px wide');
	if (m.send < 40)
		fail('phone: #send is ' + m.send + ' px high');
	if (m.side > 0)
		fail('phone: the session list is not a closed drawer');
	await page.tap('#menu');
	await page.waitForFunction(() =>
	    document.querySelector('#side').getBoundingClientRect().left >= 0);
	const btn = await page.waitForFunction((n) => [...document.
	    querySelectorAll('#sessions button')].find((b) =>
	    b.firstChild.textContent === n), {}, name);
	await btn.tap();
	try {
		await page.waitForFunction((a) => [...document.querySelectorAll(
		    '.answer')].some((e) => e.textContent.trim() === a) &&
		    document.querySelector('.tool') !== null &&
		    document.querySelector('#side').getBoundingClientRect().right
		    <= 0, { timeout: 5000 }, answer);
	} catch (e) {
		fail('phone: session ' + name + ' did not replay with its ' +
		    'answer and tool steps');
	}
	if (shot)
		await page.screenshot({ path: shot });
	if (bad.length)
		fail('errors in the page: ' + bad.join('; '));
	return answer;
}

let code = 1;
try {
	browser = await puppeteer.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		args: ['--no-sandbox', '--headless=new', '--disable-gpu',
		    '--disable-dev-shm-usage', '--no-first-run'],
	});
	const answer = await run(browser);
	console.log('PAGE OK ' + answer.replace(/\s+/g, ' '));
	code = 0;
} catch (e) {
	say(e && e.message || e);
} finally {
	if (browser)
		await browser.close().catch(() => {});
}
process.exit(code);
