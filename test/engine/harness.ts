export * from './engine';
export * from './credentials';
export * from './run-node';
