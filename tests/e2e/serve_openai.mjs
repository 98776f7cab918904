#!/usr/bin/env node
// serve_openai.mjs - drive `skillbox serve` with the official `openai` npm SDK.
//
//   node tests/e2e/serve_openai.mjs BASE_URL TOKEN
//
// BASE_URL is like http://127.0.0.1:PORT; TOKEN may be empty (a server with
// no tokens).  Prints one line per check, `ok NAME` or `not ok NAME: reason`,
// and exits 1 if any check failed (2 on a usage error or a missing SDK).
//
// The SDK comes from $OPENAI_SDK_DIR when that is set (a node_modules folder,
// e.g. one holding openai@7 to run the same checks against the next major),
// otherwise from tools/peers/node_modules of this repository (installed by
// tools/setup).
//
// Environment:
//   OPENAI_SDK_DIR    node_modules folder holding `openai` (see above)
//   ERROR_MODEL       a model name for which the server's turn fails; enables
//                     the error checks (else they print `ok ... (skipped)`)
//   CHECK_TIMEOUT_MS  time bound of one check (default 20000)
//   QUICK_PROMPT      what the keep-alive checks ask (default the disk
//                     question), for a server that answers it slowly
//   CHECKS            comma list of the checks to run (default all), e.g.
//                     CHECKS=error_stream,error_no_retry against a server
//                     whose every turn fails (it ignores `model`)
//
// What is pinned (see the service notes, sections 1.3, 1.4 and 7): the three
// SDK paths (create, raw stream, the .stream() helper), models.list, array
// content with unknown fields, `user` as the session, 401 as
// AuthenticationError, errors as APIError without retries, and keep-alive
// reuse with maxRetries 0.

import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CheckError, PEERS, TIMEOUT, args, assert, check, describe, finish,
    short, skipped } from './sdk_lib.mjs';

const { BASE, TOKEN } = args('serve_openai.mjs');
const ERROR_MODEL = process.env.ERROR_MODEL || '';

function loadSDK() {
	const dirs = [];
	if (process.env.OPENAI_SDK_DIR)
		dirs.push(process.env.OPENAI_SDK_DIR);
	dirs.push(PEERS);
	const errs = [];
	for (const d of dirs) {
		try {
			// A file inside the node_modules folder resolves `openai`
			// from that folder.
			const req = createRequire(join(resolve(d), 'noop.js'));
			const m = req('openai');
			const OpenAI = m.OpenAI || m.default || m;
			// package.json is not in the package's exports map.
			let version = '?';
			try {
				const main = req.resolve('openai');
				version = JSON.parse(readFileSync(join(dirname(main),
				    'package.json'), 'utf8')).version;
			} catch { /* only informative */ }
			return { OpenAI, version, dir: d };
		} catch (e) {
			errs.push(`${d}: ${e.code || e.message}`);
		}
	}
	console.error('serve_openai: cannot load the openai SDK (' +
	    errs.join('; ') + ')');
	process.exit(2);
}

const { OpenAI, version: SDK_VERSION } = loadSDK();
const { APIError, AuthenticationError } = OpenAI;

let MODEL = 'skillbox';
const MESSAGES = [{ role: 'user', content: 'what is using my disk?' }];
// For the checks that run many turns, QUICK_PROMPT when set: an offline
// server answers the disk question with du over / (nearly 2 s a turn on a
// build machine, which 20 turns under load ran past the check's time).
const QUICK = process.env.QUICK_PROMPT ?
    [{ role: 'user', content: process.env.QUICK_PROMPT }] : MESSAGES;

function client(opts = {}) {
	return new OpenAI({
		baseURL: BASE + '/v1',
		// The SDK insists on a key; with no tokens the server ignores it.
		apiKey: TOKEN || 'no-token',
		maxRetries: 0,
		timeout: TIMEOUT,
		...opts,
	});
}

