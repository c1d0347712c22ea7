import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { session } from '../../api/session';
import type { Span } from '../../api/types';
import { renderWithKit } from '../../test/render';
import { SpanRemarks } from './SpanRemarks';

const TRACE = '11111111-1111-4111-8111-111111111111';
const CRITERION = '22222222-2222-4222-8222-222222222222';
const COMMENT = '33333333-3333-4333-8333-333333333333';
const KEY_ID = '44444444-4444-4444-8444-44444444abcd';
const ADA = { label: 'ada@example.com', key_id: 'k', remark_author: 'ada@example.com' };

const span = {
  trace_id: TRACE,
  root_trace_id: TRACE,
  parent_trace_id: TRACE,
  project_uuid: null,
  comments: [
    { id: COMMENT, comment: 'mine', user_id: 'ada@example.com', created_at: '2026-01-01T00:00:00.000Z' },
    { id: 'other', comment: 'theirs', user_id: 'bob@example.com', created_at: '2026-01-01T00:01:00.000Z' },
    { comment: "a client's", user_id: 'ada@example.com', created_at: '2026-01-01T00:02:00.000Z' },
  ],
  annotations: {
    [CRITERION]: {
      'bob@example.com': { user_id: 'bob@example.com', score: 2, created_at: '2026-01-01T00:00:00.000Z' },
    },
  },
} as unknown as Span;

let calls: { method: string; url: string; body: unknown }[] = [];

function serve(role: string, me: object = ADA) {
  calls = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit = {}) => {
      const method = init.method ?? 'GET';
      calls.push({ method, url, body: init.body ? JSON.parse(String(init.body)) : undefined });
      const json = url.endsWith('/me')
        ? { role, organization_id: 'o', organization_name: 'O', ...me }
        : url.endsWith('/users')
          ? [
              {
                id: 'u1',
                email: 'bob@example.com',
                name: 'Bob Builder',
                role: 'member',
                created_at: '2026-01-01T00:00:00.000Z',
                last_seen_at: null,
              },
            ]
          : url.endsWith('/annotation-criteria')
            ? [
                {
                  id: CRITERION,
                  name: 'helpfulness',
                  kind: 'score',
                  description: null,
                  min: 1,
                  max: 5,
                  options: null,
                  created_at: '2026-01-01T00:00:00.000Z',
                },
              ]
            : {};
      return new Response(JSON.stringify(json), { status: 200, headers: { 'content-type': 'application/json' } });
    }),
  );
}

function renderRemarks(remarked: Span = span) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return renderWithKit(
    <QueryClientProvider client={client}>
      <SpanRemarks span={remarked} />
    </QueryClientProvider>,
  );
}

beforeEach(() => session.signedIn());
afterEach(() => {
  vi.unstubAllGlobals();
  session.signOut();
});

describe('SpanRemarks', () => {
  it("offers to delete only the signed-in key's own console comments, and shows everyone's annotations", async () => {
    serve('member');
    renderRemarks();
    await screen.findByRole('textbox', { name: 'New comment' });
    const deletes = await screen.findAllByRole('button', { name: 'Delete the comment' });
    expect(deletes).toHaveLength(1);
    expect(within(deletes[0]!.closest('[data-testid="comment"]') as HTMLElement).getByText('mine')).toBeTruthy();
    const criterion = await screen.findByLabelText('Criterion helpfulness');
    // A person's remarks show their name beside the email they are signed with.
    expect(await within(criterion).findByText('Bob Builder')).toBeTruthy();
    expect(within(criterion).getByText('bob@example.com')).toBeTruthy();
    const theirs = screen.getByText('theirs').closest('[data-testid="comment"]') as HTMLElement;
    expect(within(theirs).getByText('Bob Builder')).toBeTruthy();
    expect(within(criterion).getByRole('button', { name: 'Annotate' })).toBeTruthy();

    fireEvent.click(deletes[0]!);
    await waitFor(() =>
      expect(calls).toContainEqual(
        expect.objectContaining({ method: 'DELETE', url: `/api/svc/v1/trace_log/${TRACE}/comments/${COMMENT}` }),
      ),
    );
  });

  it("treats the remarks of a key without a label as its own, and names the key by its id's end", async () => {
    const author = `key:${KEY_ID}`;
    serve('admin', { label: null, key_id: KEY_ID, remark_author: author });
    renderRemarks({
      ...span,
      comments: [{ id: COMMENT, comment: 'unsigned', user_id: author, created_at: '2026-01-01T00:00:00.000Z' }],
      annotations: {
        [CRITERION]: { [author]: { user_id: author, score: 3, created_at: '2026-01-01T00:00:00.000Z' } },
      },
    } as unknown as Span);
    const deletes = await screen.findAllByRole('button', { name: 'Delete the comment' });
    expect(deletes).toHaveLength(1);
    expect(within(deletes[0]!.closest('[data-testid="comment"]') as HTMLElement).getByText('key …abcd')).toBeTruthy();
    const criterion = await screen.findByLabelText('Criterion helpfulness');
    expect(within(criterion).getByText('key …abcd')).toBeTruthy();
    expect(within(criterion).getByRole('button', { name: 'Update' })).toBeTruthy();
    expect(within(criterion).getByRole('button', { name: 'Remove mine, the helpfulness annotation' })).toBeTruthy();
    expect(screen.queryByText(author)).toBeNull();
  });

  it('sends a comment and a score to the span', async () => {
    serve('admin');
    renderRemarks();
    fireEvent.change(await screen.findByRole('textbox', { name: 'New comment' }), {
      target: { value: ' looks right ' },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Comment' }));
    await waitFor(() =>
      expect(calls).toContainEqual({
        method: 'POST',
        url: `/api/svc/v1/trace_log/${TRACE}/comments`,
        body: { comment: 'looks right' },
      }),
    );
    fireEvent.change(await screen.findByRole('textbox', { name: 'Your helpfulness' }), { target: { value: '4' } });
    fireEvent.click(screen.getByRole('button', { name: 'Annotate' }));
    await waitFor(() =>
      expect(calls).toContainEqual({
        method: 'PUT',
        url: `/api/svc/v1/trace_log/${TRACE}/annotations/${CRITERION}`,
        body: { score: 4 },
      }),
    );
  });

  it('shows a viewer everything read-only', async () => {
    serve('viewer');
    renderRemarks();
    await screen.findByLabelText('Criterion helpfulness');
    await screen.findByText('theirs');
    // The role is known once /me answers: then no write control is there.
    await waitFor(() => expect(calls.some((c) => c.url.endsWith('/me'))).toBe(true));
    await new Promise((r) => setTimeout(r, 50));
    expect(screen.queryByRole('textbox', { name: 'New comment' })).toBeNull();
    expect(screen.queryAllByRole('button')).toHaveLength(0);
  });
});
