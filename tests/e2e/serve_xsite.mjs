// tests/e2e/serve_xsite.mjs - a web page of another origin attacks a
// token-less `skillbox serve` through headless Chromium: text/plain
// fetches (no preflight) to /api/v1/run and to an answer endpoint, a JSON
// fetch (preflighted), a cross-origin read of the session list, a form
// post (enctype text/plain, the JSON-in-a-form trick), and an iframe of
// skillbox's page. The other origin is a small server of this script on
// another 127.0.0.1 port (a different origin, the same machine: what a
// page from anywhere can reach in a browser).
//
// usage: node tests/e2e/serve_xsite.mjs BASE_URL SESSION
//   SESSION: an existing session whose answer endpoint is attacked.
// Prints one line per attack, "NAME: WHAT THE PAGE SAW", then the
// sessions the server lists after them ("SESSIONS a b ..."). Whether the
// server refused is for the caller to judge (its log, its sessions);
// only the iframe is judged here: "frame: blocked" or "frame: SHOWN".
// Exits 0 when it could run the attacks, 1 when it could not.
import { createRequire } from 'node:module';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [base, victim = 'victim'] = process.argv.slice(2);
const TOP = process.env.TOP ||
    path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let browser, evil;

function fail(why) {
	console.log('XSITE FAIL ' + String(why).replace(/\s+/g, ' '));
	if (browser)
		browser.process()?.kill('SIGKILL');
	process.exit(1);
}
if (!base)
	fail('usage: serve_xsite.mjs BASE_URL SESSION');
setTimeout(() => fail('overall timeout (30 s)'), 30000).unref();

let puppeteer;
try {
	puppeteer = createRequire(path.join(TOP, 'tools/peers/package.json'))(
	    'puppeteer-core');
} catch (e) {
	fail('puppeteer-core not installed (run tools/setup): ' + e.message);
}

// The attacker's page. JSON.stringify puts the URLs in as JS strings.
const T = base.replace(/\/$/, '');
const page = `<!doctype html><html><body>
<form id="f" method="POST" action="${T}/api/v1/run" enctype="text/plain"
 target="sink"><input name='{"input":"what is using my disk?","session":"xs-form","x":"'
 value='"}'></form>
<iframe name="sink"></iframe>
<iframe id="victim" src="${T}/"></iframe>
<script>
const T = ${JSON.stringify(T)}, V = ${JSON.stringify(victim)};
async function one(name, f) {
	try { R[name] = await f(); } catch (e) { R[name] = 'refused by the browser'; }
}
const R = {};
window.attack = async function () {
	const plain = { method: 'POST', mode: 'no-cors',
	    headers: { 'Content-Type': 'text/plain' } };
	await one('fetch-run', async () => (await fetch(T + '/api/v1/run',
	    { ...plain, body: '{"input":"what is using my disk?","session":"xs-fetch"}' }),
	    'sent (opaque)'));
	await one('fetch-answer', async () => (await fetch(T +
	    '/api/v1/sessions/' + V + '/answer', { ...plain,
	    body: '{"approve":true}' }), 'sent (opaque)'));
	await one('fetch-json', async () => 'status ' + (await fetch(T +
	    '/api/v1/run', { method: 'POST', headers: { 'Content-Type':
	    'application/json' }, body: '{"input":"what is using my disk?","session":"xs-json"}' })).status);
	await one('read-sessions', async () => 'read ' + (await (await fetch(T +
	    '/api/v1/sessions')).text()).slice(0, 60));
	return R;
};
</script></body></html>`;

evil = http.createServer((req, res) => {
	res.writeHead(200, { 'Content-Type': 'text/html' });
	res.end(page);
});
await new Promise((ok) => evil.listen(0, '127.0.0.1', ok));
const EVIL = 'http://127.0.0.1:' + evil.address().port + '/';

function get(url) {
	return new Promise((ok, no) => http.get(url, (r) => {
		let s = '';
		r.on('data', (d) => s += d);
		r.on('end', () => ok(s));
	}).on('error', no));
}

try {
	browser = await puppeteer.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		args: ['--no-sandbox', '--headless=new', '--disable-gpu',
		    '--disable-dev-shm-usage', '--no-first-run'],
	});
	const p = await browser.newPage();
	p.setDefaultTimeout(10000);
	await p.goto(EVIL, { waitUntil: 'load' });
	const r = await p.evaluate(() => window.attack());
	for (const k of Object.keys(r))
		console.log(k + ': ' + String(r[k]).replace(/\s+/g, ' '));
	// The form: its answer lands in the sink frame.
	const sink = p.frames().find((f) => f.name() === 'sink');
	await Promise.all([p.waitForFrame((f) => f.name() === 'sink' &&
	    f.url().startsWith(T)).catch(() => null),
	    p.$eval('#f', (f) => f.submit())]);
	await new Promise((ok) => setTimeout(ok, 1000));
	const got = await sink.evaluate(() => document.body ?
	    document.body.innerText : '').catch(() => '(unreadable)');
	console.log('form: ' + got.replace(/\s+/g, ' ').slice(0, 100));
	// The iframe: skillbox's page must not be in it.
	const fr = p.frames().filter((f) => f !== p.mainFrame() &&
	    f.name() !== 'sink');
	let shown = false;
	for (const f of fr)
		shown = shown || await f.evaluate(() =>
		    document.getElementById('sessions') !== null).catch(() => false);
	console.log('frame: ' + (fr.length === 0 ? 'missing' : shown ? 'SHOWN' :
	    'blocked'));
	// Let a turn that was started end, then list what the server has.
	await new Promise((ok) => setTimeout(ok, 1000));
	const list = JSON.parse(await get(T + '/api/v1/sessions'));
	console.log('SESSIONS ' + list.sessions.map((s) => s.name).sort().
	    join(' '));
} catch (e) {
	fail(e && e.message || e);
} finally {
	if (browser)
		await browser.close().catch(() => {});
	evil.close();
}
process.exit(0);
