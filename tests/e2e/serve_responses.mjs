#!/usr/bin/env node
// serve_responses.mjs - drive `skillbox serve`'s POST /v1/responses with real
// clients: the `openai` npm SDK (responses.create, streamed and not, and the
// .stream() helper), the Vercel AI SDK (`ai` with @ai-sdk/openai, whose
// default model uses the Responses API) and the OpenAI Agents SDK.
//
//   node tests/e2e/serve_responses.mjs BASE_URL TOKEN
//
// BASE_URL is like http://127.0.0.1:PORT; TOKEN may be empty. The server's
// model must answer PROMPT (default "what is using my disk?") the same way
// each time, and fail a turn on ERROR_INPUT (default "server broke"). Prints
// `ok NAME` or `not ok NAME: reason` per check; exits 1 if any failed, 2 on
// a usage error or a missing package. The reply expected everywhere is the
// one /v1/chat/completions gives for the same prompt.
//
// Environment: CHECK_TIMEOUT_MS (one check's bound, default 20000), CHECKS
// (a comma list of the checks to run), PROMPT, ERROR_INPUT.

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { CheckError, PEERS, TIMEOUT, args, assert, check, checkHooks,
    describe, fail, finish, short } from './sdk_lib.mjs';

const { BASE, TOKEN } = args('serve_responses.mjs');
const KEY = TOKEN || 'no-token';
const PROMPT = process.env.PROMPT || 'what is using my disk?';
const ERROR_INPUT = process.env.ERROR_INPUT || 'server broke';
const NM = PEERS;

const req = createRequire(join(NM, 'noop.js'));
function load(name, from = req) {
	try {
		return from(name);
	} catch (e) {
		console.error(`serve_responses: cannot load ${name} from ${NM} ` +
		    `(${e.code || e.message}): run tools/setup`);
		process.exit(2);
	}
}
const OpenAImod = load('openai');
const OpenAI = OpenAImod.OpenAI || OpenAImod.default || OpenAImod;
const { APIError, AuthenticationError, BadRequestError } = OpenAI;
const { generateText, streamText } = load('ai');
const { createOpenAI } = load('@ai-sdk/openai');
const agents = load('@openai/agents');
// The Agents SDK brings its own openai major; its client must be that one.
const areq = createRequire(req.resolve('@openai/agents-openai'));
const AgentsOpenAImod = load('openai', areq);
const AgentsOpenAI = AgentsOpenAImod.OpenAI || AgentsOpenAImod.default;
const version = (p, r = req) => {
	try {
		let d = dirname(r.resolve(p));
		for (let i = 0; i < 4; i++, d = dirname(d)) {
			try { return r(join(d, 'package.json')).version; }
			catch { /* up */ }
		}
	} catch { /* only informative */ }
	return '?';
};

// Any warning an SDK prints, or node emits, fails the check it came in.
let warnings = [];
for (const k of ['warn', 'error']) {
	const orig = console[k];
	console[k] = (...a) => {
		warnings.push(a.map(String).join(' '));
		orig.apply(console, a);
	};
}
process.on('warning', (w) => warnings.push(`process warning: ${w.message}`));
globalThis.AI_SDK_LOG_WARNINGS = (ws) => {
	for (const w of ws ?? [])
		warnings.push(`ai sdk: ${JSON.stringify(w)}`);
};

// The runner clears the warnings before each check and fails it on any.
checkHooks({
	start: () => { warnings = []; },
	settled: () => assert(warnings.length === 0, `warnings: ${short(warnings)}`),
});

const oa = new OpenAI({ baseURL: BASE + '/v1', apiKey: KEY, maxRetries: 0,
    timeout: TIMEOUT });
let REPLY;

