import type { IncomingHttpHeaders } from 'node:http';

/** One request the service received, as sent (the Authorization header included). */
export interface LoggedRequest {
	seq: number;
	at: string;
	method: string;
	path: string;
	rawQuery: string;
	headers: IncomingHttpHeaders;
	body: string;
	requestId: string;
	/** status answered; null while running or when the connection was dropped */
	status: number | null;
	route: string | null;
	replayed: boolean;
	dropped: boolean;
}

export class RequestLog {
	private entries: LoggedRequest[] = [];
	private seq = 0;

	add(
		entry: Omit<LoggedRequest, 'seq' | 'at' | 'status' | 'route' | 'replayed' | 'dropped'>,
	): LoggedRequest {
		const logged: LoggedRequest = {
			seq: ++this.seq,
			at: new Date().toISOString(),
			status: null,
			route: null,
			replayed: false,
			dropped: false,
			...entry,
		};
		this.entries.push(logged);
		return logged;
	}

	list(since = 0): LoggedRequest[] {
		return this.entries.filter((e) => e.seq > since);
	}

	clear(): void {
		this.entries = [];
	}
}
