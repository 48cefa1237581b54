import { SandboxControl } from './control';
import { resolveOptions, type SandboxOptions } from './options';
import { SandboxServer } from './server';
import { SandboxState } from './state';
import { StateFile } from './stateFile';

export type { SandboxOptions } from './options';
export { SandboxControl } from './control';

export interface SandboxHandle {
	baseUrl: string;
	demoApiKey: string;
	control: SandboxControl;
	/** true when the data was read from `stateFile` (a restart), false when freshly seeded */
	restored: boolean;
	close(): Promise<void>;
}

/** Starts one sandbox instance (its own state, port and clock). */
export async function startSandbox(options?: SandboxOptions): Promise<SandboxHandle> {
	const resolved = resolveOptions(options);
	const state = new SandboxState(resolved);
	const server = new SandboxServer(state);
	const baseUrl = await server.listen(resolved.port, resolved.host);
	state.baseUrl = baseUrl;
	state.engine.start();
	const stateFile = resolved.stateFile ? new StateFile(resolved.stateFile, state) : undefined;
	stateFile?.start();
	return {
		baseUrl,
		demoApiKey: state.store.demoApiKey,
		control: new SandboxControl(baseUrl),
		restored: state.restored,
		async close() {
			await server.close();
			await state.engine.stop();
			stateFile?.stop();
		},
	};
}
