export * from './timestamps';
export * from './sampling';
export * from './span-fold';
export * from './tree';
export * from './filters';
export * from './chainlib';
export * from './secrets';
export * from './score-stats';
