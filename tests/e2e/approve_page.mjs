// tests/e2e/approve_page.mjs - the web page answers what a paused turn
// waits on, in headless Chromium against `skillbox serve` and the scripted
// model (tools/scriptllm.js), whose script this test writes:
//   approve   session SESSION (paused on an approval) opened from the list:
//             Approve sends the call it showed, the turn goes on
//   choices   a question's text and its choices as buttons; a click answers
//   typed     text typed while a question waits answers it (no new turn)
//   tools     typed "yes" approves, other text denies with it as the
//             reason; JSON tool output indented, long output folded, none
//             of it taken as HTML
//   reopen    a reload (at phone size) reopens the last session: its
//             messages, then the question it waits on, still answerable
// Any console error or warning, uncaught error or dialog fails the test.
// Screenshots of the question and the tool output at 1280x800 and 390x844
// go to SHOTS (made if missing).
//
// usage: node tests/e2e/approve_page.mjs BASE_URL SESSION SMDIR SHOTS
//   SMDIR is scriptllm.js's folder. puppeteer-core from
//   $TOP/tools/peers/node_modules, the browser from $CHROMIUM (default
//   /usr/bin/chromium).
// Prints "ok STEP" for each step passed, "shot PATH" for each screenshot,
// then "PAGE OK", or "PAGE FAIL why" and exits 1.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [base, session, smdir, shots] = process.argv.slice(2);
const TOP = process.env.TOP ||
    path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const STEP_MS = 20000;	// one turn, under qemu too
const DESK = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844, isMobile: true, hasTouch: true };
const HTML = '<img src=x onerror=alert(1)><b>bold</b>';
let browser;

if (!shots) {
	console.log('PAGE FAIL usage: approve_page.mjs BASE_URL SESSION ' +
	    'SMDIR SHOTS');
	process.exit(1);
}
setTimeout(() => {
	console.log('PAGE FAIL overall timeout (150 s)');
	browser?.process()?.kill('SIGKILL');
	process.exit(1);
}, 150000).unref();

function fail(why) {
	throw new Error(why);
}

// A new script for the model: written whole, then renamed, so the
// model never reads half of it (it reloads on a new inode).
function script(steps) {
	const f = path.join(smdir, 'script.json');
	fs.rmSync(path.join(smdir, 'journal'), { force: true });
	fs.writeFileSync(f + '.new', JSON.stringify(steps));
	fs.renameSync(f + '.new', f);
}

// The tool results the model was sent in its request n (from 1).
function results(n) {
	const l = fs.readFileSync(path.join(smdir, 'journal'), 'utf8').
	    trim().split('\n');
	if (l.length < n)
		fail('the model got ' + l.length + ' requests, not ' + n);
	return JSON.parse(l[n - 1]).messages.filter((m) => m.role === 'tool').
	    map((m) => m.content);
}

const bad = [];	// console errors and warnings, uncaught errors, dialogs

async function open(viewport) {
	const page = await browser.newPage();
	await page.setViewport(viewport);
	page.on('console', (m) => {
		if (/^(error|warn|warning|assert)$/.test(m.type()))
			bad.push('console ' + m.type() + ': ' + m.text());
	});
	page.on('pageerror', (e) => bad.push('pageerror: ' + e.message));
	page.on('dialog', (d) => {	/* text that ran as markup */
		bad.push('dialog: ' + d.message());
		d.dismiss().catch(() => {});
	});
	page.setDefaultTimeout(STEP_MS);
	await page.goto(base + '/', { waitUntil: 'load' });
	return page;
}

function ok(step) {
	if (bad.length)
		fail(step + ': ' + bad.join('; '));
	console.log('ok ' + step);
}

async function shot(page, name) {
	const f = path.join(shots, name + '.png');
	await page.screenshot({ path: f });
	console.log('shot ' + f);
}

// What the page shows: the log's entries as [class, text].
const shown = (page) => page.$$eval('#log > *', (v) => v.map((e) =>
    [e.className, e.firstChild ? e.firstChild.textContent : '']));

// Do act(), which must POST to .../answer with exactly body.
async function answers(page, act, body, what) {
	const [req] = await Promise.all([page.waitForRequest((r) =>
	    r.url().endsWith('/answer') && r.method() === 'POST'), act()]);
	if (req.postData() !== body)
		fail(what + ': sent ' + req.postData() + ', not ' + body);
}

// The turn ends with final as its answer and the send button back.
async function ends(page, final, what) {
	try {
		await page.waitForFunction((a) => [...document.
		    querySelectorAll('.answer')].some((e) => e.textContent ===
		    a) && !document.querySelector('#send').disabled &&
		    document.querySelector('.ask button') === null, {}, final);
	} catch (e) {
		fail(what + ': no final answer "' + final + '": ' +
		    JSON.stringify(await shown(page)));
	}
	const err = await page.$$eval('.err', (v) => v.map((e) =>
	    e.textContent));
	if (err.length)
		fail(what + ': errors shown: ' + err.join('; '));
}

