import { cleanup, configure } from '@testing-library/react';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { checkMockApi, server, startMockApi } from './api';

// jsdom has no layout: Mantine asks for media queries and element sizes, and the virtual lists measure
// their scroll box. Give every element a screen-sized box so that virtual lists draw their first rows.
window.matchMedia ??= ((query: string) => ({
  matches: false,
  media: query,
  onchange: null,
  addListener() {},
  removeListener() {},
  addEventListener() {},
  removeEventListener() {},
  dispatchEvent: () => false,
})) as typeof window.matchMedia;
globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
} as unknown as typeof ResizeObserver;
// Mantine's autosizing textarea listens for web fonts loading, which jsdom does not have.
if (!('fonts' in document))
  Object.defineProperty(document, 'fonts', {
    configurable: true,
    value: { addEventListener() {}, removeEventListener() {} },
  });
Element.prototype.scrollIntoView ??= function () {};
Element.prototype.scrollTo ??= function () {};
Element.prototype.getBoundingClientRect = function () {
  return {
    x: 0,
    y: 0,
    top: 0,
    left: 0,
    bottom: 800,
    right: 1200,
    width: 1200,
    height: 800,
    toJSON: () => ({}),
  } as DOMRect;
};
for (const [name, size] of [
  ['offsetHeight', 800],
  ['offsetWidth', 1200],
  ['clientHeight', 800],
  ['clientWidth', 1200],
] as const) {
  Object.defineProperty(HTMLElement.prototype, name, { configurable: true, get: () => size });
}

// A page's first render with Mantine takes a second or more on a busy machine: `findBy` and `waitFor`
// wait up to 5 s (instead of 1 s) before they fail.
configure({ asyncUtilTimeout: 5000 });

// The mock API answers the page tests (a test adds the handlers it needs with `server.use`).
beforeAll(startMockApi);
afterEach(() => {
  cleanup();
  checkMockApi();
});
afterAll(() => server.close());
