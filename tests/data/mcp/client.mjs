// tests/data/mcp/client.mjs - the official MCP TypeScript SDK's client
// against `skillbox mcp serve`, for mcp.test.
// usage: node client.mjs NODE_MODULES SKILLBOX [ARGS...]
// Prints: the server's name, the tool names, then one line per call.
import { createRequire } from 'module';
const require = createRequire(process.argv[2] + '/');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const [, , , bin, ...args] = process.argv;
const transport = new StdioClientTransport({ command: bin, args: [...args, 'mcp', 'serve'],
    env: { ...process.env }, stderr: 'ignore' });
const client = new Client({ name: 'skillbox-test', version: '1.0.0' });
const timer = setTimeout(() => { console.log('timeout'); process.exit(1); }, 20000);
await client.connect(transport);
console.log('server ' + client.getServerVersion().name);
const { tools } = await client.listTools();
console.log('tools ' + tools.map(t => t.name).sort().join(','));
const show = (r) => console.log((r.isError ? 'error ' : 'ok ') + r.content.map(c => c.text).join('').replace(/\n/g, ' ').slice(0, 200));
show(await client.callTool({ name: 'read_skill_file', arguments: { skill: 'probe', path: 'SKILL.md' } }));
show(await client.callTool({ name: 'probe', arguments: { script: 'scripts/hello.sh', args: ['world'] } }));
show(await client.callTool({ name: 'probe', arguments: { script: 'scripts/nope.sh' } }));
show(await client.callTool({ name: 'nosuch', arguments: { script: 'x' } }));
await client.close();
clearTimeout(timer);
