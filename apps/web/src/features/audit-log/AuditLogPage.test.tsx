import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { answer, fail, pending, requestsTo, server } from '../../test/api';
import { ada, admin, apiKey, auditEntry, viewer } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import AuditLogPage from './AuditLogPage';

const open = (query = '') => renderPage(<AuditLogPage />, { route: `/settings/audit-log${query}` });
const MEMBER_KEY = 'a1b2c3d4-0000-4000-8000-000000000002';
const memberKey = apiKey({ id: MEMBER_KEY, label: 'mia@example.com', role: 'member', api_key: 'wxyz' });
const byMember = auditEntry({
  id: 'c0000000-0000-4000-8000-000000000002',
  at: '2026-03-02T09:00:00.000Z',
  actor: { key_id: MEMBER_KEY, user_id: null, label: 'mia@example.com', role: 'member' },
  action: 'create',
  target: { kind: 'provider_key', id: 'openai', name: 'openai' },
  before: null,
  after: { provider: 'openai', api_key: '<changed>', key_hint: 'wxyz', base_url: null },
});

beforeEach(() => {
  server.use(answer('me', admin), answer('apiKeys', [apiKey(), memberKey]), answer('users', [ada]));
});

describe('the audit log page', () => {
  it('tells a non-admin that the log is for admins, and asks nothing of it', async () => {
    server.use(answer('me', viewer));
    open();
    expect(await screen.findByRole('heading', { name: 'The audit log is for admins' })).toBeTruthy();
    expect(requestsTo('auditLog')).toHaveLength(0);
  });

  it('shows that the log is loading', async () => {
    server.use(pending('auditLog'));
    open();
    expect(await screen.findByText('Loading the audit log…')).toBeTruthy();
  });

  it('says what the log will hold while it is empty, and when the filters match nothing', async () => {
    server.use(answer('auditLog', { entries: [], next: null }));
    const page = open();
    expect(await screen.findByRole('heading', { name: 'No changes recorded yet' })).toBeTruthy();
    page.unmount();
    open('?kind=dataset');
    expect(await screen.findByRole('heading', { name: 'No changes match these filters' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Clear filters' })).toBeTruthy();
  });

  it('shows why the log could not load, and retries', async () => {
    server.use(answer('auditLog', { entries: [auditEntry()], next: null }));
    server.use(fail('auditLog', 503, 'the database is unavailable', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText(/\(503\): the database is unavailable/)).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'Audit log' })).toBeTruthy();
  });

  it('lists who changed what, newest first, and opens an entry to what changed', async () => {
    server.use(answer('auditLog', { entries: [auditEntry(), byMember], next: null }));
    open();
    const table = await screen.findByRole('table', { name: 'Audit log' });
    const [first, second] = within(table).getAllByRole('row').slice(1);
    expect(within(first!).getByText('ada@example.com')).toBeTruthy();
    expect(within(first!).getByText('changed')).toBeTruthy();
    expect(within(first!).getByText('Eval rule')).toBeTruthy();
    expect(within(first!).getByText('helpfulness-live')).toBeTruthy();
    expect(within(second!).getByText('mia@example.com')).toBeTruthy();
    expect(within(second!).getByText('created')).toBeTruthy();
    expect(screen.getByText('2 entries, back to the oldest kept.')).toBeTruthy();

    const details = within(first!).getByRole('button', { name: 'Details of ada@example.com changed helpfulness-live' });
    expect(details.getAttribute('aria-expanded')).toBe('false');
    await userEvent.click(details);
    expect(details.getAttribute('aria-expanded')).toBe('true');
    const changes = await screen.findByRole('table', { name: 'Changes to helpfulness-live' });
    // Only what changed, until the unchanged fields are asked for.
    expect(
      within(changes)
        .getAllByRole('row')
        .slice(1)
        .map((r) => r.textContent),
    ).toEqual(['enabledtruefalse']);
    await userEvent.click(screen.getByRole('button', { name: 'Show 2 unchanged fields' }));
    expect(within(changes).getAllByRole('row')).toHaveLength(4);
    await userEvent.click(screen.getByRole('radio', { name: 'JSON' }));
    expect(screen.getByText('Before')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Copy after' })).toBeTruthy();
  });

  it('shows a secret only as set or changed', async () => {
    server.use(answer('auditLog', { entries: [byMember], next: null }));
    open();
    await userEvent.click(await screen.findByRole('button', { name: /^Details of mia@example.com created/ }));
    const changes = await screen.findByRole('table', { name: 'Changes to openai' });
    const apiKeyRow = within(changes).getByRole('row', { name: /api_key/ });
    expect(within(apiKeyRow).getByText('secret, changed')).toBeTruthy();
    expect(changes.textContent).not.toContain('<changed>');
  });

  it('filters by key and by kind of target, in the URL', async () => {
    server.use(answer('auditLog', { entries: [auditEntry(), byMember], next: null }));
    const page = open('?kind=eval_rule');
    await screen.findByRole('table', { name: 'Audit log' });
    expect(requestsTo('auditLog')[0]!.query).toEqual({ limit: '100', target_kind: 'eval_rule' });
    expect((screen.getByRole('combobox', { name: 'Kind of target' }) as HTMLInputElement).value).toBe('Eval rule');

    await userEvent.click(screen.getByRole('button', { name: 'Only changes by mia@example.com' }));
    await waitFor(() =>
      expect(requestsTo('auditLog').at(-1)!.query).toEqual({
        limit: '100',
        target_kind: 'eval_rule',
        actor: MEMBER_KEY,
      }),
    );
    expect(page.search().get('actor')).toBe(MEMBER_KEY);
    expect((screen.getByRole('combobox', { name: 'Actor' }) as HTMLInputElement).value).toBe(
      'mia@example.com (member)',
    );

    await userEvent.click(screen.getByRole('combobox', { name: 'Kind of target' }));
    await userEvent.click(await screen.findByRole('option', { name: 'Provider key' }));
    await waitFor(() => expect(requestsTo('auditLog').at(-1)!.query).toMatchObject({ target_kind: 'provider_key' }));
    expect(page.search().get('kind')).toBe('provider_key');

    await userEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    await waitFor(() => expect(requestsTo('auditLog').at(-1)!.query).toEqual({ limit: '100' }));
    expect(page.search().toString()).toBe('');
  });

  it('names a revoked key or a removed person in the actor filter by its id', async () => {
    const gone = 'e0000000-0000-4000-8000-000000000009';
    server.use(answer('auditLog', { entries: [], next: null }));
    open(`?actor=${gone}`);
    await screen.findByRole('heading', { name: 'No changes match these filters' });
    expect((screen.getByRole('combobox', { name: 'Actor' }) as HTMLInputElement).value).toBe('e0000000…');
  });

  it('reads older entries after the cursor the log gives, as its end comes into view', async () => {
    server.use(
      answer('auditLog', (request) =>
        request.query.before
          ? { entries: [byMember], next: null }
          : { entries: [auditEntry()], next: 'c0000000-0000-4000-8000-000000000001' },
      ),
    );
    open();
    expect(await screen.findByText('2 entries, back to the oldest kept.')).toBeTruthy();
    expect(requestsTo('auditLog').map((r) => r.query.before)).toEqual([
      undefined,
      'c0000000-0000-4000-8000-000000000001',
    ]);
    expect(screen.getByText('mia@example.com')).toBeTruthy();
  });
});
