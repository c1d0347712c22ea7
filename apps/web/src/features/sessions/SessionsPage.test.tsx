import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { answer, fail, pending, requestsTo, server } from '../../test/api';
import { conversation, group, PROJECT_UUID, project } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import SessionsPage from './SessionsPage';

const open = (query = '') =>
  renderPage(<SessionsPage />, {
    route: `/projects/${PROJECT_UUID}/sessions${query}`,
    path: '/projects/:projectUuid/sessions',
  });
const lastGroupsRequest = () => requestsTo('traceGroups').at(-1)!.body;

beforeEach(() => {
  server.use(answer('projects', [project()]));
});

describe('the sessions and users page', () => {
  it('shows that the groups are loading', async () => {
    server.use(pending('traceGroups'));
    open('?by=user');
    expect(await screen.findByText('Loading the users…')).toBeTruthy();
  });

  it('says how traces come to be grouped when there is no group', async () => {
    server.use(answer('traceGroups', { total: 0, results: [] }));
    open();
    expect(await screen.findByRole('heading', { name: 'No sessions yet' })).toBeTruthy();
    expect(screen.getByText(/Traces with a session_id are grouped here/)).toBeTruthy();
  });

  it('shows why the groups could not load, and retries', async () => {
    server.use(answer('traceGroups', { total: 1, results: [group()] }));
    server.use(fail('traceGroups', 503, 'the database is unavailable', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText(/\(503\): the database is unavailable/)).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'Sessions' })).toBeTruthy();
    expect(requestsTo('traceGroups')).toHaveLength(2);
  });

  it('lists the sessions, and opens the conversation of the one picked', async () => {
    server.use(
      answer('traceGroups', { total: 2, results: [group(), group({ key: 'session-7', errors: 0 })] }),
      answer('traceGroup', conversation),
    );
    const page = open();
    const table = await screen.findByRole('table', { name: 'Sessions' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getAllByRole('cell')[0]!.textContent)).toEqual(['session-42', 'session-7']);
    expect(within(rows[0]!).getByText('1.50 s')).toBeTruthy();

    await userEvent.click(within(rows[0]!).getByRole('button', { name: 'session-42' }));
    expect(page.search().get('key')).toBe('session-42');
    const dialog = await screen.findByRole('dialog');
    expect(await within(dialog).findByText('Where is my order?')).toBeTruthy();
    expect(within(dialog).getByText('Yes, until it ships.')).toBeTruthy();
    expect(within(dialog).getAllByRole('link', { name: 'Open the trace' })[0]!.getAttribute('href')).toBe(
      `/projects/${PROJECT_UUID}/traces/${conversation.traces[0]!.trace_id}`,
    );
    expect(requestsTo('traceGroup')[0]!.body).toEqual({ project_uuid: PROJECT_UUID, by: 'session', key: 'session-42' });
  });

  it('asks for the grouping and page the URL names, and writes changes back', async () => {
    server.use(answer('traceGroups', { total: 120, results: [group({ key: 'ada@example.com' })] }));
    const page = open('?by=user&page=2');
    await screen.findByRole('table', { name: 'Users' });
    expect(requestsTo('traceGroups')[0]!.body).toEqual({
      project_uuid: PROJECT_UUID,
      by: 'user',
      page: 2,
      page_size: 50,
    });

    await userEvent.click(screen.getByRole('button', { name: '3' }));
    await waitFor(() => expect(lastGroupsRequest()).toMatchObject({ by: 'user', page: 3 }));
    expect(page.search().get('page')).toBe('3');

    // Another grouping starts again from its first page.
    await userEvent.click(screen.getByText('By session'));
    await waitFor(() => expect(lastGroupsRequest()).toMatchObject({ by: 'session', page: 1 }));
    expect(Object.fromEntries(page.search())).toEqual({ by: 'session' });
  });
});
