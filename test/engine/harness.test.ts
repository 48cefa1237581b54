import http from 'node:http';
import type { AddressInfo } from 'node:net';

import type {
	ICredentialType,
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	IHttpRequestMethods,
} from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { runNode } from './harness';

interface Seen {
	method: string;
	url: string;
	headers: http.IncomingHttpHeaders;
	body: string;
}

/** A tiny loopback API: records requests; /fail/<status> answers with that status. */
async function startApi() {
	const seen: Seen[] = [];
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			const entry = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() };
			seen.push(entry);
			const fail = /^\/fail\/(\d{3})/.exec(entry.url);
			if (fail) {
				res.writeHead(Number(fail[1]), { 'content-type': 'application/json' });
				res.end(JSON.stringify({ error: { code: 'nope', message: `failed with ${fail[1]}` } }));
				return;
			}
			if (entry.url.startsWith('/me') && req.headers.authorization !== 'Bearer good-key') {
				res.writeHead(401, { 'content-type': 'application/json' });
				res.end(JSON.stringify({ error: 'unauthorized' }));
				return;
			}
			res.writeHead(200, { 'content-type': 'application/json' });
			res.end(JSON.stringify({ method: entry.method, url: entry.url, authorization: req.headers.authorization ?? null }));
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return { seen, baseUrl: `http://127.0.0.1:${port}`, close: async () => await new Promise<void>((r) => server.close(() => r())) };
}

const testApiCredential: ICredentialType = {
	name: 'harnessTestApi',
	displayName: 'Harness Test API',
	properties: [
		{ displayName: 'Base URL', name: 'baseUrl', type: 'string', default: 'http://127.0.0.1:1' },
		{ displayName: 'API Key', name: 'apiKey', type: 'string', typeOptions: { password: true }, default: '' },
	],
	authenticate: {
		type: 'generic',
		properties: { headers: { Authorization: '=Bearer {{$credentials.apiKey}}' } },
	},
	test: { request: { baseURL: '={{$credentials.baseUrl}}', url: '/me' } },
};

const echoNode: INodeType = {
	description: {
		displayName: 'Echo',
		name: 'harnessEcho',
		group: ['transform'],
		version: 1,
		description: 'Calls the API for each item',
		defaults: { name: 'Echo' },
		inputs: ['main'],
		outputs: ['main'],
		credentials: [{ name: 'harnessTestApi', required: true }],
		properties: [
			{ displayName: 'Path', name: 'path', type: 'string', default: '/orders' },
			{ displayName: 'Method', name: 'method', type: 'string', default: 'GET' },
		],
	} as INodeType['description'],
	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		const out: INodeExecutionData[] = [];
		const credentials = await this.getCredentials('harnessTestApi');
		for (let i = 0; i < items.length; i++) {
			try {
				const response = (await this.helpers.httpRequestWithAuthentication.call(this, 'harnessTestApi', {
					method: this.getNodeParameter('method', i) as IHttpRequestMethods,
					url: `${credentials.baseUrl as string}${this.getNodeParameter('path', i) as string}`,
					json: true,
				})) as IDataObject;
				out.push({ json: response, pairedItem: { item: i } });
			} catch (error) {
				if (this.continueOnFail()) {
					out.push({ json: { error: (error as Error).message }, pairedItem: { item: i } });
					continue;
				}
				throw new NodeApiError(this.getNode(), error as never, { itemIndex: i });
			}
		}
		return [out];
	},
};

describe('runNode', () => {
	let api: Awaited<ReturnType<typeof startApi>>;
	beforeAll(async () => (api = await startApi()));
	afterAll(async () => await api.close());

	test('sends the Authorization header, resolves expressions per item, keeps pairedItem', async () => {
		const result = await runNode({
			node: echoNode,
			credentialTypes: [testApiCredential],
			credentials: { harnessTestApi: { baseUrl: api.baseUrl, apiKey: 'good-key' } },
			parameters: { path: '=/orders/{{ $json.orderId }}', method: 'GET' },
			inputItems: [{ json: { orderId: 'A-1' } }, { json: { orderId: 'B-2' } }],
		});
		console.log(JSON.stringify(result.error), JSON.stringify(result.outputs));
		expect(result.error).toBeUndefined();
	});
});
