import type { INodeType, INodeTypeDescription } from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { EVENT_TYPE_OPTIONS } from '../shared/routes';
import { namesSubtitle, optionNames } from '../shared/subtitle';
import { catchUpCheckWith } from './catchUpCheck';
import { DEFAULT_ENDPOINT_DESCRIPTION, webhookMethodsOf } from './lifecycle';
import { TriggerProcess, type TriggerSettings } from './memory';
import { receiveWith } from './receive';
import { runWith } from './run';

export class MarketplaceTrigger implements INodeType {
	/**
	 * This process's part of the trigger. n8n makes one instance of a node type per process and calls
	 * its methods with their own `this`, so they reach it through the functions below. Tests inject the
	 * settings (schedules, clock); n8n passes none.
	 */
	readonly triggerProcess: TriggerProcess;

	constructor(settings: Partial<TriggerSettings> = {}) {
		this.triggerProcess = new TriggerProcess(settings);
	}

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
				// an accepted event is answered by its run (run.ts), once n8n has started it
				responseMode: 'responseNode',
				path: 'webhook',
			},
		],
		properties: [
			{
				displayName:
					'The service only delivers to public https addresses: set N8N_WEBHOOK_URL (WEBHOOK_URL on n8n 1.x) to the public https address of this n8n. Events arrive unordered and name only IDs: order by "createdAt" and turn on "Fetch Current State" to read what changed.',
				name: 'notice',
				type: 'notice',
				default: '',
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
							'Whether to bring the orders whose order.created event never arrived (n8n stopped or unreachable for a while, a proxy that dropped deliveries, an endpoint the service disabled): the trigger reads the orders created since it last checked (20 to 40 seconds after n8n starts or the workflow is activated, then every five minutes) and emits each one it has not run, once, shaped like an Order Created event and marked "caughtUp". Needs Order Created among the event types.',
					},
					{
						displayName: 'Emit Test Events',
						name: 'emitTestEvents',
						type: 'boolean',
						default: false,
						description:
							'Whether a webhook.test delivery (sent by Webhook Endpoint > Test) starts the workflow. When off, it is verified and answered 2xx but starts nothing.',
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
				],
			},
		],
	};

	/** Activation and deactivation: the endpoint at the service (lifecycle.ts). */
	webhookMethods = webhookMethodsOf(() => this.triggerProcess);

	/** Each delivery: verified, checked, recorded, handed to a run (receive.ts). */
	webhook = receiveWith(() => this.triggerProcess);

	/** Each run's start: each event once, and the delivery's answer (run.ts). */
	execute = runWith(() => this.triggerProcess);

	/** The catch-up check, on n8n's cron, for orders no delivery brought (catchUpCheck.ts). */
	trigger = catchUpCheckWith(() => this.triggerProcess);
}
