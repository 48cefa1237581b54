import type {
	IDataObject,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';

import { invalidParameter } from '../shared/invalidParameter';
import { readRequestOptions, requestOptionsProperty } from '../shared/requestOptions';
import { latestOrder } from '../shared/orders';
import { markSample, SAMPLE_FIELD } from '../shared/sample';
import { ORDER_STATUSES } from '../shared/routes';
import { namesSubtitle, optionNames } from '../shared/subtitle';
import { readAll } from '../shared/transport/pagination';
import { isoSeconds } from '../shared/transport/queryEncoding';
import type { TransportSettings } from '../shared/transport/request';
import { InputError, toEnumList, toIdList, toLimit, toUtcDateTime } from '../shared/validation';
import {
	days,
	DEFAULT_MAX_TRACKED,
	detectChanges,
	minutes,
	planPoll,
	readPollState,
	toEventKinds,
	type DetectedChange,
	type OrderRecord,
	type WatchSettings,
} from './changeDetection';

/** Key of the node's static data that holds the poll state. */
const STATE_KEY = 'orderWatch';

/**
 * Key of the workflow's static data that holds, per node id, the state of the node's first poll
 * that reported nothing. Under n8n's durable poll scheduler the node's static data of the poll n8n
 * makes at activation is dropped when that poll reports nothing, while the workflow's static data is
 * saved after every activation; a poll without a state of its own starts from this one, so it knows
 * the orders and statuses the activation saw.
 */
const FIRST_STATE_KEY = 'marketplacePollingFirstState';

const MAX_LOOKBACK_DAYS = 90;
const MAX_OVERLAP_MINUTES = 24 * 60;

function readSettings(ctx: IPollFunctions): WatchSettings {
	const events = toEventKinds(ctx.getNodeParameter('events', ['created']));
	const filters = ctx.getNodeParameter('filters', {}) as IDataObject;
	const options = ctx.getNodeParameter('options', {}) as IDataObject;
	const firstStart = toUtcDateTime(options.startDate, 'Options > Start From', ctx.getTimezone());
	return {
		events,
		statuses: toEnumList(filters.statuses, 'Filters > Statuses', ORDER_STATUSES),
		brandIds: toIdList(filters.brandIds, 'Filters > Brand IDs'),
		lookbackDays: events.includes('statusChanged')
			? toLimit(
					ctx.getNodeParameter('lookbackDays', 7),
					'Track Orders Created Within (Days)',
					MAX_LOOKBACK_DAYS,
				)
			: 0,
		overlapMs: minutes(
			options.overlapMinutes === undefined
				? 10
				: toLimit(options.overlapMinutes, 'Options > Overlap (Minutes)', MAX_OVERLAP_MINUTES),
		),
		firstStartMs: firstStart === undefined ? undefined : Date.parse(firstStart),
		maxTracked: DEFAULT_MAX_TRACKED,
	};
}

/**
 * Request options, bounded by the time n8n gives the poll (`getPollBudgetMs`, n8n 2.36 and later):
 * a poll whose retries or rate-limit waits would outlast it fails with the error at hand, leaving its
 * state as it was, instead of being abandoned by n8n mid-way.
 */
function readTransportSettings(ctx: IPollFunctions): TransportSettings {
	const settings = readRequestOptions(ctx.getNodeParameter('requestOptions', {}) as IDataObject);
	// absent before n8n 2.36, whatever the type says
	const budget: IPollFunctions['getPollBudgetMs'] | undefined = ctx.getPollBudgetMs;
	return typeof budget === 'function' ? { ...settings, budgetMs: budget.call(ctx) } : settings;
}

const toItems = (changes: DetectedChange[]): INodeExecutionData[] =>
	changes.map(({ order, change }) => ({ json: { ...order, change } as IDataObject }));

/**
 * Polls in flight, by workflow and node. n8n 2.41.1 starts a poll at every interval even while the
 * previous one is still waiting (an outage: retries and timeouts), and both would compare against
 * the same saved state, reporting an order created meanwhile twice. A poll that finds one in flight
 * reports nothing itself: the running poll, or the next one, covers its window, and a failing
 * service gets no extra requests. It still waits for the running poll to end, because n8n gives
 * overlapping polls of one workflow one expression isolate and releases it when the first of them
 * returns: returning at once would take the isolate from the running poll, whose next parameter or
 * credential read would fail ("No bridge acquired for this context"). Polls of an active workflow
 * run in one n8n process (the leader in queue mode). Under n8n's durable poll scheduler the state
 * each poll reads is the one n8n committed, and n8n commits a poll's state only with its run while
 * the poll holds its lease, so a poll run twice (another instance taking over) reports nothing twice
 * whatever this map holds.
 */
const pollsInFlight = new Map<string, Promise<unknown>>();

/** How far back Fetch Test Event looks for a sample order, widening until it finds one. */
const SAMPLE_WINDOWS_DAYS = [1, 7, 30, 365];

/** The changes the node can watch for. */
const WATCH_OPTIONS = [
	{ name: 'New Order', value: 'created', description: 'An order arrived' },
	{
		name: 'Order Status Changed',
		value: 'statusChanged',
		description: 'An order was cancelled, returned, packed, …',
	},
];

export class MarketplacePollingTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Marketplace Polling Trigger',
		name: 'marketplacePollingTrigger',
		icon: {
			light: 'file:../shared/icons/marketplace.svg',
			dark: 'file:../shared/icons/marketplace.dark.svg',
		},
		group: ['trigger'],
		version: 1,
		subtitle: namesSubtitle('events', optionNames(WATCH_OPTIONS)),
		description:
			'Starts the workflow when orders are created or change status, by polling the order list. Works without a public URL.',
		defaults: { name: 'Marketplace Polling Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'marketplaceApi', required: true }],
		properties: [
			{
				displayName:
					'Checks the order list at the Poll Times set above (every minute by default), one request per check, so a change starts the workflow up to one interval after it happened. The Marketplace Trigger (webhook) starts within seconds but needs a public https URL. Each change is reported once. The first activation starts from now (or from Options > Start From). After the workflow was unpublished for a while, or n8n restarted, it picks up where it stopped: orders created meanwhile, and status changes of orders within the tracking window, are reported then, so nothing is missed.',
				name: 'pollingNotice',
				type: 'notice',
				default: '',
			},
			{
				displayName: 'Watch',
				name: 'events',
				type: 'multiOptions',
				required: true,
				options: WATCH_OPTIONS,
				default: ['created'],
				description: 'Which changes start the workflow',
			},
			{
				displayName: 'Track Orders Created Within (Days)',
				name: 'lookbackDays',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: MAX_LOOKBACK_DAYS },
				default: 7,
				description:
					'Status changes are detected for orders created within this many days; each check reads all of them in one request, so keep it as short as your orders need',
				displayOptions: { show: { events: ['statusChanged'] } },
			},
			{
				displayName: 'Filters',
				name: 'filters',
				type: 'collection',
				placeholder: 'Add Filter',
				default: {},
				options: [
					{
						displayName: 'Brand IDs',
						name: 'brandIds',
						type: 'string',
						default: '',
						placeholder: 'e.g. 1,2,3',
						description:
							'Only orders of these brands (comma-separated IDs). Empty: every brand in your scope.',
					},
					{
						displayName: 'Statuses',
						name: 'statuses',
						type: 'multiOptions',
						options: ORDER_STATUSES.map((s) => ({ name: s, value: s })),
						default: [],
						description:
							'Only report orders that are in (or changed into) one of these statuses. Empty: every status.',
					},
				],
			},
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add Option',
				default: {},
				options: [
					{
						displayName: 'Overlap (Minutes)',
						name: 'overlapMinutes',
						type: 'number',
						typeOptions: { minValue: 1, maxValue: MAX_OVERLAP_MINUTES },
						default: 10,
						description:
							'Each check also re-reads orders created this long before the previous check, so orders that became visible late, or a clock difference with the service, are not missed. Already reported orders are not reported again.',
					},
					{
						displayName: 'Start From',
						name: 'startDate',
						type: 'dateTime',
						default: '',
						description:
							'First activation only: report orders created at or after this time, e.g. to catch up after a webhook endpoint was disabled. Empty: start from the moment of activation.',
					},
				],
			},
			requestOptionsProperty,
		],
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const nowMs = Date.now();
		let settings: WatchSettings;
		let transport: TransportSettings;
		try {
			settings = readSettings(this);
			transport = readTransportSettings(this);
		} catch (error) {
			if (error instanceof InputError)
				throw invalidParameter(this.getNode(), error, { retry: 'activate' });
			// a poll resolves its parameters for item 0, the only item it has
			throw new NodeOperationError(this.getNode(), error as Error, { itemIndex: 0 });
		}
		const listOrders = async (startMs: number | undefined) =>
			(await readAll.call(this, {
				route: 'listOrders',
				query: {
					brandIds: settings.brandIds,
					startDate: startMs === undefined ? undefined : isoSeconds(startMs),
				},
				returnAll: true,
				settings: transport,
			})) as OrderRecord[];

		if (this.getMode() === 'manual') {
			// A sample to map fields with: the most recent order, shaped like a real change. The order
			// list has no pages, so the read widens step by step and never asks for every order.
			let latest: OrderRecord | undefined;
			const windows = [
				...new Set(SAMPLE_WINDOWS_DAYS.map((d) => Math.max(d, settings.lookbackDays))),
			];
			for (const windowDays of windows) {
				latest = latestOrder(await listOrders(nowMs - days(windowDays)), settings.statuses);
				if (latest !== undefined) break;
			}
			if (latest === undefined) return null;
			const status = String(latest.status);
			const [item] = toItems([
				{
					order: latest,
					change: { kind: 'created', status, detectedAt: new Date(nowMs).toISOString() },
				},
			]);
			// Marked as the webhook trigger marks its sample: the Marketplace node's writes do not write
			// it in a run from the editor (Options > Write Sample Items), and a workflow can tell.
			markSample(
				item.json,
				'newest-order',
				`A sample made from your newest ${settings.statuses.length ? 'matching ' : ''}order (${String(latest.id)}), shown whether or not it changed; it was not detected by a check. Production runs never carry "${SAMPLE_FIELD}".`,
			);
			return [[item]];
		}

		const pollKey = `${this.getWorkflow().id ?? ''}/${this.getNode().id}`;
		const running = pollsInFlight.get(pollKey);
		if (running) {
			this.logger.info(
				'Marketplace Polling Trigger: the previous check is still running; this one waits for it and reports nothing itself',
				{
					workflowId: this.getWorkflow().id,
					node: this.getNode().name,
				},
			);
			await running.catch(() => undefined);
			return null;
		}
		const check = (async () => {
			const staticData = this.getWorkflowStaticData('node');
			const workflowData = this.getWorkflowStaticData('global');
			const nodeId = this.getNode().id;
			const { [nodeId]: firstState, ...otherFirstStates } = (workflowData[FIRST_STATE_KEY] ??
				{}) as IDataObject;
			const own = readPollState(staticData[STATE_KEY]);
			const previous = own ?? readPollState(firstState);
			const plan = planPoll(previous, settings, nowMs);
			// Errors (NodeApiError from the transport) propagate: n8n fails the activation on the first
			// poll and reports later ones as failed trigger runs. The state is left as it was, so the
			// next successful poll covers the gap.
			const orders = await listOrders(plan.startMs);
			const { changes, state } = detectChanges(previous, orders, plan, settings, nowMs);
			staticData[STATE_KEY] = state as unknown as IDataObject;
			// A poll that reports changes hands its state to n8n with its run, and a first state written
			// with them could outlive a run n8n never started.
			if (previous === undefined && changes.length === 0) {
				workflowData[FIRST_STATE_KEY] = {
					...otherFirstStates,
					[nodeId]: state as unknown as IDataObject,
				};
			} else if (own !== undefined && firstState !== undefined) {
				workflowData[FIRST_STATE_KEY] = otherFirstStates;
			}
			return changes.length > 0 ? [toItems(changes)] : null;
		})();
		pollsInFlight.set(pollKey, check);
		try {
			return await check;
		} finally {
			pollsInFlight.delete(pollKey);
		}
	}
}
