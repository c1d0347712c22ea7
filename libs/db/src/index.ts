export * from './client';
export * from './migrate';
export * from './organizations';
export * from './projects';
export * from './spans';
export * from './provider-keys';
export * from './prompts';
export * from './datasets';
