import type {
	Icon,
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialType,
	IHttpRequestOptions,
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

	// A function, not an expression: n8n 2.41 evaluates expressions only where it holds an expression
	// isolate, which the Marketplace Trigger's periodic check (n8n's cron) does not.
	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		return {
			...requestOptions,
			headers: { ...requestOptions.headers, Authorization: `Bearer ${String(credentials.apiKey)}` },
		};
	}

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
