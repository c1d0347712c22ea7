import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { answer, fail, pending, requestsTo, server } from '../../test/api';
import { EXPERIMENT_A, experiment, PROJECT_UUID, project, sample, samplePage } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import ExperimentPage from './ExperimentPage';

const open = (query = '') =>
  renderPage(<ExperimentPage />, {
    route: `/projects/${PROJECT_UUID}/experiments/${EXPERIMENT_A}${query}`,
    path: '/projects/:projectUuid/experiments/:experimentUuid',
  });
const lastRequest = () => requestsTo('samples').at(-1)!;
const SAMPLES = [
  sample(),
  sample({
    trace_id: 'e0000000-0000-4000-8000-000000000002',
    inputs: { question: 'Can I return a gift?' },
    output: 'Yes, with the receipt.',
    status: 'error',
    scores: [{ name: 'accuracy', score: 0.8 }],
  }),
];

beforeEach(() => {
  server.use(answer('projects', [project()]), answer('experiments', { results: [experiment()] }));
});

describe('the experiment page', () => {
  it('shows that the samples are loading', async () => {
    server.use(pending('samples'));
    open();
    expect(await screen.findByText('Loading the samples…')).toBeTruthy();
  });

  it('says where samples come from when there is none', async () => {
    server.use(answer('samples', samplePage([])));
    open();
    expect(await screen.findByRole('heading', { name: 'No samples yet' })).toBeTruthy();
    expect(screen.getByText(/Samples appear here as the run logs its traces/)).toBeTruthy();
  });

  it('shows why the samples could not load, and retries', async () => {
    server.use(answer('samples', samplePage(SAMPLES)));
    server.use(fail('samples', 500, 'the query failed', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('Could not load the samples')).toBeTruthy();
    expect(within(alert).getByText(/\(500\): the query failed/)).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'Samples' })).toBeTruthy();
  });

  it('shows the experiment, its score summary and its samples', async () => {
    server.use(answer('samples', samplePage(SAMPLES)));
    open();
    const samples = await screen.findByRole('table', { name: 'Samples' });
    expect(await screen.findByRole('heading', { name: 'refund-answers' })).toBeTruthy();
    expect(screen.getByText('baseline-run')).toBeTruthy();
    expect(requestsTo('experiments')[0]!.body).toEqual({ experiment_uuids: [EXPERIMENT_A] });

    const summary = screen.getByRole('table', { name: 'Scores over all samples' });
    expect(
      within(summary)
        .getAllByRole('cell')
        .map((c) => c.textContent),
    ).toEqual(['accuracy', '2', '0.85', '0.90', '0.07', '0.80', '0.90']);
    const rows = within(samples).getAllByRole('row').slice(1);
    expect(within(rows[1]!).getByText('Yes, with the receipt.')).toBeTruthy();
    expect(within(rows[1]!).getByText('error')).toBeTruthy();
    expect(within(rows[0]!).getByRole('link').getAttribute('href')).toBe(
      `/projects/${PROJECT_UUID}/traces/${SAMPLES[0]!.trace_id}`,
    );
    expect(screen.getByRole('status').textContent).toBe('2 samples');
  });

  it('asks for the page and filter the URL holds, and pages through the URL', async () => {
    server.use(
      answer('samples', (request) => {
        const { page } = request.body as { page: number };
        return samplePage(SAMPLES, { total: 120, total_pages: 3, page });
      }),
    );
    const page = open('?filter=status&op=equals&value=error&page=2');
    await screen.findByRole('table', { name: 'Samples' });
    expect(lastRequest().path).toBe(`/experiment/${EXPERIMENT_A}/samples`);
    expect(lastRequest().body).toEqual({
      page: 2,
      page_size: 50,
      filter_field: 'status',
      filter_operator: 'equals',
      filter_value: 'error',
      filter_key: null,
    });
    expect(screen.getByRole('status').textContent).toBe('120 samples match');

    await userEvent.click(screen.getByRole('button', { name: 'next page' }));
    await waitFor(() => expect(lastRequest().body).toMatchObject({ page: 3, filter_value: 'error' }));
    expect(Object.fromEntries(page.search())).toEqual({ filter: 'status', op: 'equals', value: 'error', page: '3' });
  });
});
