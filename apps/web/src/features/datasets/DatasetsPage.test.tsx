import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { answer, fail, pending, requestsTo, server, settled } from '../../test/api';
import { admin, dataset, viewer } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import DatasetsPage from './DatasetsPage';

const open = () => renderPage(<DatasetsPage />, { route: '/datasets' });

describe('the datasets page', () => {
  it('shows that the datasets are loading', async () => {
    server.use(answer('me', admin), pending('datasets'));
    open();
    expect(await screen.findByText('Loading the datasets…')).toBeTruthy();
  });

  it('says what a dataset is and how to make one when there is none', async () => {
    server.use(answer('me', admin), answer('datasets', { results: [] }));
    open();
    expect(await screen.findByRole('heading', { name: 'No datasets yet' })).toBeTruthy();
    const explanation = screen.getByText(/A dataset holds test cases/);
    // A paragraph of its own, not inside another (invalid HTML, which browsers split and screen readers misread).
    expect(explanation.parentElement?.closest('p')).toBeNull();
    expect(await screen.findByRole('button', { name: 'New dataset' })).toBeTruthy();
  });

  it('shows why the datasets could not load, and retries', async () => {
    server.use(answer('me', admin), answer('datasets', { results: [dataset()] }));
    server.use(fail('datasets', 503, 'the database is unavailable', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText(/\(503\): the database is unavailable/)).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('link', { name: 'refund-questions' })).toBeTruthy();
    expect(requestsTo('datasets')).toHaveLength(2);
  });

  it('lists the datasets, each linking to its test cases', async () => {
    server.use(
      answer('me', admin),
      answer('datasets', {
        results: [
          dataset(),
          dataset({ id: 8, name: 'tone-checks', column_names: ['message', 'context'], test_case_count: 1500 }),
        ],
      }),
    );
    open();
    const table = await screen.findByRole('table', { name: 'Datasets' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(
      rows.map((r) =>
        within(r)
          .getAllByRole('cell')
          .slice(0, 3)
          .map((c) => c.textContent),
      ),
    ).toEqual([
      ['refund-questions', 'question', '2'],
      ['tone-checks', 'message, context', '1,500'],
    ]);
    expect(within(rows[1]!).getByRole('link').getAttribute('href')).toBe('/datasets/8');
  });

  it('offers no creation to a viewer', async () => {
    server.use(answer('me', viewer), answer('datasets', { results: [dataset()] }));
    open();
    await screen.findByRole('table', { name: 'Datasets' });
    await settled();
    expect(requestsTo('me')).toHaveLength(1);
    expect(screen.queryByRole('button', { name: 'New dataset' })).toBeNull();
  });
});
