import type {
	IAuthenticateGeneric,
	Icon,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

/**
 * API key of the Marketplace Management Service (spec part 5): sent as `Authorization: Bearer <key>`
 * by n8n itself through `authenticate`, never by hand-built headers.
 */
export class MarketplaceApi implements ICredentialType {
	name = 'marketplaceApi';

	displayName = 'Marketplace Management API';

	icon: Icon = {
		light: 'file:../nodes/shared/icons/marketplace.svg',
		dark: 'file:../nodes/shared/icons/marketplace.dark.svg',
	};

	documentationUrl = 'https://github.com/marketplace-management/n8n-nodes-marketplace-management#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: 'http://127.0.0.1:4010',
			required: true,
			placeholder: 'https://api.example.com',
			description:
				'The service root, without /v1. The default is the local sandbox started by `npm run dev`.',
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
		properties: {
			headers: {
				Authorization: '=Bearer {{$credentials.apiKey}}',
			},
		},
	};

	// Any valid key can list its own webhook endpoints: no permission is needed (spec 4.3, 5.7), so
	// the test passes for every valid key and fails with 401 for a missing, unknown or revoked one.
	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "")}}',
			url: '/v1/webhook-endpoints',
			method: 'GET',
		},
	};
}
