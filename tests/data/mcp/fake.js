// tests/data/mcp/fake.js - a hostile MCP server on stdio for mcp.test.
// usage: node fake.js MODE [STATEDIR]
//   ok       a plain server: tools "echo" and "read" (a file's text)
//   noisy    before each reply: a garbage line, a notification, and a
//            request of its own (ping, id 0); keys in odd order
//   huge     the first tools/call gets a 1 MiB line first, then its reply
//   silent   never answers tools/call
//   die      exits (status 3, a word on stderr) at the first tools/call
//            after each start, until STATEDIR/died exists
//   badver   answers initialize with protocol 1999-01-01
//   paged    tools/list in two pages (nextCursor)
//   changing after its reply to the first tools/call, a third tool
//            ("later") and notifications/tools/list_changed
// Every line it gets is appended to STATEDIR/got when STATEDIR is given.
'use strict';
const fs = require('fs');
const mode = process.argv[2] || 'ok', dir = process.argv[3];
let buf = '', calls = 0;
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const tools = [
	{ name: 'echo', description: 'Echo the text back.', inputSchema: { type: 'object',
	    properties: { text: { type: 'string' } }, required: ['text'] } },
	{ name: 'read', description: 'Read a file.', inputSchema: { type: 'object',
	    properties: { path: { type: 'string' } } } },
];
function reply(id, result) {
	if (mode === 'noisy') {
		process.stdout.write('this is not json\n');
		out({ method: 'notifications/message', params: { level: 'info', data: 'hi' }, jsonrpc: '2.0' });
		out({ method: 'ping', jsonrpc: '2.0', id: 0 });
		out({ result, id, jsonrpc: '2.0' });
	} else
		out({ jsonrpc: '2.0', id, result });
}
function handle(m) {
	if (m.method === 'initialize')
		return reply(m.id, { protocolVersion: mode === 'badver' ? '1999-01-01' : m.params.protocolVersion,
		    capabilities: { tools: {} }, serverInfo: { name: 'fake', version: '1' } });
	if (m.method === 'tools/list') {
		if (mode === 'paged' && !(m.params && m.params.cursor))
			return reply(m.id, { tools: [tools[0]], nextCursor: 'page2' });
		if (mode === 'paged')
			return reply(m.id, { tools: [tools[1]] });
		return reply(m.id, { tools });
	}
	if (m.method === 'tools/call') {
		calls++;
		if (mode === 'silent')
			return;
		if (mode === 'die' && !fs.existsSync(dir + '/died')) {
			fs.writeFileSync(dir + '/died', '1');
			process.stderr.write('fake: dying on purpose\n');
			process.exit(3);
		}
		if (mode === 'huge' && calls === 1)
			process.stdout.write('{"jsonrpc":"2.0","method":"x","params":"' + 'a'.repeat(1 << 20) + '"}\n');
		const a = m.params.arguments || {};
		if (mode === 'changing' && calls === 1) {
			// after the reply, in the same write: it waits in the pipe
			// for the client (two writes would race the next turn)
			tools.push({ name: 'later', description: 'Came later.', inputSchema: { type: 'object' } });
			return process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id,
			    result: { content: [{ type: 'text', text: 'fake echo: ' + a.text }] } }) +
			    '\n' + JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }) + '\n');
		}
		if (m.params.name === 'echo')
			return reply(m.id, { content: [{ type: 'text', text: 'fake echo: ' + a.text }] });
		if (m.params.name === 'read') {
			try {
				return reply(m.id, { content: [{ type: 'text', text: fs.readFileSync(a.path, 'utf8').replace(/\0/g, '\n') }] });
			} catch (e) {
				return reply(m.id, { content: [{ type: 'text', text: e.code }], isError: true });
			}
		}
		return reply(m.id, { content: [{ type: 'text', text: 'no tool ' + m.params.name }], isError: true });
	}
	if (m.id !== undefined && m.method)
		out({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
}
process.stdin.on('data', (d) => {
	buf += d;
	let i;
	while ((i = buf.indexOf('\n')) >= 0) {
		const line = buf.slice(0, i);
		buf = buf.slice(i + 1);
		if (dir)
			fs.appendFileSync(dir + '/got', line + '\n');
		handle(JSON.parse(line));
	}
});
process.stdin.on('end', () => process.exit(0));