function checkUsage(u, where) {
	assert(u && typeof u === 'object', `${where}: no usage (${short(u)})`);
	for (const k of ['prompt_tokens', 'completion_tokens', 'total_tokens'])
		assert(typeof u[k] === 'number', `${where}: usage.${k} is not a number (${short(u)})`);
}

function checkCompletion(r, what) {
	// The SDK hands back the raw text of a non-JSON content-type.
	assert(r && typeof r === 'object',
	    `${what}: a ${typeof r}, not an object (not application/json?): ${short(r)}`);
	assert(r.object === 'chat.completion', `${what}: object is ${short(r.object)}`);
	assert(typeof r.id === 'string' && r.id, `${what}: id is ${short(r.id)}`);
	assert(Array.isArray(r.choices) && r.choices.length >= 1, `${what}: choices is ${short(r.choices)}`);
	const c = r.choices[0];
	assert(c.message?.role === 'assistant', `${what}: choices[0].message.role is ${short(c.message?.role)}`);
	assert(typeof c.message.content === 'string' && c.message.content.length > 0,
	    `${what}: choices[0].message.content is ${short(c.message.content)}`);
	assert(!c.message.tool_calls?.length, `${what}: message carries tool_calls ${short(c.message.tool_calls)}`);
	assert(c.finish_reason === 'stop', `${what}: finish_reason is ${short(c.finish_reason)}`);
	checkUsage(r.usage, what);
}

const oa = client();

// 1. models.list(), iterated like a page.
await check('models', async (signal) => {
	const ids = [];
	for await (const m of oa.models.list({ signal }))
		ids.push(m?.id);
	assert(ids.length >= 1, 'no model listed');
	assert(ids.every((id) => typeof id === 'string' && id),
	    `a model without a string id: ${short(ids)}`);
	MODEL = ids[0];
	return `(${ids.length}: ${ids.slice(0, 5).join(', ')}; sdk ${SDK_VERSION})`;
});

// 2. create without streaming.
await check('chat_create', async (signal) => {
	const r = await oa.chat.completions.create(
	    { model: MODEL, messages: MESSAGES }, { signal });
	checkCompletion(r, 'create');
});

// 3. The raw stream with include_usage.
await check('chat_stream_raw', async (signal) => {
	const stream = await oa.chat.completions.create({
		model: MODEL, messages: MESSAGES, stream: true,
		stream_options: { include_usage: true },
	}, { signal });
	const chunks = [];
	for await (const ch of stream)
		chunks.push(ch);
	assert(chunks.length > 0, 'no chunk');
	chunks.forEach((ch, i) => {
		assert(ch.object === 'chat.completion.chunk', `chunk ${i}: object is ${short(ch.object)}`);
		assert(Array.isArray(ch.choices), `chunk ${i}: choices is ${short(ch.choices)}`);
	});
	const withChoices = chunks.filter((ch) => ch.choices.length > 0);
	assert(withChoices.length > 0, 'no chunk with choices');
	const first = withChoices[0].choices[0];
	assert(first.delta?.role === 'assistant',
	    `first delta has role ${short(first.delta?.role)}: ${short(withChoices[0])}`);
	const tools = chunks.filter((ch) => ch.choices.some((c) => c.delta?.tool_calls !== undefined ||
	    c.delta?.function_call !== undefined || c.finish_reason === 'tool_calls'));
	assert(tools.length === 0, `tool calls leaked into the stream: ${short(tools[0])}`);
	for (const ch of withChoices)
		for (const c of ch.choices)
			assert(c.index === 0, `a choice with index ${short(c.index)}: ${short(ch)}`);
	const text = withChoices.map((ch) => ch.choices[0].delta?.content ?? '').join('');
	assert(text.length > 0, 'the content deltas join to an empty text');
	const fins = withChoices.filter((ch) => ch.choices[0].finish_reason != null);
	assert(fins.length === 1 && fins[0].choices[0].finish_reason === 'stop',
	    `want exactly one finish_reason "stop", got ${short(fins.map((ch) => ch.choices[0].finish_reason))}`);
	const last = chunks[chunks.length - 1];
	assert(last.choices.length === 0 && last.usage,
	    `the last chunk is not a usage chunk with choices []: ${short(last)}`);
	checkUsage(last.usage, 'usage chunk');
	const usageChunks = chunks.filter((ch) => ch.usage);
	assert(usageChunks.length === 1, `${usageChunks.length} chunks carry usage`);
	return `(${chunks.length} chunks, ${text.length} chars)`;
});

