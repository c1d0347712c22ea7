export * from './request';
export * from './templates';
export * from './providers/index';
export * from './providers/base-url';
export * from './pricing';
export * from './tokens';
export * from './cache';
