// sdk_lib.mjs - what the checks that drive `skillbox serve` with real client
// SDKs share (serve_openai.mjs, serve_responses.mjs): their arguments, the
// environment that bounds them, and the check runner.
//
// A script calls args() first, then check() per check, and exits with
// finish(). Environment: CHECK_TIMEOUT_MS (one check's bound, default
// 20000), CHECKS (a comma list of the checks to run, default all).

import { setMaxListeners } from 'node:events';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const TOP = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const PEERS = join(TOP, 'tools/peers/node_modules');
export const TIMEOUT = Number(process.env.CHECK_TIMEOUT_MS) || 20000;
const ONLY = (process.env.CHECKS || '').split(',').filter(Boolean);
export const wanted = (name) => ONLY.length === 0 || ONLY.includes(name);

// BASE_URL (no trailing slash) and TOKEN (may be empty) from argv, or a
// usage error (exit 2).
export function args(script) {
	const [base, token] = process.argv.slice(2);
	if (!base || token === undefined) {
		console.error(`usage: node ${script} BASE_URL TOKEN`);
		process.exit(2);
	}
	return { BASE: base.replace(/\/+$/, ''), TOKEN: token };
}

export class CheckError extends Error {}
export function assert(cond, msg) {
	if (!cond)
		throw new CheckError(msg);
}

// A value as at most 300 characters of text, for a failure's message.
export const short = (v) => {
	let s;
	try { s = typeof v === 'string' ? v : JSON.stringify(v); }
	catch { s = String(v); }
	s ??= String(v);
	return s.length > 300 ? s.slice(0, 300) + '...' : s;
};

export function describe(e) {
	if (e instanceof CheckError)
		return e.message;
	let s = `${e?.constructor?.name || 'Error'}: ${e?.message ?? e}`;
	if (e?.status !== undefined)
		s += ` (status ${e.status})`;
	// fetch errors hide the socket error two causes down.
	for (let c = e?.cause, i = 0; c && i < 4; c = c.cause, i++)
		s += ` [cause: ${c.code ? c.code + ' ' : ''}${c.message ?? c}]`;
	return s.replace(/\s+/g, ' ');
}

export function skipped(name, why) {
	if (wanted(name))
		console.log(`ok ${name} (skipped: ${why})`);
}

let failed = 0;
let hooks = {};
// hooks.start() runs before each check, hooks.settled() after it succeeded
// (it may throw to fail the check).
export function checkHooks(h) {
	hooks = h;
}

// Run one check, bounded in time: fn gets an AbortSignal to hand to every
// request, and the check fails if it has not settled when the time is up.
// A check may return a note, printed after `ok NAME`.
export async function check(name, fn, ms = TIMEOUT) {
	if (!wanted(name))
		return;
	const ac = new AbortController();
	// Every request of a check adds a listener to the one signal.
	setMaxListeners(1000, ac.signal);
	let timer;
	const late = new Promise((_, rej) => {
		timer = setTimeout(() => {
			ac.abort(new Error(`timed out after ${ms} ms`));
			rej(new CheckError(`timed out after ${ms} ms`));
		}, ms);
	});
	hooks.start?.();
	try {
		const note = await Promise.race([fn(ac.signal), late]);
		hooks.settled?.();
		console.log(`ok ${name}${note ? ' ' + note : ''}`);
	} catch (e) {
		failed++;
		console.log(`not ok ${name}: ${describe(e)}`);
	} finally {
		clearTimeout(timer);
		ac.abort();
	}
}

export function fail(msg) {
	failed++;
	console.log(`not ok${msg ? ': ' + msg : ''}`);
}

// Exit 1 when a check failed, else 0.
export function finish() {
	process.exit(failed ? 1 : 0);
}
