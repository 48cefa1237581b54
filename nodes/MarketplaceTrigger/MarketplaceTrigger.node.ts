import type {
	IExecuteFunctions,
	IHookFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { EVENT_TYPE_OPTIONS } from '../shared/routes';
import { namesSubtitle, optionNames } from '../shared/subtitle';
import {
	checkEndpointExists,
	createEndpoint,
	DEFAULT_ENDPOINT_DESCRIPTION,
	deleteEndpoint,
	refuseEngineV2,
} from './lifecycle';
import { DEFAULT_HISTORY_SIZE, MAX_HISTORY_SIZE, MIN_HISTORY_SIZE } from './once';
import { receive } from './receive';
import { admitItems } from './run';
import { startCheck } from './catchUp';
import {
	DEFAULT_WATCH_MINUTES,
	lookAtService,
	MAX_WATCH_MINUTES,
	POLL_TIMES_EXPRESSION,
	startsWatch,
} from './watch';

export class MarketplaceTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Marketplace Trigger',
		name: 'marketplaceTrigger',
		icon: {
			light: 'file:../shared/icons/marketplace.svg',
			dark: 'file:../shared/icons/marketplace.dark.svg',
		},
		group: ['trigger'],
		// 2, the only version: n8n 2.41 evaluates an expression for every delivery to a version-1 webhook
		// node (options.binaryData), an expression isolate per request even with lazy acquire.
		version: 2,
		subtitle: namesSubtitle('eventTypes', optionNames(EVENT_TYPE_OPTIONS)),
		description:
			'Starts the workflow when the Marketplace service reports an order, return or brand health change (signed webhooks, each event once)',
		defaults: { name: 'Marketplace Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'marketplaceApi', required: true }],
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				// n8n answers 2xx once the run is registered; the body is not the service's concern
				responseMode: 'onReceived',
				responseData: 'noData',
				path: 'webhook',
			},
		],
		properties: [
			{
				displayName:
					'The service only delivers to public https addresses: set N8N_WEBHOOK_URL (WEBHOOK_URL on n8n 1.x) to the public https address of this n8n. Events arrive unordered and name only IDs: order by "createdAt" and turn on "Fetch Current State" to read what changed. To get a sample while this node listens for a test event: in a Marketplace node, run Webhook Endpoint > Test on the endpoint named "… (listening for a test event)" in its list (the service tests an endpoint once, before n8n holds the listening\'s secret, so that one step is yours); the sample is your newest order.',
				name: 'notice',
				type: 'notice',
				default: '',
			},
			{
				// n8n schedules poll() (the watch) by Poll Times: set from the option Watch Every
				displayName: 'Poll Times',
				name: 'pollTimes',
				type: 'hidden',
				default: { item: POLL_TIMES_EXPRESSION },
			},
			{
				displayName: 'Event Types',
				name: 'eventTypes',
				type: 'multiOptions',
				required: true,
				options: EVENT_TYPE_OPTIONS,
				default: [],
				description:
					'Events that start the workflow. webhook.test deliveries (from Webhook Endpoint > Test) cannot be subscribed to: see the option Emit Test Events.',
			},
			{
				displayName: 'Description',
				name: 'description',
				type: 'string',
				default: DEFAULT_ENDPOINT_DESCRIPTION,
				description: 'Description of the webhook endpoint this trigger registers with the service',
			},
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add Option',
				default: {},
				options: [
					{
						displayName: 'Catch Up Missed Orders',
						name: 'catchUpMissedOrders',
						type: 'boolean',
						default: true,
						description:
							'Whether to run the orders whose Order Created event never arrived (n8n was down or unreachable, a proxy dropped it). When the workflow starts (n8n starts, or you publish it), the trigger reads the orders created since it last ran something (from 15 minutes before that hour, at most two days back) and outputs each one that has not run, once, marked "caughtUp". So does the watch when the service records a delivery that failed. Needs Order Created among the event types.',
					},
					{
						displayName: 'Emit Test Events',
						name: 'emitTestEvents',
						type: 'boolean',
						default: false,
						description:
							'Whether a webhook.test delivery (sent by Webhook Endpoint > Test, and by the check that the service reaches this trigger when you publish) starts the workflow. When off, it is verified and answered 2xx but starts nothing.',
					},
					{
						displayName: 'Fetch Current State',
						name: 'fetchCurrentState',
						type: 'boolean',
						default: false,
						description:
							'Whether to read the order (order events) or brand health (brand health events) the event names and output it as "current". If the read fails temporarily the service is asked to deliver the event again later.',
					},
					{
						displayName: 'History Size',
						name: 'historySize',
						type: 'number',
						typeOptions: { minValue: MIN_HISTORY_SIZE, maxValue: MAX_HISTORY_SIZE },
						default: DEFAULT_HISTORY_SIZE,
						description:
							"How many past events and orders n8n keeps to recognise a copy (n8n's deduplication, as in Remove Duplicates). A copy that arrives after more than this many others runs again. The service re-sends for about 42 hours: keep two days of your events. A larger history costs a little time on every event.",
					},
					{
						displayName: 'Include Headers',
						name: 'includeHeaders',
						type: 'boolean',
						default: false,
						description: 'Whether to output the delivery\'s HTTP headers as "headers"',
					},
					{
						displayName: 'Rotate Signing Secret on Activation',
						name: 'rotateSecretOnActivation',
						type: 'boolean',
						default: false,
						description:
							"Whether to rotate the endpoint's signing secret each time the workflow is activated and finds its endpoint. The previous secret is still accepted for 24 hours.",
					},
					{
						displayName: 'Watch Every',
						name: 'watchEvery',
						type: 'number',
						typeOptions: { minValue: 0, maxValue: MAX_WATCH_MINUTES },
						default: DEFAULT_WATCH_MINUTES,
						description:
							"Minutes between two looks at the service's record of this trigger's endpoint and deliveries (one or two requests each); 0 turns the watch off. When all is well nothing runs. A delivery that failed brings its missed orders; deliveries refused because the signing secret was rotated elsewhere get a new secret; an endpoint the service disabled is enabled again (the next item carries a notice); a deleted endpoint is registered again; a revoked API key or a service unreachable for 30 minutes shows as the trigger's error.",
					},
				],
			},
		],
	};

	/** Activation and deactivation: the endpoint at the service (lifecycle.ts). */
	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				refuseEngineV2(this);
				return await checkEndpointExists(this);
			},
			async create(this: IHookFunctions): Promise<boolean> {
				refuseEngineV2(this);
				return await createEndpoint(this);
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				return await deleteEndpoint(this);
			},
		},
	};

	/** Each delivery: verified, then handed to a run (receive.ts). */
	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		return await receive(this);
	}

	/** The start of each run: the check's orders read, and each event and order let through once (run.ts). */
	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await admitItems(this, this.continueOnFail());
	}

	/** n8n polls the node: at the workflow's start, then every Watch Every minutes (Poll Times). */
	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		if (this.getMode() === 'manual') return null;
		// the first poll of an activation is the workflow's start: the check for missed orders (catchUp.ts)
		if (startsWatch(this)) {
			const check = startCheck(this);
			return check ? [[{ json: check }]] : null;
		}
		// every later poll: one look at the service's record of the endpoint (watch.ts)
		return await lookAtService(this);
	}
}
