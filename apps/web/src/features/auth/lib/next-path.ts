const FALLBACK = '/projects';

/**
 * Where signing in leads: the `next` of the sign-in link when it is a place in this console, else the
 * projects. The browser's own URL parser judges it (it reads `/\evil.example` as `//evil.example`, another
 * site), so that a link cannot send a freshly signed-in user to another origin.
 */
export function nextPath(next: string | null, origin: string = window.location.origin): string {
  if (!next) return FALLBACK;
  let url: URL;
  try {
    url = new URL(next, origin);
  } catch {
    return FALLBACK;
  }
  return url.origin === origin ? url.pathname + url.search + url.hash : FALLBACK;
}
