export * from './common';
export * from './env';
export * from './trace-log';
export * from './project';
export * from './span-event';
export * from './completion';
export * from './experiment';
export * from './dataset';
