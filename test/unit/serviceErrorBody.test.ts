import { formatProblem, readProblem } from '../../nodes/shared/transport/serviceErrorBody';

describe('readProblem', () => {
	it('reads problem+json with pointers', () => {
		const problem = readProblem(
			400,
			{
				type: 'https://api.example.com/errors/invalid-request',
				title: 'Invalid request',
				status: 400,
				detail: 'The query is invalid.',
				requestId: 'req-1',
				errors: [{ pointer: '/brandIds', detail: 'must be an integer' }, { detail: 'no pointer' }],
				extra: 'ignored',
			},
			'header-id',
		);
		expect(problem).toEqual({
			status: 400,
			slug: 'invalid-request',
			title: 'Invalid request',
			detail: 'The query is invalid.',
			requestId: 'req-1',
			pointers: [{ pointer: '/brandIds', detail: 'must be an integer' }],
		});
	});

	it('reads the {statusCode, message, path} shape, with message lists and field errors', () => {
		const problem = readProblem(
			400,
			JSON.stringify({
				statusCode: 400,
				message: ['saleChannelName must be a string', 'region must be a string'],
				path: '/v1/brands/1/sale-channels/connect',
				error: 'Bad Request',
				errors: [{ field: 'saleChannelName', message: 'must be a string' }],
			}),
			'rid-9',
		);
		expect(problem).toMatchObject({
			status: 400,
			slug: 'invalid-request',
			detail: 'saleChannelName must be a string; region must be a string',
			requestId: 'rid-9',
			pointers: [{ pointer: '/saleChannelName', detail: 'must be a string' }],
		});
	});

	it('falls back to a slug from the status and the raw text for non-JSON bodies', () => {
		expect(readProblem(502, '<html>Bad gateway</html>', 'r')).toMatchObject({
			slug: 'internal',
			detail: '<html>Bad gateway</html>',
			requestId: 'r',
		});
		expect(readProblem(418, undefined).slug).toBe('http-418');
	});
});

describe('formatProblem', () => {
	it('names slug, status, detail, every pointer and the request id', () => {
		const { message, description } = formatProblem({
			status: 400,
			slug: 'invalid-request',
			detail: 'The query is invalid.',
			requestId: 'req-1',
			pointers: [
				{ pointer: '/brandIds', detail: 'must be an integer' },
				{ pointer: '/limit', detail: 'must be at most 100' },
			],
		});
		expect(message).toBe(
			'invalid-request (400): The query is invalid. [/brandIds: must be an integer; /limit: must be at most 100] (request id req-1)',
		);
		expect(description).toMatch(/Fix the named fields/);
	});

	it('explains key reuse', () => {
		expect(
			formatProblem({ status: 422, slug: 'idempotency-key-reused', pointers: [] }).description,
		).toMatch(/new key/);
	});
});
