import { act, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useLiveTraces } from '../../../api/live';
import { renderWithKit } from '../../../test/render';
import { LiveControl } from './LiveControl';

/** EventSource as the browser runs it, driven by the test: `emit` is what the server or the network does. */
class FakeSource extends EventTarget {
  static readonly CLOSED = 2;
  static opened: FakeSource[] = [];
  readyState = 1;
  onerror: ((event: Event) => void) | null = null;
  constructor(readonly url: string) {
    super();
    FakeSource.opened.push(this);
  }
  close() {
    this.readyState = FakeSource.CLOSED;
  }
  emit(type: string, data?: string) {
    const event = data === undefined ? new Event(type) : new MessageEvent(type, { data });
    act(() => {
      this.dispatchEvent(event);
      if (type === 'error') this.onerror?.(event);
    });
  }
}

function Tail() {
  const live = useLiveTraces('p1', true, () => {});
  return <LiveControl status={live.status} ended={live.detail} paused={false} onToggle={() => {}} />;
}

beforeEach(() => {
  FakeSource.opened = [];
  vi.stubGlobal('EventSource', FakeSource);
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe('the live tail', () => {
  it('says it reconnects after a dropped connection', async () => {
    renderWithKit(<Tail />);
    const [source] = FakeSource.opened;
    source!.emit('ready');
    await screen.findByText('Live');
    source!.emit('error');
    await screen.findByText('Reconnecting…');
    expect(source!.readyState).not.toBe(FakeSource.CLOSED);
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('shows why the server ended the stream, and stops', async () => {
    renderWithKit(<Tail />);
    const [source] = FakeSource.opened;
    source!.emit('ready');
    source!.emit('error', JSON.stringify({ detail: 'the API key was revoked' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Live tail stopped: the API key was revoked');
    await screen.findByText('Stopped');
    expect(source!.readyState).toBe(FakeSource.CLOSED);
    expect(FakeSource.opened).toHaveLength(1);
  });
});