async function say(page, text) {
	await page.type('#input', text);
	await page.keyboard.press('Enter');
}

// The last question box, its text and its buttons' labels, once the turn
// waits on it.
async function question(page, what) {
	try {
		await page.waitForFunction(() => document.querySelector(
		    '#log').lastChild?.textContent === 'turn waiting' &&
		    !document.querySelector('#send').disabled);
	} catch (e) {
		fail(what + ': no question shown: ' + JSON.stringify(
		    await shown(page)));
	}
	return page.$$eval('.ask', (v) => ({ q: v[v.length - 1].firstChild.
	    textContent, b: [...v[v.length - 1].querySelectorAll('button')].
	    map((b) => b.textContent), markup: document.querySelector(
	    '#log b, #log i, #log img') !== null }));
}

async function approve(page) {
	const b = await page.waitForSelector(
	    `#sessions button::-p-text(${session})`);
	await b.click();
	const q = await question(page, 'approve');
	if (q.b.join() !== 'Approve,Deny')
		fail('approve: buttons ' + q.b.join());
	await answers(page, () => page.click('.ask button'),
	    '{"approve":true,"call":"call_2_0"}', 'approve');
	await ends(page, 'All done.', 'approve');
	ok('approve');
}

async function choices(page) {
	const c = ['eth0', 'wlan0 & ' + HTML];
	script([{ calls: [['ask_user', { question: 'Which interface? ' +
	    HTML, choices: c }]] }, { text: 'Checked wlan0.' }]);
	await page.click('#new');
	await say(page, 'check the network');
	const q = await question(page, 'choices');
	if (q.q !== 'Which interface? ' + HTML || q.b.join('|') !== c.join('|'))
		fail('choices: shown ' + JSON.stringify(q));
	if (q.markup)
		fail('choices: the question ran as markup');
	await shot(page, 'question-desktop');
	const b = await page.$$('.ask button');
	await answers(page, () => b[1].click(), JSON.stringify({ input: c[1] }),
	    'choices');
	await ends(page, 'Checked wlan0.', 'choices');
	if (results(2).join() !== c[1])
		fail('choices: the model got ' + results(2).join());
	ok('choices');
}

async function typed(page) {
	script([{ calls: [['ask_user', { question: 'Which port?' }]] },
	    { text: 'Port 22 is closed.' }]);
	await page.click('#new');
	await say(page, 'scan');
	const q = await question(page, 'typed');
	if (q.q !== 'Which port?' || q.b.length !== 0)
		fail('typed: shown ' + JSON.stringify(q));
	await answers(page, () => say(page, '22'), '{"input":"22"}', 'typed');
	await ends(page, 'Port 22 is closed.', 'typed');
	if (results(2).join() !== '22')
		fail('typed: the model got ' + results(2).join());
	ok('typed');
}

// The tool output view: each run_command_line step as [open, output,
// summary, arguments].
const tools = (page) => page.$$eval('.tool', (v) => v.filter((e) =>
    /run_command_line/.test(e.firstChild.textContent)).map((e) =>
    [e.open, e.lastChild.textContent, e.firstChild.textContent,
    e.children[1].textContent]));

async function toolview(page, what) {
	const t = await tools(page);
	if (t.length !== 3)
		fail(what + ': ' + t.length + ' command steps shown');
	// JSON as a key and its value a line, a string of lines below "|"
	const short = 'exit: 0\nstdout: ' + JSON.stringify(HTML);
	if (t[0][1] !== short || !t[0][0])
		fail(what + ': short JSON output not shown by line and open: ' +
		    JSON.stringify(t[0]));
	if (t[1][0] || !t[1][1].startsWith('exit: 0\nstdout: |\n  1\n  2\n') ||
	    !t[1][1].endsWith('\n  300') || t[1][3] !== 'commandLine: "seq 1 300"')
		fail(what + ': long output not shown by line and folded: ' +
		    JSON.stringify(t[1]).slice(0, 300));
	if (!/ FAILED /.test(t[2][2]) || !/denied this call: not now/.test(
	    t[2][1]))
		fail(what + ': the denied call: ' + JSON.stringify(t[2]));
	if (await page.$('#log img, #log b') !== null)
		fail(what + ': tool output ran as markup');
}

