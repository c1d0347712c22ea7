export * from './keys';
export * from './registry';
export * from './producer';
export * from './pending';
export * from './backlog';
export * from './span-intake';
export * from './replies';
