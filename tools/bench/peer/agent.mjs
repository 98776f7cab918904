// tools/bench/peer/agent.mjs - the peer make bench measures skillbox
// against: the same job written the way a user of the OpenAI Agents SDK
// would write it. One agent with one function tool, run_skill_script, that
// runs a skill's script with sh (JSON on stdin, as skillbox does) and
// returns {"exit":N,"stdout":...}. The model is the Chat Completions API at
// BENCH_BASE_URL (the mock), streamed; its CA comes from NODE_EXTRA_CA_CERTS.
//
// usage: node agent.mjs "prompt"   one turn, print the answer, exit
//        node agent.mjs --repl     one turn per stdin line, one answer line
//                                  each; every turn starts without history
//        node agent.mjs --serve PORTFILE
//                                  the agent behind a minimal node:http
//                                  server on 127.0.0.1 (any free port,
//                                  written to PORTFILE): GET /health,
//                                  GET /v1/models, POST /v1/chat/completions
//                                  (streamed or not; the last user message
//                                  is the prompt), as skillbox serve has
// env:   BENCH_BASE_URL (https://host:port), BENCH_MODEL, BENCH_SKILLS
//        (the skills folder), OPENAI_API_KEY, NODE_EXTRA_CA_CERTS
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import readline from 'node:readline';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';

setTracingDisabled(true);

const skills = path.resolve(process.env.BENCH_SKILLS ?? 'skills');

function runScript(skill, script) {
	const dir = path.join(skills, skill);
	const file = path.resolve(dir, script);
	if (!/^[a-z0-9-]+$/.test(skill) || !file.startsWith(dir + path.sep))
		return Promise.resolve(JSON.stringify({ exit: 2, error: 'bad skill or script path' }));
	return new Promise((resolve) => {
		const child = spawn('sh', [file], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
		const out = [];
		const err = [];
		const timer = setTimeout(() => child.kill('SIGKILL'), 30000);
		child.stdout.on('data', (d) => out.push(d));
		child.stderr.on('data', (d) => err.push(d));
		child.on('error', (e) => {
			clearTimeout(timer);
			resolve(JSON.stringify({ exit: 127, error: String(e) }));
		});
		child.on('close', (code) => {
			clearTimeout(timer);
			const text = Buffer.concat(out).toString();
			let stdout = text;
			try { stdout = JSON.parse(text); } catch { /* plain text */ }
			resolve(JSON.stringify({ exit: code ?? 128, stdout,
			    stderr: Buffer.concat(err).toString() }));
		});
		child.stdin.end('{}');
	});
}

const runSkillScript = tool({
	name: 'run_skill_script',
	description: "Run one of a skill's scripts. JSON on its stdout is returned as structured output.",
	parameters: z.object({
		skill: z.string().describe('Skill name.'),
		script: z.string().describe('Path relative to the skill folder, e.g. scripts/overview.sh.'),
	}),
	execute: async ({ skill, script }) => runScript(skill, script),
});

// Skills are used as skillbox's inline mode uses them: the model reads a
// skill's instructions first (activate_skill), then runs its scripts.
const activateSkill = tool({
	name: 'activate_skill',
	description: "Load a skill's full instructions.",
	parameters: z.object({ name: z.string().describe('Skill name.') }),
	execute: async ({ name }) => {
		if (!/^[a-z0-9-]+$/.test(name))
			return 'no such skill';
		try {
			const body = await fs.promises.readFile(path.join(skills, name, 'SKILL.md'), 'utf8');
			return `<skill name="${name}">\n${body}\n</skill>`;
		} catch {
			return 'no such skill';
		}
	},
});

const agent = new Agent({
	name: 'device assistant',
	instructions: 'You are an assistant running on a small Linux device. Answer briefly. ' +
	    'Use the skills to inspect the device: sysinfo (uptime, load, memory, disk, ' +
	    'processes), netdiag (interfaces, routes, DNS). Read a skill with activate_skill, then ' +
	    'run its scripts with run_skill_script.',
	tools: [activateSkill, runSkillScript],
});

const runner = new Runner({
	modelProvider: new OpenAIProvider({
		baseURL: `${process.env.BENCH_BASE_URL}/v1`,
		apiKey: process.env.OPENAI_API_KEY,
		useResponses: false,
	}),
	model: process.env.BENCH_MODEL ?? 'gpt-4o-mini',
	tracingDisabled: true,
});

// Streamed, as skillbox always asks for: both read the same SSE replies.
async function turn(prompt) {
	const result = await runner.run(agent, prompt, { stream: true });
	await result.completed;
	if (result.error)
		throw result.error;
	return String(result.finalOutput).replace(/\n/g, ' ');
}

// The same endpoints skillbox serve answers, for `make bench`'s serve
// figures: what a Node user would write with node:http and the SDK.
function serve(portFile) {
	const json = (res, code, obj) => {
		const b = JSON.stringify(obj);
		res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(b) });
		res.end(b);
	};
	const server = http.createServer((req, res) => {
		if (req.method === 'GET' && req.url === '/health')
			return json(res, 200, { status: 'ok' });
		if (req.method === 'GET' && req.url === '/v1/models')
			return json(res, 200, { object: 'list', data: [{ id: 'peer', object: 'model', created: 0, owned_by: 'peer' }] });
		if (req.method !== 'POST' || req.url !== '/v1/chat/completions')
			return json(res, 404, { error: { message: 'no such path' } });
		let body = '';
		req.on('data', (d) => { body += d; });
		req.on('end', async () => {
			let q;
			try { q = JSON.parse(body); } catch { return json(res, 400, { error: { message: 'bad JSON' } }); }
			const user = (q.messages ?? []).filter((m) => m.role === 'user').pop();
			const prompt = typeof user?.content === 'string' ? user.content : '';
			const id = `chatcmpl-${Date.now()}`;
			const chunk = (delta, finish) => `data: ${JSON.stringify({ id, object: 'chat.completion.chunk',
			    created: 0, model: 'peer', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
			try {
				const result = await runner.run(agent, prompt, { stream: true });
				if (!q.stream) {
					await result.completed;
					return json(res, 200, { id, object: 'chat.completion', created: 0, model: 'peer',
					    choices: [{ index: 0, message: { role: 'assistant', content: String(result.finalOutput) }, finish_reason: 'stop' }] });
				}
				res.writeHead(200, { 'content-type': 'text/event-stream' });
				res.write(chunk({ role: 'assistant', content: '' }, null));
				for await (const t of result.toTextStream())
					res.write(chunk({ content: t }, null));
				await result.completed;
				res.end(chunk({}, 'stop') + 'data: [DONE]\n\n');
			} catch (e) {
				if (!res.headersSent)
					return json(res, 500, { error: { message: String(e) } });
				res.end(`data: ${JSON.stringify({ error: { message: String(e) } })}\n\n`);
			}
		});
	});
	server.listen(0, '127.0.0.1', () => fs.writeFileSync(portFile, `${server.address().port}\n`));
}

if (process.argv[2] === '--serve' && process.argv.length === 4) {
	serve(process.argv[3]);
} else if (process.argv[2] === '--repl') {
	const rl = readline.createInterface({ input: process.stdin, terminal: false });
	for await (const line of rl) {
		if (line.trim() === '') continue;
		process.stdout.write(`${await turn(line)}\n`);
	}
} else if (process.argv.length === 3) {
	process.stdout.write(`${await turn(process.argv[2])}\n`);
} else {
	process.stderr.write('usage: node agent.mjs "prompt" | --repl | --serve PORTFILE\n');
	process.exit(2);
}
