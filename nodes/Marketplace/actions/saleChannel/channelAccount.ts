/**
 * The one place that reads the Marketplace Sale Channel Account credential
 * (credentials/MarketplaceSaleChannelApi.credentials.ts): the channel secrets Sale Channel > Connect
 * sends, and the check n8n runs when the credential is saved.
 *
 * The secrets go only into the request body. They are never output, logged or put into an error
 * message: a wrong value is named by its field, never shown.
 */
import type {
	ICredentialDataDecryptedObject,
	ICredentialsDecrypted,
	ICredentialTestFunctions,
	IDataObject,
	IExecuteFunctions,
	INodeCredentialTestResult,
} from 'n8n-workflow';

import { InputError } from '../../../shared/validation';

export const SALE_CHANNEL_CREDENTIAL_TYPE = 'marketplaceSaleChannelApi';

const CREDENTIAL_LABEL = 'Marketplace Sale Channel Account credential';

/** The credential's fields, which are also the body fields of the connect request, with their labels. */
const SECRET_FIELDS: Record<string, string> = {
	apiKey: 'API Key',
	apiSecret: 'API Secret',
	logInPassword: 'Log In Password',
};

/**
 * The fields that are sent as stored, not trimmed: a password may begin or end with a space, an API
 * key or secret never does (a copied one often carries a line break, which trimming removes).
 */
const KEPT_AS_STORED = new Set(['logInPassword']);

/** The credential's secrets that are set, by body field; blank ones are left out. */
function secretsOf(credential: ICredentialDataDecryptedObject): IDataObject {
	const secrets: IDataObject = {};
	for (const [name, label] of Object.entries(SECRET_FIELDS)) {
		const value = credential[name];
		if (value === undefined || value === null) continue;
		if (typeof value !== 'string' && typeof value !== 'number') {
			// the value itself is never shown: it is a secret
			throw new InputError(`${CREDENTIAL_LABEL} > ${label}`, 'must be text');
		}
		const text = String(value);
		if (text.trim() === '') continue;
		secrets[name] = KEPT_AS_STORED.has(name) ? text : text.trim();
	}
	return secrets;
}

/**
 * The channel secrets to send for an item: none when the node has no Marketplace Sale Channel
 * Account credential set (it is optional: channels that connect by OAuth need no secrets).
 */
export async function channelSecrets(
	ctx: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject> {
	if (!ctx.getNode().credentials?.[SALE_CHANNEL_CREDENTIAL_TYPE]) return {};
	return secretsOf(await ctx.getCredentials(SALE_CHANNEL_CREDENTIAL_TYPE, itemIndex));
}

/**
 * What n8n runs when the credential is saved (the node's `testedBy`). The service has no request
 * that checks channel secrets, so this sends nothing: it checks that the values are text and that
 * at least one is filled in (an empty credential would connect exactly as no credential does).
 */
export async function saleChannelAccountCheck(
	this: ICredentialTestFunctions,
	credential: ICredentialsDecrypted,
): Promise<INodeCredentialTestResult> {
	let secrets: IDataObject;
	try {
		secrets = secretsOf(credential.data ?? {});
	} catch (error) {
		return { status: 'Error', message: (error as Error).message };
	}
	if (Object.keys(secrets).length === 0) {
		return {
			status: 'Error',
			message: `Nothing to send: fill in at least one of ${Object.values(SECRET_FIELDS).join(', ')}`,
		};
	}
	return {
		status: 'OK',
		message:
			'Filled in. Nothing was sent: the sale channel checks these secrets when Sale Channel > Connect runs.',
	};
}
