// What the API needs to check and prepare a completion, without the provider SDKs, the tokenizer and the
// price tables: those take about 100 MB of memory and only the worker calls providers.
export * from './request';
export * from './templates';
export { callBudgetMs } from './providers/types';
