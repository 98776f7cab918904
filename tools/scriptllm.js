#!/usr/bin/env node
// tools/scriptllm.js - a scripted model for hostile-model tests: an OpenAI
// Chat Completions server on 127.0.0.1 that answers each request with the
// next step of a script, whatever was asked.
//
// usage: node tools/scriptllm.js DIR
//   DIR/script.json  a JSON array of steps, read again when it changes:
//                      {"text": "..."}                   an answer
//                      {"calls": [[NAME, ARGS], ...]}     tool calls (ARGS an
//                                                         object or a string)
//                      {"raw": "..."}                    these bytes, then close
//                      {"drip": N, "every": MS}          N SSE comments MS apart
//                                                         (a reply kept alive)
//                    and in any step:
//                      "match": "TEXT"   the step is for a request whose body
//                                        holds TEXT (requests made at once)
//                      "delay": MS       answer after MS milliseconds
//   DIR/cert.pem, DIR/key.pem  if there, HTTPS (TLS) with them
//   DIR/port         written once listening
//   DIR/journal      one line per request: its JSON body
//   DIR/inflight     the most requests that were open at once
// Each request takes the first step not yet taken whose "match", if any,
// is in its body; past the end the answer is "(script exhausted)".
// Writing script.json starts from its first step again. The server stops
// by itself after 10 minutes.
'use strict';
const fs = require('fs');
const http = require('http');
const https = require('https');
const path = require('path');

const dir = process.argv[2];
if (!dir) {
	process.stderr.write('usage: scriptllm.js DIR\n');
	process.exit(2);
}
const scriptFile = path.join(dir, 'script.json');
let steps = [], used = [], pos = 0, stamp = '', open = 0, most = 0;

function load() {
	let st;
	try {
		st = fs.statSync(scriptFile);
	} catch (e) {
		steps = [];
		return;
	}
	const s = `${st.mtimeMs}:${st.size}:${st.ino}`;
	if (s !== stamp) {
		stamp = s;
		steps = JSON.parse(fs.readFileSync(scriptFile, 'utf8'));
		used = steps.map(() => false);
		pos = 0;
		most = 0;
		fs.writeFileSync(path.join(dir, 'inflight'), '0');
	}
}

function chunk(res, delta, finish) {
	const c = { id: 'chatcmpl-script', object: 'chat.completion.chunk',
	    model: 'script', choices: [{ index: 0, delta }] };
	if (finish)
		c.choices[0].finish_reason = finish;
	res.write(`data: ${JSON.stringify(c)}\n\n`);
}

function answer(req, res, step) {
	if (step.raw !== undefined) {
		req.socket.end(Buffer.from(step.raw, 'utf8'));
		return;
	}
	res.writeHead(200, { 'Content-Type': 'text/event-stream',
	    'Connection': 'close' });
	if (step.drip !== undefined) {
		let n = 0;
		const t = setInterval(() => {
			if (n++ >= step.drip || res.destroyed) {
				clearInterval(t);
				res.end();
				return;
			}
			res.write(': keepalive\n\n');
		}, step.every || 1000);
		return;
	}
	chunk(res, { role: 'assistant', content: '' });
	if (step.calls) {
		step.calls.forEach(([name, args], i) => {
			chunk(res, { tool_calls: [{ index: i, id: `call_${pos}_${i}`,
			    type: 'function', function: { name, arguments:
			    typeof args === 'string' ? args :
			    JSON.stringify(args) } }] });
		});
		chunk(res, {}, 'tool_calls');
	} else {
		chunk(res, { content: step.text }, null);
		chunk(res, {}, 'stop');
	}
	res.end('data: [DONE]\n\n');
}

function handle(req, res) {
	let body = '';
	open++;
	res.on('close', () => { open--; });
	req.on('data', (d) => { body += d; });
	req.on('end', () => {
		fs.appendFileSync(path.join(dir, 'journal'),
		    body.replace(/\n/g, ' ') + '\n');
		load();
		if (open > most) {
			most = open;
			fs.writeFileSync(path.join(dir, 'inflight'), String(most));
		}
		const i = steps.findIndex((st, k) => !used[k] &&
		    (st.match === undefined || body.includes(st.match)));
		const step = i >= 0 ? steps[i] : { text: '(script exhausted)' };
		if (i >= 0)
			used[i] = true;
		pos++;
		if (step.delay)
			setTimeout(() => answer(req, res, step), step.delay);
		else
			answer(req, res, step);
	});
}

const cert = path.join(dir, 'cert.pem'), key = path.join(dir, 'key.pem');
const server = fs.existsSync(cert) ? https.createServer({
	cert: fs.readFileSync(cert), key: fs.readFileSync(key) }, handle) :
    http.createServer(handle);
server.listen(0, '127.0.0.1', () => {
	fs.writeFileSync(path.join(dir, 'port'), String(server.address().port));
});
setTimeout(() => process.exit(0), 600000).unref();
