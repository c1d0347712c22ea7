import { useCallback, useLayoutEffect, useMemo, useRef } from 'react';
import { useSearchParams, type NavigateOptions } from 'react-router';
import type { UrlCodec } from '../lib/url-codec';

/**
 * A page's state kept in the URL through `codec`: the value, and a setter that changes some of its fields
 * (a new history entry, unless `{ replace: true }`). `codec` must be a module constant.
 */
export function useUrlState<T>(codec: UrlCodec<T>) {
  const [params, setParams] = useSearchParams();
  const value = useMemo(() => codec.parse(params), [codec, params]);
  // React Router gives a change the parameters of the last render: two changes before the next one (a
  // reset, then a status) would lose the first. Each change builds on the last one written instead.
  const latest = useRef(params);
  useLayoutEffect(() => {
    latest.current = params;
  }, [params]);
  const setValue = useCallback(
    (change: Partial<T>, options?: NavigateOptions) => {
      const next = codec.write({ ...codec.parse(latest.current), ...change });
      latest.current = next;
      setParams(next, options);
    },
    [codec, setParams],
  );
  return [value, setValue] as const;
}