function checkResponse(r, what) {
	assert(r && typeof r === 'object', `${what}: not an object: ${short(r)}`);
	assert(r.object === 'response', `${what}: object is ${short(r.object)}`);
	assert(typeof r.id === 'string' && r.id.startsWith('resp_'), `${what}: id ${short(r.id)}`);
	assert(r.status === 'completed', `${what}: status ${short(r.status)}`);
	assert(typeof r.created_at === 'number', `${what}: created_at ${short(r.created_at)}`);
	const m = r.output?.[0];
	assert(r.output?.length === 1 && m.type === 'message' && m.role === 'assistant' &&
	    m.status === 'completed' && typeof m.id === 'string',
	    `${what}: output is ${short(r.output)}`);
	const c = m.content?.[0];
	assert(m.content.length === 1 && c.type === 'output_text' && Array.isArray(c.annotations),
	    `${what}: content is ${short(m.content)}`);
	assert(r.output_text === REPLY, `${what}: output_text ${short(r.output_text)}, want ${short(REPLY)}`);
	const u = r.usage;
	assert(u && ['input_tokens', 'output_tokens', 'total_tokens'].every((k) => typeof u[k] === 'number') &&
	    u.total_tokens === u.input_tokens + u.output_tokens, `${what}: usage ${short(u)}`);
}

// What the same turn answers on the chat endpoint.
await check('reply', async (signal) => {
	const r = await oa.chat.completions.create(
	    { model: 'skillbox', messages: [{ role: 'user', content: PROMPT }] }, { signal });
	REPLY = r.choices?.[0]?.message?.content;
	assert(typeof REPLY === 'string' && REPLY, `chat reply ${short(r)}`);
	return `(${short(REPLY)}; openai ${version('openai')}, ai ${version('ai')}, ` +
	    `@ai-sdk/openai ${version('@ai-sdk/openai')}, @openai/agents ` +
	    `${version('@openai/agents')} on openai ${version('openai', areq)})`;
});
if (typeof REPLY !== 'string') {
	fail('no reply to compare with');
	finish();
}

await check('create', async (signal) => {
	checkResponse(await oa.responses.create({ model: 'skillbox', input: PROMPT }, { signal }),
	    'create');
});

await check('create_items', async (signal) => {
	const r = await oa.responses.create({
		model: 'skillbox', instructions: 'be brief', store: false,
		input: [
			{ role: 'system', content: 'ignored: the skills rule' },
			{ type: 'message', role: 'user', content: [{ type: 'input_text', text: PROMPT }] },
		],
	}, { signal });
	checkResponse(r, 'create');
	assert(!r.id.slice(5).includes('_'), `store: false, yet the id names a session: ${r.id}`);
});

await check('stream_raw', async (signal) => {
	const s = await oa.responses.create({ model: 'skillbox', input: PROMPT, stream: true }, { signal });
	const evs = [];
	for await (const e of s)
		evs.push(e);
	evs.forEach((e, i) => assert(e.sequence_number === i, `event ${i} has sequence_number ${e.sequence_number}`));
	const types = evs.map((e) => e.type);
	assert(types[0] === 'response.created' && types.at(-1) === 'response.completed',
	    `events ${short(types)}`);
	for (const t of ['response.output_item.added', 'response.content_part.added',
	    'response.output_text.done', 'response.content_part.done', 'response.output_item.done'])
		assert(types.filter((x) => x === t).length === 1, `${t} not once in ${short(types)}`);
	const deltas = evs.filter((e) => e.type === 'response.output_text.delta');
	assert(deltas.length >= 1, 'no delta');
	const text = deltas.map((e) => e.delta).join('');
	assert(text === REPLY, `deltas join to ${short(text)}`);
	const done = evs.find((e) => e.type === 'response.output_text.done');
	assert(done.text === REPLY, `output_text.done has ${short(done.text)}`);
	const fin = evs.at(-1).response;
	assert(fin.id === evs[0].response.id, 'the id changed');
	checkResponse({ ...fin, output_text: fin.output[0]?.content?.[0]?.text }, 'response.completed');
	return `(${evs.length} events)`;
});

await check('stream_helper', async (signal) => {
	const s = oa.responses.stream({ model: 'skillbox', input: PROMPT }, { signal });
	let text = '';
	s.on('response.output_text.delta', (e) => { text += e.delta; });
	const r = await s.finalResponse();
	checkResponse(r, 'finalResponse');
	assert(text === REPLY, `deltas ${short(text)}`);
});

