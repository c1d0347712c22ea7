import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { answer, fail, pending, requestsTo, server } from '../../test/api';
import { admin, dataset, testCase } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import DatasetPage from './DatasetPage';

const open = (id = 7) => renderPage(<DatasetPage />, { route: `/datasets/${id}`, path: '/datasets/:datasetId' });
const CASES = [testCase(1, 'How do refunds work?'), testCase(2, 'Can I return a gift?')];

beforeEach(() => {
  server.use(answer('me', admin));
});

describe('the dataset page', () => {
  it('shows that the dataset is loading', async () => {
    server.use(pending('datasets'));
    open();
    expect(await screen.findByText('Loading the dataset…')).toBeTruthy();
  });

  it('shows that the test cases are loading', async () => {
    server.use(answer('datasets', { results: [dataset()] }), pending('testCases'));
    open();
    expect(await screen.findByText('Loading the test cases…')).toBeTruthy();
  });

  it('says when the dataset does not exist, with a link to all of them', async () => {
    server.use(answer('datasets', { results: [dataset()] }));
    open(99);
    expect(await screen.findByRole('heading', { name: 'No such dataset' })).toBeTruthy();
    expect(screen.getByRole('link', { name: 'See all datasets' }).getAttribute('href')).toBe('/datasets');
  });

  it('says how to add test cases to an empty dataset', async () => {
    server.use(
      answer('datasets', { results: [dataset({ test_case_count: 0 })] }),
      answer('testCases', { total: 0, page: 1, page_size: 500, results: [] }),
    );
    open();
    expect(await screen.findByRole('heading', { name: 'No test cases yet' })).toBeTruthy();
    expect(screen.getByText(/Add one, import a CSV or JSON Lines file/)).toBeTruthy();
  });

  it('shows why the test cases could not load, and retries', async () => {
    server.use(
      answer('datasets', { results: [dataset()] }),
      answer('testCases', { total: 2, page: 1, page_size: 500, results: CASES }),
    );
    server.use(fail('testCases', 503, 'the database is unavailable', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText(/\(503\): the database is unavailable/)).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'Test cases' })).toBeTruthy();
  });

  it('shows the dataset and its test cases', async () => {
    server.use(
      answer('datasets', { results: [dataset()] }),
      answer('testCases', { total: 2, page: 1, page_size: 500, results: CASES }),
    );
    open();
    const table = await screen.findByRole('table', { name: 'Test cases' });
    expect(screen.getByRole('heading', { name: 'refund-questions' })).toBeTruthy();
    expect(screen.getByText(/2 test cases · columns/)).toBeTruthy();
    const rows = within(table).getAllByRole('row').slice(1);
    expect(
      rows.map((r) =>
        within(r)
          .getAllByRole('cell')
          .slice(0, 4)
          .map((c) => c.textContent),
      ),
    ).toEqual([
      ['1', 'How do refunds work?', 'answer 1', 'smoke'],
      ['2', 'Can I return a gift?', 'answer 2', ''],
    ]);
    expect(requestsTo('testCases')[0]).toMatchObject({
      path: '/datasets/7/test_cases',
      query: { page: '1', page_size: '500' },
    });
    expect(await screen.findByRole('button', { name: 'Add test case' })).toBeTruthy();
  });

  it('fetches the next page of test cases as the table scrolls to its end', async () => {
    // 502 test cases: a full first page of 500, and 2 more.
    const all = Array.from({ length: 502 }, (_, i) => testCase(i + 1, `question ${i + 1}`));
    server.use(
      answer('datasets', { results: [dataset({ test_case_count: 502 })] }),
      answer('testCases', ({ query }) => {
        const page = Number(query.page);
        const size = Number(query.page_size);
        return { total: 502, page, page_size: size, results: all.slice((page - 1) * size, page * size) };
      }),
    );
    open();
    const table = await screen.findByRole('table', { name: 'Test cases' });
    expect(requestsTo('testCases').map((r) => r.query.page)).toEqual(['1']);

    const scroller = table.parentElement!;
    scroller.scrollTop = 500 * 44;
    fireEvent.scroll(scroller);
    await waitFor(() => expect(requestsTo('testCases').map((r) => r.query.page)).toEqual(['1', '2']));
    expect(await within(table).findByText('question 502')).toBeTruthy();
  });
});
