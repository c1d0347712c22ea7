import { describe, expect, it } from 'vitest';
import { redactUrl } from './log-redaction';

const KEY = 'sl_Zm9vYmFyYmF6cXV4cXV1eHF1dXpxdXV4cXV1eA';

describe('redactUrl', () => {
  it('redacts a key parameter however its name is spelled or encoded', () => {
    for (const name of ['api_key', 'api%5Fkey', 'API_KEY', 'Api%5fKey', 'apikey', 'api-key', '%61pi_key', 'x+api+key'])
      expect(redactUrl(`/live?project_uuid=p&${name}=${KEY}`), name).toBe(`/live?project_uuid=p&${name}=[redacted]`);
  });

  it('redacts tokens, secrets, passwords and credentials, first or repeated', () => {
    expect(redactUrl('/a?token=t1&access_token=t2&client_secret=s&password=p&Authorization=a&token=t3')).toBe(
      '/a?token=[redacted]&access_token=[redacted]&client_secret=[redacted]&password=[redacted]&Authorization=[redacted]&token=[redacted]',
    );
    expect(redactUrl('/a?api_key=a=b=c')).toBe('/a?api_key=[redacted]');
  });

  it('redacts a value that is an API key whatever its parameter, and a key sent as a bare name', () => {
    expect(redactUrl(`/a?project_uuid=${KEY}`)).toBe('/a?project_uuid=[redacted]');
    expect(redactUrl(`/a?q=${encodeURIComponent(` ${KEY}`)}`)).toBe('/a?q=[redacted]');
    expect(redactUrl(`/a?${KEY}&page=2`)).toBe('/a?[redacted]&page=2');
  });

  it('keeps every other parameter byte for byte, and URLs without a query', () => {
    const url = '/api/svc/v1/traces/live?project_uuid=6f1c%2D1&search=a+b%20c&flag&empty=&bad=%E0%A4%A';
    expect(redactUrl(url)).toBe(url);
    expect(redactUrl('/healthz')).toBe('/healthz');
    expect(redactUrl('/a?')).toBe('/a?');
    expect(redactUrl('/a?api_key')).toBe('/a?api_key');
  });
});