// 4. The .stream() helper: needs index, role in the first delta and a
// finish_reason, else finalChatCompletion() throws.
await check('chat_stream_helper', async (signal) => {
	const s = oa.chat.completions.stream({
		model: MODEL, messages: MESSAGES,
		stream_options: { include_usage: true },
	}, { signal });
	const final = await s.finalChatCompletion();
	const c = final?.choices?.[0];
	assert(c, `no choice in ${short(final)}`);
	assert(c.message?.role === 'assistant', `role is ${short(c.message?.role)}`);
	assert(typeof c.message.content === 'string' && c.message.content.length > 0,
	    `content is ${short(c.message?.content)}`);
	assert(c.finish_reason === 'stop', `finish_reason is ${short(c.finish_reason)}`);
	assert(!c.message.tool_calls?.length, `tool_calls ${short(c.message.tool_calls)}`);
});

// 5. Array content with cache_control (as Open WebUI sends) and an unknown
// top-level field.
await check('content_parts', async (signal) => {
	const r = await oa.chat.completions.create({
		model: MODEL,
		messages: [{
			role: 'user',
			content: [{ type: 'text', text: 'what is using my disk?' }],
			cache_control: { type: 'ephemeral' },
		}],
		foo_unknown: 1,
	}, { signal });
	checkCompletion(r, 'create');
});

// 6. `user` names the session: two turns, one session holding both.
await check('session_user', async (signal) => {
	const user = 'sdk-' + randomBytes(4).toString('hex');
	for (let i = 0; i < 2; i++) {
		const r = await oa.chat.completions.create(
		    { model: MODEL, messages: MESSAGES, user }, { signal });
		checkCompletion(r, `turn ${i + 1}`);
	}
	const hdr = TOKEN ? { authorization: `Bearer ${TOKEN}` } : {};
	const res = await fetch(BASE + '/api/v1/sessions', { headers: hdr, signal });
	const body = await res.text();
	assert(res.status === 200, `GET /api/v1/sessions: ${res.status} ${short(body)}`);
	let list;
	try { list = JSON.parse(body).sessions; } catch { list = undefined; }
	assert(Array.isArray(list), `GET /api/v1/sessions: no sessions array: ${short(body)}`);
	const s = list.find((x) => typeof x?.name === 'string' &&
	    (x.name === user || x.name.endsWith(user)));
	assert(s, `no session named ${user}; found ${short(list.map((x) => x?.name))}`);
	// Both turns went into that session.
	const lr = await fetch(BASE + '/api/v1/sessions/' + encodeURIComponent(s.name),
	    { headers: hdr, signal });
	const log = await lr.text();
	assert(lr.status === 200, `GET /api/v1/sessions/${s.name}: ${lr.status} ${short(log)}`);
	const users = log.split('\n').filter((l) => l.trim()).map((l) => {
		try { return JSON.parse(l); } catch { return null; }
	}).filter((e) => e?.type === 'user');
	assert(users.length === 2, `session ${s.name} holds ${users.length} user events, want 2: ${short(log)}`);
	return `(${s.name})`;
});

// 7. A wrong token is an AuthenticationError.
if (TOKEN) {
	await check('auth', async (signal) => {
		const bad = client({ apiKey: 'wrong-token' });
		try {
			for await (const m of bad.models.list({ signal }))
				void m;
		} catch (e) {
			assert(e instanceof AuthenticationError,
			    `want AuthenticationError, got ${describe(e)}`);
			assert(e.status === 401, `status ${e.status}`);
			return;
		}
		throw new CheckError('models.list with a wrong token succeeded');
	});
} else {
	skipped('auth', 'no token');
}

