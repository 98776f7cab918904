// tests/e2e/approve_page.mjs - the web page answers an approval: open the
// session SESSION from the list, see its question with Approve and Deny,
// click Approve and check that the request named the call the question
// showed, then that the turn went on.
//
// usage: node tests/e2e/approve_page.mjs BASE_URL SESSION
//   puppeteer-core from $TOP/tools/peers/node_modules, the browser from
//   $CHROMIUM (default /usr/bin/chromium).
// Prints "PAGE OK BODY" (the answer request's body) or "PAGE FAIL why".
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [base, session] = process.argv.slice(2);
const TOP = process.env.TOP ||
    path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let browser;

setTimeout(() => {
	console.log('PAGE FAIL overall timeout (30 s)');
	browser?.process()?.kill('SIGKILL');
	process.exit(1);
}, 30000).unref();
try {
	const puppeteer = createRequire(path.join(TOP,
	    'tools/peers/package.json'))('puppeteer-core');
	browser = await puppeteer.launch({ executablePath: process.env.CHROMIUM ||
	    '/usr/bin/chromium', headless: true, args: ['--no-sandbox',
	    '--headless=new', '--disable-gpu', '--disable-dev-shm-usage',
	    '--no-first-run'] });
	const page = await browser.newPage();
	page.setDefaultTimeout(15000);
	await page.goto(base + '/', { waitUntil: 'load' });
	const b = await page.waitForSelector(`#sessions button::-p-text(${session})`);
	await b.click();
	await page.waitForSelector('.ask button');
	const [req] = await Promise.all([page.waitForRequest((r) =>
	    r.url().endsWith('/answer')), page.click('.ask button')]);
	await page.waitForFunction(() => /All done\./.test(
	    document.getElementById('log').textContent));
	console.log('PAGE OK ' + req.postData());
	await browser.close();
} catch (e) {
	console.log('PAGE FAIL ' + String(e.message || e).replace(/\s+/g, ' '));
	await browser?.close();
	process.exit(1);
}