// previous_response_id goes on in the first response's session.
await check('previous_response_id', async (signal) => {
	const a = await oa.responses.create({ model: 'skillbox', input: PROMPT }, { signal })
	    .withResponse();
	const b = await oa.responses.create({ model: 'skillbox', input: PROMPT,
	    previous_response_id: a.data.id }, { signal }).withResponse();
	checkResponse(b.data, 'second');
	const sa = a.response.headers.get('x-skillbox-session');
	const sb = b.response.headers.get('x-skillbox-session');
	assert(sa && sa === sb, `sessions ${sa} and ${sb}`);
	assert(a.data.id !== b.data.id, 'the same id twice');
	const hdr = TOKEN ? { authorization: `Bearer ${TOKEN}` } : {};
	const lr = await fetch(`${BASE}/api/v1/sessions/${encodeURIComponent(sa)}`, { headers: hdr, signal });
	const users = (await lr.text()).split('\n').filter((l) => l.includes('"type":"user"'));
	assert(users.length === 2, `session ${sa} holds ${users.length} user events`);
	return `(${sa})`;
});

// Requests the server must refuse with 400 and OpenAI's error shape.
const bad = {
	no_input: { model: 'skillbox' },
	input_number: { input: 7 },
	input_object: { input: { role: 'user', content: 'hi' } },
	input_empty: { input: [] },
	item_type: { input: [{ type: 'function_call_output', call_id: 'c1', output: 'x' }] },
	item_no_role: { input: [{ type: 'message', content: 'hi' }] },
	item_no_text: { input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'x' }] }] },
	instructions_type: { input: PROMPT, instructions: 5 },
	stream_type: { input: PROMPT, stream: 'yes' },
	previous_unknown: { input: PROMPT, previous_response_id: 'resp_1_6e6f2d73756368' },
	previous_garbage: { input: PROMPT, previous_response_id: 'chatcmpl-1' },
	item_reference_unknown: { input: [{ type: 'item_reference', id: 'msg_1' },
	    { role: 'user', content: PROMPT }] },
	item_reference_no_id: { input: [{ type: 'item_reference' }, { role: 'user', content: PROMPT }] },
};
for (const [name, body] of Object.entries(bad)) {
	await check(`bad_${name}`, async (signal) => {
		const res = await fetch(BASE + '/v1/responses', {
			method: 'POST', signal, body: JSON.stringify(body),
			headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
		});
		const txt = await res.text();
		assert(res.status === 400, `status ${res.status}: ${short(txt)}`);
		let err;
		try { err = JSON.parse(txt).error; } catch { /* below */ }
		assert(err && typeof err.message === 'string' && err.type === 'invalid_request_error',
		    `body ${short(txt)}`);
		// The SDK raises the same as BadRequestError, with the message.
		try {
			await oa.responses.create(body, { signal });
		} catch (e) {
			assert(e instanceof BadRequestError, `SDK: ${describe(e)}`);
			assert(e.message.includes(err.message), `SDK message ${short(e.message)}`);
			return `(${err.message})`;
		}
		throw new CheckError('the SDK took it');
	});
}

// A stored response of store: false cannot be gone on from.
await check('previous_not_stored', async (signal) => {
	const a = await oa.responses.create({ input: PROMPT, store: false }, { signal });
	try {
		await oa.responses.create({ input: PROMPT, previous_response_id: a.id }, { signal });
	} catch (e) {
		assert(e instanceof BadRequestError, describe(e));
		return;
	}
	throw new CheckError('went on from a response that was not stored');
});

if (TOKEN) {
	await check('auth', async (signal) => {
		const c = new OpenAI({ baseURL: BASE + '/v1', apiKey: 'wrong-token', maxRetries: 0 });
		try {
			await c.responses.create({ input: PROMPT }, { signal });
		} catch (e) {
			assert(e instanceof AuthenticationError && e.status === 401, describe(e));
			return;
		}
		throw new CheckError('a wrong token was taken');
	});
}

