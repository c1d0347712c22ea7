import { useLayoutEffect, useRef, useState } from 'react';

/**
 * Keyboard access to a box that scrolls (a payload cut at a maximum height): while its content overflows,
 * the box is a tab stop, a region named `label`, so that the arrow keys scroll it; otherwise it is no stop.
 * `content` is what it shows: the overflow is measured again when it changes.
 */
export function useKeyboardScroll<T extends HTMLElement>(label: string, content: unknown) {
  const ref = useRef<T>(null);
  const [overflows, setOverflows] = useState(false);
  useLayoutEffect(() => {
    const el = ref.current;
    if (el) setOverflows(el.scrollHeight > el.clientHeight || el.scrollWidth > el.clientWidth);
  }, [content]);
  return overflows ? { ref, tabIndex: 0, role: 'region', 'aria-label': label } : { ref };
}
