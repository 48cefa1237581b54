/**
 * The credential as someone who installed the package sees it: the Base URL must be entered (no
 * address of a local sandbox to fall back on) and the placeholder shows the form the service uses.
 */
import { MarketplaceApi } from '../../credentials/MarketplaceApi.credentials';

const baseUrl = new MarketplaceApi().properties.find((p) => p.name === 'baseUrl')!;

test('Base URL is required and has no default', () => {
	expect(baseUrl.required).toBe(true);
	expect(baseUrl.default).toBe('');
});

test('the placeholder is an https service root without /v1, and the help names both', () => {
	expect(baseUrl.placeholder).toMatch(/^e\.g\. https:\/\/[^/]+$/);
	expect(baseUrl.description).toMatch(/without \/v1/);
	expect(`${baseUrl.description}`).not.toMatch(/127\.0\.0\.1|localhost|npm run/);
});
