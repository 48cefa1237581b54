/**
 * A recording HTTP server on loopback for the contract suite (not a test file): it keeps every
 * request exactly as it arrived and answers only the method and path pairs a test gives it, with
 * example bodies; anything else gets the service's 404 problem, so a wrong path fails the node.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
	method: string;
	path: string;
	/** the query string as sent, without `?` */
	rawQuery: string;
	headers: http.IncomingHttpHeaders;
	/** the parsed JSON body, or undefined when none was sent */
	body: unknown;
}

export interface Answer {
	status?: number;
	body: unknown;
}

/** Answers keyed by `METHOD /path` (no query); a function sees the request, e.g. to answer by page. */
export type Answers = Record<string, Answer | ((request: Recorded) => Answer)>;

export interface Recorder {
	baseUrl: string;
	requests: Recorded[];
	/** forgets the requests and installs the answers of the next case */
	reset(answers: Answers): void;
	close(): Promise<void>;
}

export async function startRecorder(): Promise<Recorder> {
	let answers: Answers = {};
	const requests: Recorded[] = [];
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const raw = Buffer.concat(chunks).toString('utf8');
			const [path, ...query] = (req.url ?? '').split('?');
			const recorded: Recorded = {
				method: req.method ?? '',
				path,
				rawQuery: query.join('?'),
				headers: req.headers,
				body: raw === '' ? undefined : JSON.parse(raw),
			};
			requests.push(recorded);
			const found = answers[`${recorded.method} ${path}`];
			const answer: Answer =
				typeof found === 'function'
					? found(recorded)
					: (found ?? {
							status: 404,
							body: {
								type: 'https://errors.example.com/not-found',
								title: 'Not Found',
								status: 404,
								detail: `${recorded.method} ${path} is not an operation of the service`,
							},
						});
			const status = answer.status ?? 200;
			res.writeHead(status, {
				'content-type': status >= 400 ? 'application/problem+json' : 'application/json',
				'x-request-id': `req-${requests.length}`,
			});
			res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		requests,
		reset(next) {
			answers = next;
			requests.splice(0);
		},
		async close() {
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}
