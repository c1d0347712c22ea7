import { act, renderHook } from '@testing-library/react';
import type { ReactNode } from 'react';
import { MemoryRouter, useLocation, useNavigate, useNavigationType } from 'react-router';
import { describe, expect, it } from 'vitest';
import type { UrlCodec } from '../lib/url-codec';
import { useUrlState } from './use-url-state';

type Pair = { a: string; b: string };
const pairCodec: UrlCodec<Pair> = {
  parse: (params) => ({ a: params.get('a') ?? '', b: params.get('b') ?? '' }),
  write: ({ a, b }) => new URLSearchParams({ ...(a && { a }), ...(b && { b }) }),
};

function usePage() {
  const [value, setValue] = useUrlState(pairCodec);
  return { value, setValue, search: useLocation().search, navigate: useNavigate(), type: useNavigationType() };
}

const open = (url: string) =>
  renderHook(usePage, {
    wrapper: ({ children }: { children: ReactNode }) => <MemoryRouter initialEntries={[url]}>{children}</MemoryRouter>,
  }).result;

describe('useUrlState', () => {
  it('reads the value from the URL and writes a change of some fields into it', () => {
    const page = open('/p?a=1');
    expect(page.current.value).toEqual({ a: '1', b: '' });
    act(() => page.current.setValue({ b: '2' }));
    expect(page.current.search).toBe('?a=1&b=2');
    expect(page.current.value).toEqual({ a: '1', b: '2' });
    expect(page.current.type).toBe('PUSH');
    act(() => page.current.setValue({ a: '' }, { replace: true }));
    expect(page.current.search).toBe('?b=2');
    expect(page.current.type).toBe('REPLACE');
  });

  it('keeps both of two changes made before the page renders again', () => {
    const page = open('/p?a=1');
    act(() => {
      page.current.setValue({ a: '' });
      page.current.setValue({ b: '2' });
    });
    expect(page.current.search).toBe('?b=2');
  });

  it('builds on a URL that changed by other means (a link, the back button)', () => {
    const page = open('/p?a=1');
    act(() => page.current.setValue({ b: '2' }));
    act(() => void page.current.navigate('/p?a=9'));
    act(() => page.current.setValue({ b: '3' }));
    expect(page.current.search).toBe('?a=9&b=3');
  });
});
