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

  it("shows a failed turn's error, and its output only when it has one", async () => {
    const failed = {
      trace_id: 'c0000000-0000-4000-8000-000000000003',
      start_timestamp: '2026-03-02 10:00:00',
      inputs: { question: 'And the refund?' },
      output: null,
      status: 'error',
      error: 'the model timed out after 30 s',
    };
    server.use(
      answer('traceGroups', { total: 1, results: [group()] }),
      answer('traceGroup', { ...conversation, traces: [...conversation.traces, failed] }),
    );
    open('?key=session-42');
    const dialog = await screen.findByRole('dialog');
    const turns = await within(dialog).findAllByTestId('turn');
    expect(turns).toHaveLength(3);
    expect(within(turns[2]!).getByText('Failed')).toBeTruthy();
    expect(within(turns[2]!).getByText('Error')).toBeTruthy();
    expect(within(turns[2]!).getByText('the model timed out after 30 s')).toBeTruthy();
    // No empty output beside it.
    expect(within(turns[2]!).queryByText('Output')).toBeNull();
    expect(within(turns[2]!).queryByText('None')).toBeNull();
    expect(within(turns[0]!).queryByText('Failed')).toBeNull();
  });

  it('searches and narrows to a time range from the URL, writes changes back, and says when nothing matches', async () => {
    server.use(
      answer('traceGroups', (r) =>
        (r.body as { search?: string }).search === 'nobody'
          ? { total: 0, results: [] }
          : { total: 1, results: [group({ key: 'ann@example.com' })] },
      ),
    );
    const page = open('?by=user&q=ann&range=24h');
    await screen.findByRole('table', { name: 'Users' });
    expect(requestsTo('traceGroups')[0]!.body).toEqual({
      project_uuid: PROJECT_UUID,
      by: 'user',
      page: 1,
      page_size: 50,
      search: 'ann',
      time_range: '24h',
    });
    const box = screen.getByRole('textbox', { name: 'Search users' });
    expect((box as HTMLInputElement).value).toBe('ann');
    expect((screen.getByRole('combobox', { name: 'Time range' }) as HTMLInputElement).value).toBe('Last 24 hours');

    await userEvent.clear(box);
    await userEvent.type(box, 'nobody{Enter}');
    await waitFor(() => expect(lastGroupsRequest()).toMatchObject({ search: 'nobody', time_range: '24h' }));
    expect(page.search().get('q')).toBe('nobody');
    expect(await screen.findByRole('heading', { name: 'No user matches' })).toBeTruthy();
    expect(screen.getByText(/Widen the time range or change the search/)).toBeTruthy();

    await userEvent.click(screen.getByRole('combobox', { name: 'Time range' }));
    await userEvent.click(await screen.findByRole('option', { name: 'Last 7 days' }));
    await waitFor(() => expect(lastGroupsRequest()).toMatchObject({ time_range: '7d' }));
    expect(page.search().get('range')).toBe('7d');

    await userEvent.click(screen.getAllByRole('button', { name: 'Reset' })[0]!);
    await waitFor(() => expect(Object.fromEntries(page.search())).toEqual({ by: 'user' }));
    expect(lastGroupsRequest()).toEqual({ project_uuid: PROJECT_UUID, by: 'user', page: 1, page_size: 50 });
  });

  it("separates a user's sessions, each under a header that opens it, in the time range of the list", async () => {
    const turn = (n: number, session: string | null) => ({
      trace_id: `c0000000-0000-4000-8000-00000000001${n}`,
      start_timestamp: `2026-03-02 10:0${n}:00`,
      inputs: `question ${n}`,
      output: `answer ${n}`,
      status: 'success',
      session_id: session,
    });
    server.use(
      answer('traceGroups', { total: 1, results: [group({ key: 'ann' })] }),
      answer('traceGroup', {
        key: 'ann',
        traces: [turn(1, 'chat-a'), turn(2, 'chat-b'), turn(3, 'chat-a'), turn(4, null)],
      }),
    );
    const page = open('?by=user&range=7d&key=ann');
    const dialog = await screen.findByRole('dialog');
    const sessions = await within(dialog).findAllByRole('region');
    expect(sessions.map((s) => s.getAttribute('aria-label'))).toEqual([
      'Session chat-a',
      'Session chat-b',
      'Without a session',
    ]);
    expect(within(sessions[0]!).getByText('2 turns, from')).toBeTruthy();
    expect(
      within(sessions[0]!)
        .getAllByTestId('turn')
        .map((t) => [within(t).getByText(/^#\d$/).textContent, within(t).getByText(/^question/).textContent]),
    ).toEqual([
      ['#1', 'question 1'],
      ['#2', 'question 3'],
    ]);
    expect(requestsTo('traceGroup')[0]!.body).toEqual({
      project_uuid: PROJECT_UUID,
      by: 'user',
      key: 'ann',
      time_range: '7d',
    });

    await userEvent.click(within(sessions[1]!).getByRole('button', { name: 'Open the session' }));
    expect(Object.fromEntries(page.search())).toEqual({ by: 'session', range: '7d', key: 'chat-b' });
    await waitFor(() => expect(requestsTo('traceGroup').at(-1)!.body).toMatchObject({ by: 'session', key: 'chat-b' }));
  });
});
