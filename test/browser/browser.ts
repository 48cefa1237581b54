/**
 * Headless Chromium (Debian's package, installed by `.ci/browser-install`) driven by playwright-core,
 * and the record of what went wrong in the page: page errors, console errors and failed icon loads,
 * less n8n's own noise listed in NOISE (and in test/browser/README.md).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium, selectors, type BrowserContext, type Locator, type Page } from 'playwright-core';

export const CHROMIUM = process.env.BROWSER_EXECUTABLE ?? '/usr/bin/chromium';

/**
 * Without the background-networking flags Chromium dials Google's services at start-up, which this
 * closed network refuses; a fresh profile keeps runs independent.
 */
export const CHROMIUM_FLAGS = [
	'--headless',
	'--no-sandbox',
	'--disable-gpu',
	'--disable-quic',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
];

/** A console message or failure n8n's editor produces whatever the package does. */
export interface Noise {
	/** What the console says. */
	text: RegExp;
	/** The resource the message is about (the console message's location). */
	url: RegExp;
	why: string;
}

export const NOISE: Noise[] = [
	{
		text: /^Failed to load resource: the server responded with a status of 401 \(Unauthorized\)$/,
		url: /\/rest\/login$/,
		why: 'the sign-in page asks whether a session exists before anyone has signed in',
	},
	{
		text: /^Failed to load resource: net::ERR_[A-Z_]+$/,
		url: /^https:\/\/registry\.npmjs\.org\/n8n-nodes-marketplace-management$/,
		why: "the node creator's details of a community node ask the public npm registry from the browser, which this closed network does not reach",
	},
];

export interface Problem {
	kind: 'pageerror' | 'console' | 'icon';
	text: string;
	url?: string;
}

export interface BrowserSession {
	context: BrowserContext;
	page: Page;
	/** Problems since the last take(), noise left out. */
	takeProblems(): Problem[];
	/** Every noise message filtered, with the reason, for the record. */
	filtered(): Array<Problem & { why: string }>;
	close(): Promise<void>;
}

/** Launches Chromium with a fresh profile and one page that records its problems. */
export async function openBrowser(): Promise<BrowserSession> {
	// n8n's editor marks its elements with data-test-id (its own Playwright suite sets the same).
	selectors.setTestIdAttribute('data-test-id');
	const profile = mkdtempSync(join(tmpdir(), 'browser-profile-'));
	const context = await chromium.launchPersistentContext(profile, {
		executablePath: CHROMIUM,
		headless: true,
		args: CHROMIUM_FLAGS,
		viewport: { width: 1440, height: 900 },
	});
	const page = context.pages()[0] ?? (await context.newPage());
	let problems: Problem[] = [];
	const noise: Array<Problem & { why: string }> = [];
	const record = (p: Problem) => {
		const known = NOISE.find(
			(n) => n.text.test(p.text) && p.url !== undefined && n.url.test(p.url),
		);
		if (known) noise.push({ ...p, why: known.why });
		else problems.push(p);
	};
	page.on('pageerror', (e) => record({ kind: 'pageerror', text: `${e.name}: ${e.message}` }));
	page.on('console', (m) => {
		if (m.type() === 'error') record({ kind: 'console', text: m.text(), url: m.location().url });
		// A warning is n8n's concern unless it names the package or one of its types.
		else if (m.type() === 'warning' && /marketplace/i.test(m.text()))
			record({ kind: 'console', text: `warning: ${m.text()}`, url: m.location().url });
	});
	page.on('response', (r) => {
		if (r.status() >= 400 && /\/icons\//.test(r.url()))
			record({ kind: 'icon', text: `HTTP ${r.status()}`, url: r.url() });
	});
	page.on('requestfailed', (r) => {
		if (/\/icons\//.test(r.url()))
			record({ kind: 'icon', text: r.failure()?.errorText ?? 'failed', url: r.url() });
	});
	// Leaving a workflow with unsaved changes asks "leave the page?": yes.
	page.on('dialog', (d) => void d.accept());
	return {
		context,
		page,
		takeProblems: () => {
			const taken = problems;
			problems = [];
			return taken;
		},
		filtered: () => noise,
		close: async () => {
			await context.close();
			rmSync(profile, { recursive: true, force: true });
		},
	};
}

export interface ImageState {
	src: string;
	complete: boolean;
	naturalWidth: number;
}

/** The <img> elements inside `scope`, once every one of them has finished loading (or failed). */
export async function loadedImages(scope: Locator, timeoutMs = 10_000): Promise<ImageState[]> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const images = await scope.locator('img').evaluateAll((els) =>
			els.map((el) => {
				const img = el as unknown as ImageState;
				return { src: img.src, complete: img.complete, naturalWidth: img.naturalWidth };
			}),
		);
		if (images.every((i) => i.complete) || Date.now() > deadline) return images;
		await new Promise((r) => setTimeout(r, 100));
	}
}
