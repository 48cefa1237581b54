/**
 * The canvas subtitles, evaluated by n8n-workflow's expression engine as n8n evaluates them: the
 * names the panel shows, not parameter values.
 */
import type { INodeParameters, INodeType } from 'n8n-workflow';
import { Workflow } from 'n8n-workflow';

import { Marketplace } from '../../nodes/Marketplace/Marketplace.node';
import { MarketplacePollingTrigger } from '../../nodes/MarketplacePollingTrigger/MarketplacePollingTrigger.node';
import { MarketplaceTrigger } from '../../nodes/MarketplaceTrigger/MarketplaceTrigger.node';
import { ensureEngine, HarnessNodeTypes, qualifiedTypeName } from './engine';

async function subtitleOf(nodeType: INodeType, parameters: INodeParameters): Promise<unknown> {
	ensureEngine();
	const type = qualifiedTypeName(nodeType);
	const node = {
		id: 'n',
		name: 'N',
		type,
		typeVersion: 1,
		position: [0, 0] as [number, number],
		parameters,
	};
	const workflow = new Workflow({
		nodes: [node],
		connections: {},
		active: false,
		nodeTypes: new HarnessNodeTypes().add(type, nodeType),
	});
	await workflow.expression.acquireIsolate?.();
	try {
		return workflow.expression.getSimpleParameterValue(
			node,
			nodeType.description.subtitle as string,
			'internal',
			{},
		);
	} finally {
		await workflow.expression.releaseIsolate?.();
	}
}

test('Marketplace: "Operation: Resource" with the panel\'s names; Mark Orders Packed alone', async () => {
	const node = new Marketplace();
	expect(await subtitleOf(node, { resource: 'order', operation: 'getAll' })).toBe(
		'Get Many: Order',
	);
	expect(
		await subtitleOf(node, { resource: 'webhookEndpoint', operation: 'rotateSecret' }),
	).toMatch(/^Rotate Secret: Webhook Endpoint$/);
	expect(await subtitleOf(node, { resource: 'fulfillment', operation: 'markPacked' })).toBe(
		'Mark Orders Packed',
	);
});

test('triggers: the chosen events by the names the panel shows', async () => {
	expect(
		await subtitleOf(new MarketplaceTrigger(), {
			eventTypes: ['order.created', 'brand_health.band_entered'],
		}),
	).toBe('Order Created, Brand Health Band Entered');
	expect(
		await subtitleOf(new MarketplacePollingTrigger(), { events: ['created', 'statusChanged'] }),
	).toBe('New Order, Order Status Changed');
});
