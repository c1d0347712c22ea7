import { act } from '@testing-library/react';
import { vi } from 'vitest';

/**
 * EventSource as the browser runs it, driven by the test (jsdom has none): `emit` is what the server or
 * the network does. `stubEventSource` puts it in place; `vi.unstubAllGlobals()` takes it away.
 */
export class FakeEventSource extends EventTarget {
  static readonly CLOSED = 2;
  static opened: FakeEventSource[] = [];
  readyState = 1;
  onerror: ((event: Event) => void) | null = null;
  constructor(readonly url: string) {
    super();
    FakeEventSource.opened.push(this);
  }
  close() {
    this.readyState = FakeEventSource.CLOSED;
  }
  emit(type: string, data?: string) {
    const event = data === undefined ? new Event(type) : new MessageEvent(type, { data });
    act(() => {
      this.dispatchEvent(event);
      if (type === 'error') this.onerror?.(event);
    });
  }
}

/** Installs the fake; returns the list the page's streams land in, in the order they were opened. */
export function stubEventSource(): FakeEventSource[] {
  FakeEventSource.opened = [];
  vi.stubGlobal('EventSource', FakeEventSource);
  return FakeEventSource.opened;
}