// A failed turn: an APIError once, no retry, streamed or not.
await check('error', async (signal) => {
	let calls = 0;
	const c = new OpenAI({ baseURL: BASE + '/v1', apiKey: KEY, maxRetries: 2,
	    fetch: (u, i) => { calls++; return fetch(u, i); } });
	try {
		await c.responses.create({ input: ERROR_INPUT }, { signal });
		throw new CheckError('no error');
	} catch (e) {
		assert(e instanceof APIError && e.status >= 500, describe(e));
	}
	assert(calls === 1, `${calls} requests`);
	try {
		const s = await c.responses.create({ input: ERROR_INPUT, stream: true }, { signal });
		for await (const ev of s)
			void ev;
		throw new CheckError('the stream ended without an error');
	} catch (e) {
		assert(e instanceof APIError && e.message, describe(e));
	}
	assert(calls === 2, `${calls} requests`);
});

// The Vercel AI SDK: openai(MODEL) is its Responses API model.
const ai = createOpenAI({ baseURL: BASE + '/v1', apiKey: KEY });
await check('ai_generateText', async (signal) => {
	const r = await generateText({ model: ai('skillbox'), prompt: PROMPT, abortSignal: signal,
	    maxRetries: 0 });
	assert(r.text === REPLY, `text ${short(r.text)}`);
	assert(r.finishReason === 'stop', `finishReason ${short(r.finishReason)}`);
	assert(!r.warnings?.length, `warnings ${short(r.warnings)}`);
	assert(r.usage?.outputTokens > 0, `usage ${short(r.usage)}`);
	assert(r.response?.id?.startsWith('resp_'), `response id ${short(r.response?.id)}`);
});
// A second turn that hands back the first's messages: the AI SDK sends
// the stored answer as an item_reference, which goes on in its session.
await check('ai_two_turns', async (signal) => {
	const bodies = [];
	const p = createOpenAI({ baseURL: BASE + '/v1', apiKey: KEY,
	    fetch: (u, i) => { bodies.push(String(i?.body ?? '')); return fetch(u, i); } });
	const first = [{ role: 'user', content: PROMPT }];
	const a = await generateText({ model: p('skillbox'), messages: first, abortSignal: signal,
	    maxRetries: 0 });
	const b = await generateText({ model: p('skillbox'), abortSignal: signal, maxRetries: 0,
	    messages: [...first, ...a.response.messages, { role: 'user', content: PROMPT }] });
	assert(b.text === REPLY, `text ${short(b.text)}`);
	assert(bodies[1]?.includes('"item_reference"'), `no item_reference sent: ${short(bodies[1])}`);
	const sa = a.response.headers?.['x-skillbox-session'];
	const sb = b.response.headers?.['x-skillbox-session'];
	assert(sa && sa === sb, `sessions ${sa} and ${sb}`);
});
await check('ai_streamText', async (signal) => {
	let err;
	const s = streamText({ model: ai('skillbox'), prompt: PROMPT, abortSignal: signal,
	    maxRetries: 0, onError: ({ error }) => { err = error; } });
	let text = '';
	for await (const d of s.textStream)
		text += d;
	assert(!err, `onError: ${describe(err)}`);
	assert(text === REPLY, `text ${short(text)}`);
	assert(await s.finishReason === 'stop', `finishReason ${await s.finishReason}`);
	assert((await s.usage)?.outputTokens > 0, 'no usage');
});

// The Agents SDK: one agent turn, then one streamed.
agents.setTracingDisabled(true);
agents.setDefaultOpenAIClient(new AgentsOpenAI({ baseURL: BASE + '/v1', apiKey: KEY,
    maxRetries: 0, timeout: TIMEOUT }));
const agent = new agents.Agent({ name: 'router', instructions: 'Answer briefly.',
    model: 'skillbox' });
await check('agents_run', async (signal) => {
	const r = await agents.run(agent, PROMPT, { signal });
	assert(r.finalOutput === REPLY, `finalOutput ${short(r.finalOutput)}`);
});
await check('agents_run_stream', async (signal) => {
	const r = await agents.run(agent, PROMPT, { stream: true, signal });
	let text = '';
	for await (const d of r.toTextStream())
		text += d;
	await r.completed;
	assert(text === REPLY, `streamed ${short(text)}`);
	assert(r.finalOutput === REPLY, `finalOutput ${short(r.finalOutput)}`);
});

finish();
