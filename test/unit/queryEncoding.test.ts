import { encodeQuery } from '../../nodes/shared/transport/queryEncoding';

describe('encodeQuery', () => {
	it('joins list values with a literal comma for comma-encoded operations', () => {
		expect(encodeQuery({ brandIds: [1, 2, 3], page: 1 }, 'comma')).toBe('brandIds=1,2,3&page=1');
	});

	it('repeats the key once per value for repeat-encoded operations', () => {
		expect(encodeQuery({ brandIds: [1, 2], statuses: ['Confirmed', 'Closed'] }, 'repeat')).toBe(
			'brandIds=1&brandIds=2&statuses=Confirmed&statuses=Closed',
		);
	});

	it('keeps a comma inside a repeated value encoded, so the service sees one name', () => {
		expect(encodeQuery({ brandId: 4, categories: ['Home, Garden', 'Toys'] }, 'repeat')).toBe(
			'brandId=4&categories=Home%2C%20Garden&categories=Toys',
		);
	});

	it('never writes the bracket form', () => {
		expect(encodeQuery({ brandIds: [1, 2] }, 'repeat')).not.toMatch(/\[|%5B/);
		expect(encodeQuery({ brandIds: [1, 2] }, 'comma')).not.toMatch(/\[|%5B/);
	});

	it('leaves out empty optional values: undefined, null, empty strings and empty lists', () => {
		expect(
			encodeQuery({ a: undefined, b: null, c: '', d: [], e: ['', ''], f: 0, g: false }, 'comma'),
		).toBe('f=0&g=false');
	});

	it('percent-encodes reserved characters in names and values', () => {
		expect(encodeQuery({ startDate: '2026-11-20T00:00:00+01:00' })).toBe(
			'startDate=2026-11-20T00%3A00%3A00%2B01%3A00',
		);
		expect(encodeQuery({ q: "it's (a) test!*" })).toBe('q=it%27s%20%28a%29%20test%21%2A');
	});
});
