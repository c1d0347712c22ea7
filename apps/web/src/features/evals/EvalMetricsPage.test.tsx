import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { answer, fail, pending, requestsTo, server, settled } from '../../test/api';
import { admin, evalMetric, viewer } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import EvalMetricsPage from './EvalMetricsPage';

const open = () => renderPage(<EvalMetricsPage />, { route: '/evals' });
const METRICS = [evalMetric(), evalMetric({ id: 2, name: 'is-json', type: 'json_valid', config: {} })];

describe('the evaluation metrics page', () => {
  it('shows that the metrics are loading', async () => {
    server.use(answer('me', admin), pending('evalMetrics'));
    open();
    expect(await screen.findByText('Loading the metrics…')).toBeTruthy();
  });

  it('says to create a metric when there is none', async () => {
    server.use(answer('me', admin), answer('evalMetrics', []));
    open();
    expect(await screen.findByText('No metrics yet: create one with the form.')).toBeTruthy();
    expect(await screen.findByRole('button', { name: 'Create metric' })).toBeTruthy();
  });

  it('shows why the metrics could not load, and retries', async () => {
    server.use(answer('me', admin), answer('evalMetrics', METRICS));
    server.use(fail('evalMetrics', 503, 'the database is unavailable', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText(/\(503\): the database is unavailable/)).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'Evaluation metrics' })).toBeTruthy();
    expect(requestsTo('evalMetrics')).toHaveLength(2);
  });

  it('lists the metrics with their types, deletable by a member or admin', async () => {
    server.use(answer('me', admin), answer('evalMetrics', METRICS));
    open();
    const table = await screen.findByRole('table', { name: 'Evaluation metrics' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(
      rows.map((r) =>
        within(r)
          .getAllByRole('cell')
          .slice(0, 2)
          .map((c) => c.textContent),
      ),
    ).toEqual([
      ['exact-answer', 'Exact match'],
      ['is-json', 'Valid JSON'],
    ]);
    expect(await within(table).findByRole('button', { name: 'Delete the metric is-json' })).toBeTruthy();
  });

  it('shows a viewer the metrics without the form or deletion', async () => {
    server.use(answer('me', viewer), answer('evalMetrics', METRICS));
    open();
    await screen.findByRole('table', { name: 'Evaluation metrics' });
    await settled();
    expect(requestsTo('me')).toHaveLength(1);
    expect(screen.queryByRole('button', { name: 'Create metric' })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Delete the metric/ })).toBeNull();
  });
});
