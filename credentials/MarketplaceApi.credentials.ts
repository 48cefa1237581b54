import type {
	IAuthenticateGeneric,
	Icon,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

/**
 * API key of the Marketplace Management Service: sent as `Authorization: Bearer <key>` by n8n itself
 * through `authenticate`, never by hand-built headers.
 */
export class MarketplaceApi implements ICredentialType {
	name = 'marketplaceApi';

	displayName = 'Marketplace Management API';

	icon: Icon = {
		light: 'file:../nodes/shared/icons/marketplace.svg',
		dark: 'file:../nodes/shared/icons/marketplace.dark.svg',
	};

	documentationUrl =
		'https://github.com/marketplace-management/n8n-nodes-marketplace-management#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'e.g. https://marketplace.example.com',
			description:
				'The root address of the Marketplace Management Service your account is on (https), without /v1. The API key below must belong to that service.',
		},
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description: 'API key of the user whose permissions and brand scope the workflow acts with',
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: { headers: { Authorization: '=Bearer {{$credentials.apiKey}}' } },
	};

	// Listing one's own webhook endpoints needs no permission, so the test passes for every valid key
	// and fails with 401 for a missing, unknown or revoked one.
	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "")}}',
			url: '/v1/webhook-endpoints',
			method: 'GET',
		},
	};
}
