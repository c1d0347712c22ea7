// Names of query parameters whose values are credentials, matched on the decoded name: `api%5Fkey` and
// `API_KEY` are the same parameter to a reader of the log, and to Fastify's query parser in the first case.
const SECRET_NAME = /key|token|secret|passw|pwd|auth|credential|signature|session/i;
// A Sightline API key sent under any name (a key pasted into the wrong parameter).
const API_KEY_VALUE = /^sl_[\w-]{16,}$/;

/**
 * The request URL as logged: each query parameter whose name looks like a credential, or whose value looks
 * like an API key, has its value replaced with `[redacted]`. The rest of the URL is kept byte for byte.
 */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  const params = url
    .slice(start + 1)
    .split('&')
    .map((param) => {
      // URLSearchParams decodes as query parsers do (`+` as a space, a bad escape kept as written).
      const [entry] = new URLSearchParams(param);
      if (!entry) return param;
      const [name, value] = entry;
      if (API_KEY_VALUE.test(name.trim())) return '[redacted]';
      const eq = param.indexOf('=');
      if (eq < 0 || (!SECRET_NAME.test(name) && !API_KEY_VALUE.test(value.trim()))) return param;
      return `${param.slice(0, eq)}=[redacted]`;
    });
  return `${url.slice(0, start)}?${params.join('&')}`;
}
