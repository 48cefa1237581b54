import type { RouteName } from '../../../nodes/shared/routes';
import { getBrandHealth, listBrands, listInventoryForecasts, listProducts } from './catalog';
import type { Handler } from './context';
import { getOrder, listOrders, listReturns, markOrdersPacked } from './orders';
import { exportPurchaseOrders, listPurchaseOrders } from './purchaseOrders';
import { connectSaleChannel } from './saleChannels';
import {
	createWebhookEndpoint,
	deleteWebhookEndpoint,
	getWebhookEndpoint,
	listWebhookDeliveries,
	listWebhookEndpoints,
	rotateWebhookEndpointSecret,
	testWebhookEndpoint,
	updateWebhookEndpoint,
} from './webhooks';

/** One handler per route of the shared route table. */
export const HANDLERS: Record<RouteName, Handler> = {
	connectSaleChannel,
	listProducts,
	listOrders,
	getOrder,
	listReturns,
	listPurchaseOrders,
	exportPurchaseOrders,
	markOrdersPacked,
	getBrandHealth,
	listInventoryForecasts,
	listBrands,
	createWebhookEndpoint,
	listWebhookEndpoints,
	getWebhookEndpoint,
	updateWebhookEndpoint,
	deleteWebhookEndpoint,
	testWebhookEndpoint,
	rotateWebhookEndpointSecret,
	listWebhookDeliveries,
};
