import { describe, expect, it } from 'vitest';
import { nextPath } from './next-path';

describe('nextPath', () => {
  it.each([
    '/\\evil.example',
    '/\\/evil.example',
    '\\\\evil.example',
    '//evil.example',
    '///evil.example',
    'https://evil.example',
    `https://evil.example${window.location.pathname}`,
    'javascript:alert(1)',
    'JavaScript:alert(document.domain)',
    'data:text/html,<script>alert(1)</script>',
    '/\t/evil.example',
    'http://[',
    '',
    null,
  ])('sends %j to the projects', (next) => {
    expect(nextPath(next)).toBe('/projects');
  });

  it.each([
    ['/projects/p1/traces?status=error&q=a%20b#top', '/projects/p1/traces?status=error&q=a%20b#top'],
    ['/settings', '/settings'],
    // An encoded backslash stays in the path, on this origin.
    ['/%5Cevil', '/%5Cevil'],
    [`${window.location.origin}/datasets/7`, '/datasets/7'],
  ])('keeps %j, a place in the console', (next, path) => {
    expect(nextPath(next)).toBe(path);
  });
});
