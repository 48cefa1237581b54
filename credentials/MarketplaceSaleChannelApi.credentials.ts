import type { Icon, ICredentialType, INodeProperties } from 'n8n-workflow';

/**
 * The secrets of one sale channel account (a marketplace login), which Sale Channel > Connect sends
 * in its request body so that the service can connect a brand to that account. They live here, where
 * n8n stores them encrypted, instead of in node parameters, which n8n keeps as plain text in the
 * workflow (and which an AI agent could set with $fromAI).
 *
 * Neither `authenticate` nor `test`: these secrets authenticate no request of this package (the
 * Marketplace Management API credential does), and the service offers no request that checks them
 * before a Connect. The Marketplace node's `testedBy` check (n8n's credential-test-required rule asks
 * for a test or a `testedBy`) checks only what can be checked here, that there is something to send;
 * the notice below says so.
 */
export class MarketplaceSaleChannelApi implements ICredentialType {
	name = 'marketplaceSaleChannelApi';

	displayName = 'Marketplace Sale Channel Account API';

	icon: Icon = {
		light: 'file:../nodes/shared/icons/marketplace.svg',
		dark: 'file:../nodes/shared/icons/marketplace.dark.svg',
	};

	documentationUrl =
		'https://github.com/marketplace-management/n8n-nodes-marketplace-management#sale-channel-account-credential';

	properties: INodeProperties[] = [
		{
			displayName:
				'The secrets of one sale channel account, sent by Sale Channel > Connect. Fill in the ones the channel asks for. The sale channel checks them when Connect runs (see its output); saving here checks only that at least one is filled in.',
			name: 'notice',
			type: 'notice',
			default: '',
		},
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description: "The channel account's API key, if the channel uses one",
		},
		{
			displayName: 'API Secret',
			name: 'apiSecret',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description: "The channel account's API secret, if the channel uses one",
		},
		{
			displayName: 'Log In Password',
			name: 'logInPassword',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description:
				'Password of the channel account login, if the channel uses one (its email is the Log In Email field of Connect)',
		},
	];
}