// 8. A failed turn: an APIError from the SDK, and no retry.
if (ERROR_MODEL) {
	// With the SDK's default retries on, count the requests it makes: a
	// failed turn must cost one request (4xx, `x-should-retry: false`, or a
	// 200 stream that carries `data: {"error":...}`).
	await check('error_stream', async (signal) => {
		let calls = 0;
		const counting = client({
			maxRetries: 2,
			fetch: (url, init) => { calls++; return fetch(url, init); },
		});
		try {
			const stream = await counting.chat.completions.create({
				model: ERROR_MODEL, messages: MESSAGES, stream: true,
			}, { signal });
			for await (const ch of stream)
				void ch;
		} catch (e) {
			assert(e instanceof APIError, `want APIError, got ${describe(e)}`);
			assert(typeof e.message === 'string' && e.message, 'an APIError without a message');
			assert(calls === 1, `the SDK sent ${calls} requests (retried): ${describe(e)}`);
			return `(${describe(e)})`;
		}
		throw new CheckError(`the stream with model ${ERROR_MODEL} ended without an error`);
	});
	await check('error_no_retry', async (signal) => {
		const res = await fetch(BASE + '/v1/chat/completions', {
			method: 'POST', signal,
			headers: {
				'content-type': 'application/json',
				...(TOKEN ? { authorization: `Bearer ${TOKEN}` } : {}),
			},
			body: JSON.stringify({ model: ERROR_MODEL, messages: MESSAGES }),
		});
		const body = await res.text();
		const sr = res.headers.get('x-should-retry');
		assert(res.status >= 400, `model ${ERROR_MODEL} answered ${res.status}: ${short(body)}`);
		if (res.status >= 500) {
			assert(sr === 'false', `${res.status} with x-should-retry: ${short(sr)}`);
		} else {
			// The SDK retries 408, 409 and 429 unless told not to.
			assert(![408, 409, 429].includes(res.status) || sr === 'false',
			    `${res.status} with x-should-retry: ${short(sr)}`);
		}
		let err;
		try { err = JSON.parse(body).error; } catch { err = undefined; }
		assert(err && typeof err.message === 'string',
		    `${res.status} body is not {"error":{"message":...}}: ${short(body)}`);
		return `(${res.status}, x-should-retry: ${sr})`;
	});
} else {
	skipped('error_stream', 'ERROR_MODEL unset');
	skipped('error_no_retry', 'ERROR_MODEL unset');
}

// 9. Keep-alive: the SDK (undici) reuses sockets; a server that closes one
// without `Connection: close` makes the next request fail with maxRetries 0.
await check('keepalive', async (signal) => {
	const c = client();
	for (let i = 0; i < 20; i++) {
		let r;
		try {
			r = await c.chat.completions.create(
			    { model: MODEL, messages: QUICK }, { signal });
		} catch (e) {
			throw new CheckError(`request ${i + 1}/20: ${describe(e)}`);
		}
		assert(r?.choices?.[0]?.message?.content, `request ${i + 1}/20: no content: ${short(r)}`);
	}
}, TIMEOUT * 3);

// The same after streamed (chunked) responses, where the race was seen.
await check('keepalive_stream', async (signal) => {
	const c = client();
	for (let i = 0; i < 10; i++) {
		try {
			const s = await c.chat.completions.create(
			    { model: MODEL, messages: QUICK, stream: true }, { signal });
			for await (const ch of s)
				void ch;
			const r = await c.chat.completions.create(
			    { model: MODEL, messages: QUICK }, { signal });
			assert(r?.choices?.[0]?.message?.content, `no content: ${short(r)}`);
		} catch (e) {
			throw new CheckError(`round ${i + 1}/10: ${describe(e)}`);
		}
	}
}, TIMEOUT * 3);

finish();
