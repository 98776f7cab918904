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
// env:   BENCH_BASE_URL (https://host:port), BENCH_MODEL, BENCH_SKILLS
//        (the skills folder), OPENAI_API_KEY, NODE_EXTRA_CA_CERTS
import { spawn } from 'node:child_process';
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

const agent = new Agent({
	name: 'device assistant',
	instructions: 'You are an assistant running on a small Linux device. Answer briefly. ' +
	    'Use the skills to inspect the device: sysinfo (uptime, load, memory, disk, ' +
	    'processes), netdiag (interfaces, routes, DNS). Run their scripts with run_skill_script.',
	tools: [runSkillScript],
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

if (process.argv[2] === '--repl') {
	const rl = readline.createInterface({ input: process.stdin, terminal: false });
	for await (const line of rl) {
		if (line.trim() === '') continue;
		process.stdout.write(`${await turn(line)}\n`);
	}
} else if (process.argv.length === 3) {
	process.stdout.write(`${await turn(process.argv[2])}\n`);
} else {
	process.stderr.write('usage: node agent.mjs "prompt" | --repl\n');
	process.exit(2);
}
