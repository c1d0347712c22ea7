import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { answer, fail, pending, requestsTo, server } from '../../test/api';
import { dashboard, emptyDashboard, PROJECT_UUID, project } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import DashboardPage from './DashboardPage';

const open = (query = '') =>
  renderPage(<DashboardPage />, {
    route: `/projects/${PROJECT_UUID}/dashboard${query}`,
    path: '/projects/:projectUuid/dashboard',
  });

beforeEach(() => {
  server.use(answer('projects', [project()]));
});

describe('the dashboard', () => {
  it('shows that the figures are loading', async () => {
    server.use(pending('dashboard'));
    open();
    expect(await screen.findByText('Loading the dashboard…')).toBeTruthy();
  });

  it('says when the window holds no trace, and what to do', async () => {
    server.use(answer('dashboard', emptyDashboard));
    open();
    expect(await screen.findByRole('heading', { name: 'No traces in the last 7 days' })).toBeTruthy();
    expect(screen.getByText('Pick a longer time range, or send traces to this project.')).toBeTruthy();
    expect(screen.getByTestId('dashboard-traces').textContent).toBe('0');
  });

  it('shows why the dashboard could not load, and retries', async () => {
    server.use(answer('dashboard', dashboard()));
    server.use(fail('dashboard', 503, 'the database is unavailable', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('Could not load the dashboard')).toBeTruthy();
    expect(within(alert).getByText(/\(503\): the database is unavailable/)).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'Cost by model' })).toBeTruthy();
    expect(requestsTo('dashboard')).toHaveLength(2);
  });

  it('shows the totals and the cost of each model', async () => {
    server.use(answer('dashboard', dashboard()));
    open();
    const table = await screen.findByRole('table', { name: 'Cost by model' });
    expect(screen.getByTestId('dashboard-traces').textContent).toBe('4,321');
    expect(screen.getByText('1.0% of traces')).toBeTruthy();
    expect(screen.getByText('10,000 in / 2,500 out')).toBeTruthy();
    expect(screen.getByText('$12.50')).toBeTruthy();
    const rows = within(table).getAllByRole('row').slice(1);
    expect(
      rows.map((r) =>
        within(r)
          .getAllByRole('cell')
          .map((c) => c.textContent),
      ),
    ).toEqual([
      ['gpt-4o-mini', '4,000', '$2.50'],
      ['claude-sonnet', '321', '$10.00'],
    ]);
  });

  it('asks for the range the URL names, and writes a new range into the URL', async () => {
    server.use(answer('dashboard', dashboard()));
    const page = open('?range=24h');
    await screen.findByRole('table', { name: 'Cost by model' });
    expect(requestsTo('dashboard')[0]!.body).toEqual({ project_uuid: PROJECT_UUID, time_range: '24h' });
    const range = screen.getByRole('combobox', { name: 'Time range' }) as HTMLInputElement;
    expect(range.value).toBe('Last 24 hours');

    await userEvent.click(range);
    await userEvent.click(await screen.findByRole('option', { name: 'Last month' }));
    await waitFor(() => expect(requestsTo('dashboard').at(-1)!.body).toMatchObject({ time_range: '1m' }));
    expect(page.search().get('range')).toBe('1m');
  });

  it('asks for the last 7 days without a range in the URL', async () => {
    server.use(answer('dashboard', dashboard()));
    open('?range=na');
    await screen.findByRole('table', { name: 'Cost by model' });
    expect(requestsTo('dashboard')[0]!.body).toMatchObject({ time_range: '7d' });
  });
});
