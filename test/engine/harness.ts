/**
 * Engine harness: runs node types inside n8n's real execution engine (n8n-core 2.41.1),
 * providing only what the n8n CLI server would: NodeTypes, a credentials helper,
 * IWorkflowExecuteAdditionalData and a web server for webhooks.
 */
export * from './engine';
export * from './credentials';
export * from './run-node';
export * from './triggers';
