import { DateTime } from 'luxon';

import {
	InputError,
	toEnumList,
	toId,
	toIdList,
	toLimit,
	toStringList,
	toUtcDateTime,
	toWebhookUrl,
} from '../../nodes/shared/validation';

function failure(fn: () => unknown): InputError {
	try {
		fn();
	} catch (error) {
		if (error instanceof InputError) return error;
		throw error;
	}
	throw new Error('expected an InputError');
}

describe('ids', () => {
	it('accepts whole numbers as numbers or digit strings', () => {
		expect(toId(42, 'Order ID')).toBe(42);
		expect(toId(' 42 ', 'Order ID')).toBe(42);
	});

	it.each([['4.5'], [4.5], ['abc'], [0], ['-1'], ['1e3'], [{}], ['99999999999999999999']])(
		'rejects %j naming the field',
		(value) => {
			const error = failure(() => toId(value, 'Order ID'));
			expect(error.field).toBe('Order ID');
			expect(error.message).toMatch(/^Order ID: must be a whole number/);
		},
	);

	it('reads lists from arrays, comma or space separated text', () => {
		expect(toIdList([1, '2', '3,4'], 'Order IDs')).toEqual([1, 2, 3, 4]);
		expect(toIdList('5, 6 7', 'Order IDs')).toEqual([5, 6, 7]);
		expect(toIdList('', 'Brand IDs')).toEqual([]);
		expect(failure(() => toIdList('', 'Order IDs', true)).problem).toBe('needs at least one id');
		expect(failure(() => toIdList('1,x', 'Order IDs')).field).toBe('Order IDs');
	});

	it('reads every form a multi-select filter holds: picked IDs, old comma text, an expression list', () => {
		const forms = [[1, 2, 3], ['1', '2', '3'], '1, 2,3', [[1, 2], '3'], [1, ' 2 ', 3]];
		for (const form of forms) expect(toIdList(form, 'Brand IDs')).toEqual([1, 2, 3]);
		expect(toIdList([], 'Brand IDs')).toEqual([]);
		expect(failure(() => toIdList([1, 'x'], 'Brand IDs')).field).toBe('Brand IDs');
	});
});

describe('limits and enums', () => {
	it('accepts 1..max only', () => {
		expect(toLimit(100, 'Limit', 100)).toBe(100);
		expect(failure(() => toLimit(0, 'Limit', 100)).problem).toMatch(/from 1 to 100/);
		expect(failure(() => toLimit(101, 'Limit', 100)).problem).toMatch(/from 1 to 100/);
		expect(failure(() => toLimit(2.5, 'Limit', 100)).field).toBe('Limit');
	});

	it('without an upper bound (Limit on a whole list) says "1 or more"', () => {
		expect(toLimit(5000, 'Limit', Infinity)).toBe(5000);
		expect(failure(() => toLimit(0, 'Limit', Infinity)).problem).toBe(
			'must be a whole number of 1 or more, got 0',
		);
	});

	it('is case-sensitive', () => {
		expect(toEnumList(['Created'], 'Statuses', ['Created', 'Packed'])).toEqual(['Created']);
		expect(
			failure(() => toEnumList(['created'], 'Statuses', ['Created', 'Packed'])).problem,
		).toMatch(/exact case/);
	});

	it('keeps commas inside names of string lists', () => {
		expect(toStringList(['Home, Garden', '', 'Toys'], 'Categories')).toEqual([
			'Home, Garden',
			'Toys',
		]);
	});
});

describe('dates', () => {
	it('reads zone-less times in the workflow timezone and returns UTC', () => {
		expect(toUtcDateTime('2026-11-20T10:00:00', 'Start Date', 'Europe/Berlin')).toBe(
			'2026-11-20T09:00:00Z',
		);
		expect(toUtcDateTime('2026-11-20T10:00:00Z', 'Start Date', 'Europe/Berlin')).toBe(
			'2026-11-20T10:00:00Z',
		);
		expect(toUtcDateTime('2026-11-20', 'Start Date', 'UTC')).toBe('2026-11-20T00:00:00Z');
		expect(toUtcDateTime(DateTime.fromISO('2026-01-01T00:00:00Z'), 'Start Date')).toBe(
			'2026-01-01T00:00:00Z',
		);
		expect(toUtcDateTime('', 'Start Date')).toBeUndefined();
	});

	it.each([['2026-13-01'], ['yesterday'], ['20/11/2026']])('rejects %j', (value) => {
		expect(failure(() => toUtcDateTime(value, 'Start Date')).field).toBe('Start Date');
	});
});

describe('webhook URLs', () => {
	it('accepts https, and http only on loopback', () => {
		expect(toWebhookUrl('https://example.com/hook', 'URL')).toBe('https://example.com/hook');
		expect(toWebhookUrl('http://127.0.0.1:5678/webhook/x', 'URL')).toBe(
			'http://127.0.0.1:5678/webhook/x',
		);
		expect(failure(() => toWebhookUrl('http://example.com/hook', 'URL')).problem).toMatch(
			/must use https/,
		);
		expect(failure(() => toWebhookUrl('not a url', 'URL')).problem).toMatch(/absolute URL/);
		expect(failure(() => toWebhookUrl('', 'URL')).problem).toBe('is required');
	});
});