async function toolsflow(page) {
	script([{ calls: [['handoff_to_shell', { task: 'show' }]] },
	    { calls: [['run_command_line', { commandLine:
	    `printf '%s' '${HTML}'` }]] },
	    { calls: [['run_command_line', { commandLine: 'seq 1 300' }]] },
	    { calls: [['run_command_line', { commandLine: 'echo never' }]] },
	    { calls: [['hand_back', { result: 'shown' }]] },
	    { text: 'All shown.' }]);
	await page.click('#new');
	await say(page, 'show me');
	await question(page, 'tools');
	await answers(page, () => say(page, 'yes'),
	    '{"approve":true,"call":"call_2_0"}', 'tools: yes');
	await question(page, 'tools');
	await answers(page, () => say(page, 'Y'),
	    '{"approve":true,"call":"call_3_0"}', 'tools: Y');
	await question(page, 'tools');
	await answers(page, () => say(page, 'not now'),
	    '{"approve":false,"reason":"not now"}', 'tools: a reason');
	await ends(page, 'All shown.', 'tools');
	const r = results(5);
	if (r.length !== 3 || r[2] !== 'the person denied this call: not now')
		fail('tools: the model got ' + JSON.stringify(r));
	await toolview(page, 'tools');
	await page.$$eval('.tool', (v) => v.find((e) => e.open &&
	    /run_command_line/.test(e.textContent)).scrollIntoView());
	await shot(page, 'tools-desktop');
	ok('tools');
	return page.$eval('#sname', (e) => e.textContent);
}

// A reload reopens the last session shown; then a question asked at
// phone size survives a reload and is answered after it.
async function reopen(last) {
	const page = await open(PHONE);
	try {
		await page.waitForFunction((n) => document.querySelector(
		    '#sname').textContent === n && document.querySelectorAll(
		    '.tool').length > 0, {}, last);
	} catch (e) {
		fail('reopen: session ' + last + ' not reopened: ' +
		    JSON.stringify(await shown(page)));
	}
	const users = (await shown(page)).filter((e) => e[0] === 'user').
	    map((e) => e[1]);
	if (users.join('|') !== 'show me|Approve|Approve|Deny: not now')
		fail('reopen: the messages shown: ' + users.join('|'));
	await toolview(page, 'reopen');
	await page.$$eval('.tool', (v) => {	/* unfold the long one */
		const e = v.find((x) => /seq 1 300/.test(x.textContent));
		e.open = true;
		e.scrollIntoView();
	});
	await shot(page, 'tools-phone');

	script([{ calls: [['ask_user', { question: 'Restart which one?',
	    choices: ['dnsmasq', 'dropbear'] }]] }, { text: 'dropbear ' +
	    'restarted.' }]);
	await page.tap('#new');
	await say(page, 'restart a service');
	await question(page, 'reopen');
	const name = await page.$eval('#sname', (e) => e.textContent);
	await page.reload({ waitUntil: 'load' });
	let q;
	try {
		await page.waitForFunction((n) => document.querySelector(
		    '#sname').textContent === n && document.querySelector(
		    '.ask button') !== null, {}, name);
		q = await question(page, 'reopen');
	} catch (e) {
		fail('reopen: the question of ' + name + ' not shown after ' +
		    'a reload: ' + JSON.stringify(await shown(page)));
	}
	if (q.q !== 'Restart which one?' || q.b.join() !== 'dnsmasq,dropbear')
		fail('reopen: shown ' + JSON.stringify(q));
	const users2 = (await shown(page)).filter((e) => e[0] === 'user');
	if (users2.map((e) => e[1]).join() !== 'restart a service')
		fail('reopen: messages ' + JSON.stringify(users2));
	const wide = await page.evaluate(() =>
	    document.documentElement.scrollWidth);
	if (wide > PHONE.width)
		fail('reopen: the page is ' + wide + ' px wide');
	await shot(page, 'question-phone');
	const b = await page.$$('.ask button');
	await answers(page, () => b[1].tap(), '{"input":"dropbear"}',
	    'reopen');
	await ends(page, 'dropbear restarted.', 'reopen');
	ok('reopen');
}

let code = 1;
try {
	fs.mkdirSync(shots, { recursive: true });
	const puppeteer = createRequire(path.join(TOP,
	    'tools/peers/package.json'))('puppeteer-core');
	browser = await puppeteer.launch({ executablePath: process.env.CHROMIUM ||
	    '/usr/bin/chromium', headless: true, args: ['--no-sandbox',
	    '--headless=new', '--disable-gpu', '--disable-dev-shm-usage',
	    '--no-first-run'] });
	const page = await open(DESK);
	await approve(page);
	await choices(page);
	await typed(page);
	const last = await toolsflow(page);
	await page.close();
	await reopen(last);
	console.log('PAGE OK');
	code = 0;
} catch (e) {
	console.log('PAGE FAIL ' + String(e.message || e).replace(/\s+/g, ' '));
}
await browser?.close().catch(() => {});
process.exit(code);
