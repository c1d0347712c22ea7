import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { answer, fail, pending, requestsTo, server } from '../../test/api';
import { compareRows, comparison, EXPERIMENT_A, EXPERIMENT_B, PROJECT_UUID, project } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import ComparePage from './ComparePage';

const open = (query: string) =>
  renderPage(<ComparePage />, {
    route: `/projects/${PROJECT_UUID}/experiments/compare${query}`,
    path: '/projects/:projectUuid/experiments/compare',
  });
const BOTH = `?ids=${EXPERIMENT_A},${EXPERIMENT_B}`;
/** The comparison against the baseline asked for, as the server makes it. */
const compareAsAsked = () =>
  answer('compare', (request) => comparison((request.body as { baseline_uuid: string }).baseline_uuid));

beforeEach(() => {
  server.use(answer('projects', [project()]));
});

describe('the compare page', () => {
  it('asks to pick experiments when fewer than two are named', async () => {
    // The page asks for a comparison even then (the server refuses it); its answer is not shown.
    server.use(pending('compare'));
    open(`?ids=${EXPERIMENT_A}`);
    expect(await screen.findByRole('heading', { name: 'Pick the experiments to compare' })).toBeTruthy();
    expect(screen.getByRole('link', { name: 'experiments page' }).getAttribute('href')).toBe(
      `/projects/${PROJECT_UUID}/experiments`,
    );
  });

  it('shows that the runs are being compared', async () => {
    server.use(pending('compare'));
    open(BOTH);
    expect(await screen.findByText('Comparing the runs…')).toBeTruthy();
  });

  it('says when the runs have nothing to compare', async () => {
    server.use(
      answer('compare', { ...comparison(), metrics: [] }),
      answer('compareRows', compareRows({ total: 0, rows: [] })),
    );
    open(BOTH);
    expect(await screen.findByRole('heading', { name: 'Nothing to compare yet' })).toBeTruthy();
    expect(screen.getByText('These runs have no samples with scores, latency or cost.')).toBeTruthy();
  });

  it('shows why the comparison failed, and retries', async () => {
    server.use(compareAsAsked(), answer('compareRows', compareRows()));
    server.use(fail('compare', 404, 'experiment not found', { once: true }));
    open(BOTH);
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('Could not compare')).toBeTruthy();
    expect(within(alert).getByText('Not found: experiment not found')).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'Metrics by run' })).toBeTruthy();
  });

  it('shows each metric against the baseline, and the test cases side by side', async () => {
    server.use(compareAsAsked(), answer('compareRows', compareRows()));
    open(BOTH);
    const metrics = await screen.findByRole('table', { name: 'Metrics by run' });
    expect(screen.getByText(/12 test cases \(by inputs and target\); 12 in every run/)).toBeTruthy();
    const [base, other] = within(metrics).getAllByRole('row').slice(1);
    expect(within(base!).getByText('baseline')).toBeTruthy();
    expect(within(base!).getByText('0.70')).toBeTruthy();
    expect(within(other!).getByText('0.90')).toBeTruthy();
    expect(within(other!).getByText('+0.200')).toBeTruthy();
    expect(within(other!).getByText('significantly better')).toBeTruthy();
    expect(within(other!).getByText('p = 0.01, n = 12')).toBeTruthy();

    const cases = await screen.findByRole('table', { name: 'Test cases side by side' });
    expect(within(cases).getByText('Target: Within 30 days')).toBeTruthy();
    expect(within(cases).getByText('Refunds take a while.')).toBeTruthy();
    expect(within(cases).getByText('Not in this run')).toBeTruthy();
    // The trace leads back here: its header links to this comparison.
    expect(within(cases).getByRole('link', { name: 'Open trace' }).getAttribute('href')).toBe(
      `/projects/${PROJECT_UUID}/traces/f0000000-0000-4000-8000-00000000000a?compare=${EXPERIMENT_A}%2C${EXPERIMENT_B}&baseline=${EXPERIMENT_A}`,
    );
  });

  it('asks for the runs, baseline and page the URL names, and writes changes back', async () => {
    server.use(
      compareAsAsked(),
      answer('compareRows', (request) => compareRows({ total: 45, page: (request.body as { page: number }).page })),
    );
    const page = open(`${BOTH}&baseline=${EXPERIMENT_B}&page=2`);
    await screen.findByRole('table', { name: 'Test cases side by side' });
    expect(requestsTo('compare')[0]!.body).toEqual({
      experiment_uuids: [EXPERIMENT_A, EXPERIMENT_B],
      baseline_uuid: EXPERIMENT_B,
    });
    expect(requestsTo('compareRows')[0]!.body).toEqual({
      experiment_uuids: [EXPERIMENT_A, EXPERIMENT_B],
      baseline_uuid: EXPERIMENT_B,
      page: 2,
      page_size: 20,
    });

    await userEvent.click(screen.getByRole('button', { name: 'next page of test cases' }));
    await waitFor(() => expect(requestsTo('compareRows').at(-1)!.body).toMatchObject({ page: 3 }));
    expect(page.search().get('page')).toBe('3');

    // A new baseline starts the test cases again from their first page.
    await userEvent.click(screen.getByRole('combobox', { name: 'Baseline' }));
    await userEvent.click(await screen.findByRole('option', { name: 'refund-answers · baseline-run' }));
    await waitFor(() => expect(requestsTo('compare').at(-1)!.body).toMatchObject({ baseline_uuid: EXPERIMENT_A }));
    expect(Object.fromEntries(page.search())).toMatchObject({ baseline: EXPERIMENT_A, page: '1' });
    await waitFor(() =>
      expect(requestsTo('compareRows').at(-1)!.body).toMatchObject({ baseline_uuid: EXPERIMENT_A, page: 1 }),
    );
  });

  it('shows the cases a count stands for when it is clicked, and all of them again', async () => {
    server.use(
      compareAsAsked(),
      answer('compareRows', (request) =>
        compareRows((request.body as { outcome?: unknown }).outcome ? { total: 8 } : {}),
      ),
    );
    const page = open(BOTH);
    const metrics = await screen.findByRole('table', { name: 'Metrics by run' });
    const improved = within(metrics).getByRole('button', {
      name: 'Show the 8 cases where new-prompt improved on accuracy',
    });
    expect(
      within(metrics).getByRole('button', { name: 'Show the 1 case where new-prompt regressed on accuracy' }),
    ).toBeTruthy();
    expect(
      within(metrics).getByRole('button', {
        name: 'Show the 3 cases where new-prompt matched the baseline on accuracy',
      }),
    ).toBeTruthy();
    await userEvent.click(improved);

    await waitFor(() =>
      expect(requestsTo('compareRows').at(-1)!.body).toMatchObject({
        outcome: { run_uuid: EXPERIMENT_B, kind: 'score', metric: 'accuracy', change: 'improved' },
        page: 1,
      }),
    );
    expect(Object.fromEntries(page.search())).toMatchObject({
      cases: 'improved',
      run: EXPERIMENT_B,
      metric: 'accuracy',
    });
    expect(await screen.findByText('Cases where new-prompt improved on accuracy')).toBeTruthy();
    expect(screen.getByRole('status').textContent).toBe('8 cases shown');
    expect(
      within(metrics)
        .getByRole('button', { name: 'Showing the 8 cases where new-prompt improved on accuracy' })
        .getAttribute('aria-pressed'),
    ).toBe('true');

    await userEvent.click(screen.getByRole('button', { name: 'Show all cases' }));
    await waitFor(() => expect(page.search().get('cases')).toBeNull());
    expect(requestsTo('compareRows').at(-1)!.body).not.toHaveProperty('outcome');
    expect(await screen.findByText('Test cases')).toBeTruthy();
  });

  it('opens on the cases the URL names, and says when none match', async () => {
    server.use(compareAsAsked(), answer('compareRows', compareRows({ total: 0, rows: [] })));
    open(`${BOTH}&cases=regressed&run=${EXPERIMENT_B}&kind=latency`);
    expect(await screen.findByRole('heading', { name: 'No test cases to show' })).toBeTruthy();
    expect(screen.getByText('Cases where new-prompt regressed on latency')).toBeTruthy();
    expect(requestsTo('compareRows')[0]!.body).toMatchObject({
      outcome: { run_uuid: EXPERIMENT_B, kind: 'latency', change: 'regressed' },
    });
  });

  it('shows the case of the trace a link names', async () => {
    const trace = 'f0000000-0000-4000-8000-00000000000a';
    server.use(compareAsAsked(), answer('compareRows', compareRows({ total: 1 })));
    open(`${BOTH}&trace=${trace}`);
    expect(await screen.findByText('The case of trace f0000000')).toBeTruthy();
    expect(requestsTo('compareRows')[0]!.body).toMatchObject({ trace_id: trace });
    const cases = await screen.findByRole('table', { name: 'Test cases side by side' });
    expect(within(cases).getByText('Refunds take a while.')).toBeTruthy();
  });
});
