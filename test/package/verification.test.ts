/**
 * The rows of CONTRIBUTING.md's "Verification" table that a test can keep true: what n8n's verification
 * guidelines, its submission checklist and its UX guidelines ask of a verified community node, checked on
 * package.json, the node and credential sources and the descriptions n8n loads.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

import type {
	ICredentialDataDecryptedObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	INodeProperties,
} from 'n8n-workflow';

import { MarketplaceApi } from '../../credentials/MarketplaceApi.credentials';
import { Marketplace } from '../../nodes/Marketplace/Marketplace.node';
import { MarketplacePollingTrigger } from '../../nodes/MarketplacePollingTrigger/MarketplacePollingTrigger.node';
import { MarketplaceTrigger } from '../../nodes/MarketplaceTrigger/MarketplaceTrigger.node';
import { ROUTES, type RouteName } from '../../nodes/shared/routes';
import { apiRequest } from '../../nodes/shared/transport/request';

const repoRoot = resolve(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(repoRoot, file), 'utf8');
const manifest = JSON.parse(read('package.json'));

/** The published sources: every .ts under nodes/ and credentials/, relative to the repository. */
function sources(): string[] {
	const out: string[] = [];
	const walk = (dir: string) => {
		for (const name of readdirSync(join(repoRoot, dir))) {
			const path = `${dir}/${name}`;
			if (statSync(join(repoRoot, path)).isDirectory()) walk(path);
			else if (path.endsWith('.ts')) out.push(path);
		}
	};
	walk('nodes');
	walk('credentials');
	return out;
}

const credential = new MarketplaceApi();
const descriptions = [
	new Marketplace().description,
	new MarketplaceTrigger().description,
	new MarketplacePollingTrigger().description,
];

/** Every parameter and option, at every nesting level. */
function* everyProperty(properties: INodeProperties[]): Generator<Record<string, unknown>> {
	for (const property of properties as unknown as Array<Record<string, unknown>>) {
		yield property;
		for (const nested of [property.options, property.values])
			if (Array.isArray(nested)) yield* everyProperty(nested as INodeProperties[]);
	}
}

