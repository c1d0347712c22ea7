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
      ['gpt-4o-mini', '4,000', '$2.50', '20%'],
      ['claude-sonnet', '321', '$10.00', '80%'],
    ]);
  });

  it('marks latency read from hourly histograms as within 1%, and exact latency not', async () => {
    server.use(answer('dashboard', { ...dashboard(), latency_approximate: true }));
    const { unmount } = open();
    expect(await screen.findByText('≈ 800 ms')).toBeTruthy();
    expect(screen.getAllByText('within 1%, from hourly histograms')).toHaveLength(3);
    unmount();
    server.use(answer('dashboard', dashboard()));
    open();
    expect(await screen.findByText('800 ms')).toBeTruthy();
    expect(screen.queryByText(/≈|within 1%/)).toBeNull();
  });

  it('asks for the range the URL names, and writes a new range into the URL', async () => {
    server.use(answer('dashboard', dashboard()));
    const page = open('?range=24h');
    await screen.findByRole('table', { name: 'Cost by model' });
    expect(requestsTo('dashboard')[0]!.body).toEqual({
      project_uuid: PROJECT_UUID,
      time_range: '24h',
      status: null,
      search: null,
      filters: [],
      include_experiments: false,
    });
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

  it('plots the error rate and the cost of each model over time, with their figures in words', async () => {
    server.use(answer('dashboard', dashboard()));
    open();
    const errors = await screen.findByRole('region', { name: 'Error rate' });
    expect(within(errors).getByText('1.0% over the range')).toBeTruthy();
    const byModel = screen.getByRole('region', { name: 'Cost by model over time' });
    expect(within(byModel).getByText('$12.50 over 4,321 calls')).toBeTruthy();
    expect(screen.getByRole('region', { name: 'Traces and errors' })).toBeTruthy();
  });

  it('gives the costs of the models one precision, so that they line up', async () => {
    const models = [
      { model: 'gpt-4o-mini', calls: 9, cost: 0.001749 },
      { model: 'gpt-4.1', calls: 9, cost: 0.00174 },
      { model: 'claude-3-5-haiku', calls: 9, cost: 0.0016 },
    ];
    server.use(answer('dashboard', { ...dashboard(), cost_by_model: models, cost_by_model_buckets: [] }));
    open();
    const table = await screen.findByRole('table', { name: 'Cost by model' });
    const costs = within(table)
      .getAllByRole('row')
      .slice(1)
      .map((r) => within(r).getAllByRole('cell')[2]!.textContent);
    expect(costs).toEqual(['$0.001749', '$0.001740', '$0.001600']);
  });

  it('says when no model was called', async () => {
    server.use(answer('dashboard', { ...dashboard(), cost_by_model: [], cost_by_model_buckets: [] }));
    open();
    const byModel = await screen.findByRole('region', { name: 'Cost by model over time' });
    expect(within(byModel).getByText('No model calls in this range.')).toBeTruthy();
  });

  describe("the traces page's filters", () => {
    const link = (...pairs: [string, string][]) => `?${new URLSearchParams(pairs).toString()}`;
    const chips = () =>
      within(screen.getByRole('list', { name: 'Conditions of this view' }))
        .getAllByRole('listitem')
        .map((li) => li.textContent);
    const lastBody = () => requestsTo('dashboard').at(-1)!.body as Record<string, unknown>;

    it('reads every filter of a link: a chip each, all in the request', async () => {
      server.use(answer('dashboard', dashboard()));
      const page = open(
        link(
          ['range', '24h'],
          ['filter', '["trace_name","equals","rag-query"]'],
          ['filter', '["metadata","equals","prod","env"]'],
          ['experiments', '1'],
        ),
      );
      await screen.findByRole('table', { name: 'Cost by model' });
      expect(lastBody()).toEqual({
        project_uuid: PROJECT_UUID,
        time_range: '24h',
        status: null,
        search: null,
        filters: [
          { field: 'trace_name', operator: 'equals', value: 'rag-query' },
          { field: 'metadata', key: 'env', operator: 'equals', value: 'prod' },
        ],
        include_experiments: true,
      });
      expect(chips()).toEqual(['name equals rag-query', 'metadata.env equals prod', 'experiment runs included']);
      expect((screen.getByRole('switch', { name: 'Include experiment runs' }) as HTMLInputElement).checked).toBe(true);

      await userEvent.click(screen.getByRole('button', { name: 'Remove name equals rag-query' }));
      await waitFor(() => expect(lastBody().filters).toHaveLength(1));
      expect(page.search().getAll('filter')).toEqual(['["metadata","equals","prod","env"]']);
      expect(page.search().get('range')).toBe('24h');
      await userEvent.click(screen.getByRole('button', { name: 'Remove experiment runs included' }));
      await waitFor(() => expect(lastBody()).toMatchObject({ include_experiments: false }));
      expect(page.search().get('experiments')).toBeNull();
    });

    it('adds a filter, and includes experiment runs, in the URL', async () => {
      server.use(answer('dashboard', dashboard()));
      const page = open();
      await screen.findByRole('table', { name: 'Cost by model' });
      await userEvent.click(screen.getByRole('button', { name: 'Add filter' }));
      const form = await screen.findByRole('form', { name: 'New filter' });
      await userEvent.click(within(form).getByRole('combobox', { name: 'Field' }));
      await userEvent.click(await screen.findByRole('option', { name: 'User' }));
      await userEvent.type(within(form).getByRole('textbox', { name: 'Value' }), 'ann');
      await userEvent.click(within(form).getByRole('button', { name: 'Add' }));
      await waitFor(() =>
        expect(lastBody().filters).toEqual([{ field: 'end_user_identifier', operator: 'equals', value: 'ann' }]),
      );
      expect(page.search().getAll('filter')).toEqual(['["end_user_identifier","equals","ann"]']);
      await userEvent.click(screen.getByRole('switch', { name: 'Include experiment runs' }));
      await waitFor(() => expect(lastBody()).toMatchObject({ include_experiments: true }));
      expect(page.search().get('experiments')).toBe('1');
    });

    it('says when no trace matches the filters, and what to do', async () => {
      server.use(answer('dashboard', emptyDashboard));
      open(link(['filter', '["trace_name","equals","nothing"]']));
      expect(
        await screen.findByRole('heading', { name: 'No traces match these filters in the last 7 days' }),
      ).toBeTruthy();
      expect(
        screen.getByText('Remove a filter, change the search or the status, or pick a longer time range.'),
      ).toBeTruthy();
    });

    it("reads the traces page's search and status: chips, the same fields, and the request", async () => {
      server.use(answer('dashboard', dashboard()));
      const page = open(
        link(['q', 'refund'], ['status', 'error'], ['filter', '["trace_name","equals","rag-query"]'], ['range', '24h']),
      );
      await screen.findByRole('table', { name: 'Cost by model' });
      expect(lastBody()).toMatchObject({ time_range: '24h', search: 'refund', status: 'error' });
      expect(chips()).toEqual(['search "refund"', 'status error', 'name equals rag-query']);
      expect(
        (screen.getByRole('textbox', { name: 'Search inputs, output and metadata' }) as HTMLInputElement).value,
      ).toBe('refund');
      const status = screen.getByRole('combobox', { name: 'Status' }) as HTMLInputElement;
      expect(status.value).toBe('Error');

      await userEvent.click(screen.getByRole('button', { name: 'Remove status error' }));
      await waitFor(() => expect(lastBody()).toMatchObject({ status: null, search: 'refund' }));
      expect(page.search().get('status')).toBeNull();
      await userEvent.click(status);
      await userEvent.click(await screen.findByRole('option', { name: 'Success' }));
      await waitFor(() => expect(lastBody()).toMatchObject({ status: 'success' }));
      expect(page.search().get('status')).toBe('success');

      const search = screen.getByRole('textbox', { name: 'Search inputs, output and metadata' });
      await userEvent.clear(search);
      await userEvent.type(search, 'gift card{Enter}');
      await waitFor(() => expect(lastBody()).toMatchObject({ search: 'gift card' }));
      expect(page.search().get('q')).toBe('gift card');
      expect(chips()).toContain('search "gift card"');
      expect(page.search().get('range')).toBe('24h');
    });

    it('keeps the search, status, filters, experiment runs and range on the way to the traces page', async () => {
      server.use(answer('dashboard', dashboard()));
      const page = open(
        link(
          ['q', 'refund'],
          ['status', 'error'],
          ['filter', '["trace_name","equals","rag-query"]'],
          ['experiments', '1'],
          ['range', '24h'],
        ),
      );
      await screen.findByRole('table', { name: 'Cost by model' });
      await userEvent.click(screen.getByRole('tab', { name: 'Traces' }));
      expect(await screen.findByText(new RegExp(`^Now at /projects/${PROJECT_UUID}/traces\\?`))).toBeTruthy();
      expect(page.search().getAll('filter')).toEqual(['["trace_name","equals","rag-query"]']);
      expect(page.search().get('experiments')).toBe('1');
      expect(page.search().get('q')).toBe('refund');
      expect(page.search().get('status')).toBe('error');
      expect(page.search().get('range')).toBe('24h');
    });
  });
});