describe("n8n's own tool checks the package", () => {
	test('npm run lint runs n8n-node lint first, then our further checks; eslint.config.mjs is its template', () => {
		expect(manifest.scripts.lint).toBe(
			'npm run --silent lint:n8n-node && npm run --silent lint:more',
		);
		expect(read('.ci/n8n-node-lint')).toMatch(
			/\nnpx --no-install n8n-node lint "\$@" < \/dev\/null\n$/,
		);
		// the file the tool's strict mode compares with (its exports do not name it)
		const template =
			'node_modules/@n8n/node-cli/dist/template/templates/shared/default/eslint.config.mjs';
		const words = (text: string) => text.replace(/\s+/g, ' ').trim();
		expect(words(read('eslint.config.mjs'))).toBe(words(read(template)));
	});

	test("npm run build is n8n-node build, then gulp's build:dist; release and prepublishOnly are n8n-node's", () => {
		expect(manifest.scripts.build).toBe('n8n-node build && gulp build:dist');
		expect(read('gulpfile.js')).toMatch(/\btask\('build:dist',/);
		// n8n-node build runs plain `tsc`: tsconfig.json must emit into dist/ and take the codex and schema JSON
		const tsconfig = JSON.parse(read('tsconfig.json'));
		expect(tsconfig.compilerOptions.outDir.replace(/^\.\/|\/$/g, '')).toBe('dist');
		expect(tsconfig.compilerOptions.resolveJsonModule).toBe(true);
		expect(tsconfig.include).toEqual(expect.arrayContaining(['nodes/**/*.json']));
		expect(manifest.scripts.release).toBe('n8n-node release');
		expect(manifest.scripts.prepublishOnly).toBe('n8n-node prerelease');
	});
});

describe('package.json', () => {
	test('no runtime dependencies: nothing in dependencies or bundleDependencies; n8n-workflow is a peer', () => {
		expect(Object.keys(manifest.dependencies ?? {})).toEqual([]);
		expect(manifest.bundleDependencies ?? manifest.bundledDependencies ?? []).toEqual([]);
		expect(manifest.peerDependencies).toEqual({ 'n8n-workflow': '*' });
	});

	test('MIT, a community-node name and keyword, one repository of its own (no monorepo directory)', () => {
		expect(manifest.license).toBe('MIT');
		expect(read('LICENSE')).toMatch(/^MIT License/);
		expect(manifest.name).toMatch(/^n8n-nodes-/);
		expect(manifest.keywords).toContain('n8n-community-node-package');
		expect(manifest.repository.url).toMatch(/^git\+https:\/\/github\.com\/[^/]+\/[^/]+\.git$/);
		expect(manifest.repository.directory).toBeUndefined();
		expect(manifest.homepage.replace(/#.*$/, '')).toBe(
			manifest.repository.url.replace(/^git\+/, '').replace(/\.git$/, ''),
		);
	});
});

describe('the node and credential sources', () => {
	const files = sources();

	test('read no environment variable and touch no file or process (no fs, child_process)', () => {
		expect(files.length).toBeGreaterThan(30);
		const problems: string[] = [];
		for (const file of files) {
			const text = read(file);
			if (/\bprocess\s*\.\s*env\b|\bglobalThis\s*\.\s*process\b/.test(text))
				problems.push(`${file}: process.env`);
			for (const [, module] of text.matchAll(
				/(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*)['"]((?:node:)?(?:fs|fs\/promises|child_process))['"]/g,
			))
				problems.push(`${file}: ${module}`);
		}
		expect(problems).toEqual([]);
	});

	test('English only: no letter outside English in a source, strings and comments alike', () => {
		const problems = files.flatMap((file) =>
			read(file)
				.split('\n')
				.flatMap((line, i) =>
					/[^\p{ASCII}]/u.test(line) && /[^\p{ASCII}\P{L}]/u.test(line) ? [`${file}:${i + 1}`] : [],
				),
		);
		expect(problems).toEqual([]);
	});

	test('send requests only through the transport (the trigger sends none to its own n8n)', () => {
		const calls = files.flatMap((file) =>
			[
				...read(file).matchAll(
					/helpers\.(httpRequest\w*|request\w*)\s*(?:\.call)?\(|\bfetch\s*\(|from\s+['"](?:node:)?(https?|http2|net|tls|dgram|undici|axios)['"]/g,
				),
			].map((m) => `${file}: ${m[0].replace(/\s+/g, ' ')}`),
		);
		expect(calls).toEqual([
			'nodes/shared/transport/request.ts: helpers.httpRequestWithAuthentication.call(',
		]);
	});

	test("no cast to reach what n8n-workflow does not export: 'as unknown as' only on data", () => {
		const casts = files.flatMap((file) =>
			read(file)
				.split('\n')
				.flatMap((line, i) =>
					/as unknown as/.test(line) && !/as unknown as (IDataObject|JsonObject)\b/.test(line)
						? [`${file}:${i + 1}: ${line.trim()}`]
						: [],
				),
		);
		expect(casts).toEqual([]);
	});
});

describe("every request of the nodes goes to the credential's Base URL", () => {
	test('the route table holds paths under /v1, no address', () => {
		for (const route of Object.values(ROUTES)) expect(route.path).toMatch(/^\/v1\/[^:]*$/);
	});

	test('the transport joins each route to the Base URL the credential holds (and only that)', async () => {
		const baseUrl = 'https://marketplace.example.test/api';
		const urls: string[] = [];
		const ctx = {
			getNode: () => ({ name: 'Marketplace', credentials: { marketplaceApi: { id: 'c1' } } }),
			getCredentials: async () =>
				({ baseUrl: `${baseUrl}/`, apiKey: 'k' }) as ICredentialDataDecryptedObject,
			helpers: {
				httpRequestWithAuthentication: async (type: string, options: IHttpRequestOptions) => {
					expect(type).toBe('marketplaceApi');
					urls.push(options.url);
					return { statusCode: 200, headers: {}, body: {} };
				},
			},
		} as unknown as IExecuteFunctions;
		for (const name of Object.keys(ROUTES) as RouteName[]) {
			const path = ROUTES[name].path;
			const pathParams = Object.fromEntries(
				[...path.matchAll(/\{(\w+)\}/g)].map(([, p]) => [p, 7]),
			);
			await apiRequest.call(ctx, {
				route: name,
				pathParams,
				query: { page: 1 },
				idempotencyKey: 'key',
			});
		}
		expect(urls).toHaveLength(Object.keys(ROUTES).length);
		for (const url of urls) expect(url.startsWith(`${baseUrl}/v1/`)).toBe(true);
	});

	test("the credential test asks the credential's Base URL too", () => {
		const request = credential.test.request;
		expect(request.baseURL).toMatch(/^=\{\{\s*\$credentials\.baseUrl\b/);
		expect(request.url).toMatch(/^\/v1\//);
	});
});

describe("the node panel (n8n's UX guidelines)", () => {
	const marketplace = [...everyProperty(descriptions[0].properties)];

	test('English only: every name, description, hint, placeholder and action n8n shows', () => {
		const shown: string[] = [credential.displayName];
		for (const description of descriptions) {
			shown.push(
				description.displayName,
				description.description,
				String(description.defaults.name),
			);
			for (const property of everyProperty(description.properties))
				for (const key of ['displayName', 'name', 'description', 'hint', 'placeholder', 'action'])
					if (typeof property[key] === 'string' && (key !== 'name' || !('type' in property)))
						shown.push(property[key] as string);
		}
		for (const property of everyProperty(credential.properties))
			for (const key of ['displayName', 'description', 'placeholder'])
				if (typeof property[key] === 'string') shown.push(property[key] as string);
		expect(shown.length).toBeGreaterThan(150);
		// ASCII and the typographic punctuation of English text (quotes, dashes, the ellipsis)
		expect(
			shown.filter(
				(text) => !/^[\x20-\x7E\n\u2018\u2019\u201C\u201D\u2013\u2014\u2026]*$/.test(text),
			),
		).toEqual([]);
	});

	test("Connect's channel secrets are its masked fields, the only ones a node has", () => {
		// n8n keeps node parameters in the workflow: a field the editor masks is a secret README explains
		const masked = descriptions.flatMap((d) =>
			[...everyProperty(d.properties)]
				.filter((p) => (p.typeOptions as { password?: boolean } | undefined)?.password)
				.map((p) => [d.name, String(p.name), p.type, (p.noDataExpression as boolean) ?? false]),
		);
		expect(masked).toEqual(
			['apiKey', 'apiSecret', 'logInPassword'].map((name) => [
				'marketplace',
				name,
				'string',
				false,
			]),
		);
		// ...in Connect's Additional Fields, so only those added are sent
		const connectFields = marketplace.find(
			(p) =>
				p.name === 'additionalFields' && JSON.stringify(p.displayOptions).includes('"connect"'),
		);
		expect((connectFields?.options as Array<{ name: string }>).map((o) => o.name)).toEqual(
			expect.arrayContaining(['apiKey', 'apiSecret', 'logInPassword']),
		);
	});

	test('pickers are resource locators that open on From List', () => {
		const locators = marketplace.filter((p) => p.type === 'resourceLocator');
		expect(locators.length).toBeGreaterThan(0);
		for (const locator of locators) {
			expect(locator.default).toMatchObject({ mode: 'list' });
			expect((locator.modes as Array<{ name: string }>)[0].name).toBe('list');
		}
	});

	test('placeholders with an example start with "e.g." (every node and the credential)', () => {
		const examples = [
			...descriptions.flatMap((d) => [...everyProperty(d.properties)]),
			...everyProperty(credential.properties),
		]
			.map((p) => p.placeholder)
			.filter((p): p is string => typeof p === 'string' && !/^(Add|Select) /.test(p));
		expect(examples.length).toBeGreaterThan(5);
		expect(examples.filter((p) => !p.startsWith('e.g. '))).toEqual([]);
	});

	test('no output needs Simplify: every output schema has at most 10 fields', () => {
		const problems: string[] = [];
		const walk = (dir: string) => {
			for (const name of readdirSync(join(repoRoot, dir))) {
				const path = `${dir}/${name}`;
				if (statSync(join(repoRoot, path)).isDirectory()) walk(path);
				else if (path.endsWith('.json')) {
					const fields = Object.keys(JSON.parse(read(path)).properties ?? {}).length;
					if (fields > 10) problems.push(`${relative('nodes', path)}: ${fields}`);
				}
			}
		};
		walk('nodes/Marketplace/__schema__');
		expect(problems).toEqual([]);
	});
});
