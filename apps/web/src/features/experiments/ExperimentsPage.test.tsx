import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { answer, fail, pending, requestsTo, server } from '../../test/api';
import { EXPERIMENT_A, EXPERIMENT_B, experiment, PROJECT_UUID, project } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import ExperimentsPage from './ExperimentsPage';

const open = (query = '') =>
  renderPage(<ExperimentsPage />, {
    route: `/projects/${PROJECT_UUID}/experiments${query}`,
    path: '/projects/:projectUuid/experiments',
  });
const lastRequest = () => requestsTo('experiments').at(-1)!.body;
const TWO = [
  experiment(),
  experiment({ uuid: EXPERIMENT_B, run_name: 'new-prompt', samples: 40, created_at: '2026-03-03T09:00:00.000Z' }),
];

beforeEach(() => {
  server.use(answer('projects', [project()]));
});

describe('the experiments page', () => {
  it('shows that the experiments are loading', async () => {
    server.use(pending('experiments'));
    open();
    expect(await screen.findByText('Loading the experiments…')).toBeTruthy();
  });

  it('says how experiments are made when there is none', async () => {
    server.use(answer('experiments', { results: [] }));
    open();
    expect(await screen.findByRole('heading', { name: 'No experiments yet' })).toBeTruthy();
    expect(screen.getByText(/Run an evaluation with the Python or TypeScript client/)).toBeTruthy();
  });

  it('says when the filters match nothing', async () => {
    server.use(answer('experiments', { results: [] }));
    open('?name=nothing-like-this');
    expect(await screen.findByRole('heading', { name: 'No experiment matches these filters' })).toBeTruthy();
    expect(screen.getByText('Clear a filter to see more.')).toBeTruthy();
  });

  it('shows why the experiments could not load, and retries', async () => {
    server.use(answer('experiments', { results: TWO }));
    server.use(fail('experiments', 503, 'the database is unavailable', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText(/\(503\): the database is unavailable/)).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'Experiments' })).toBeTruthy();
  });

  it('lists the experiments newest first, sorts them, and compares two', async () => {
    server.use(answer('experiments', { results: TWO }));
    const page = open();
    const table = await screen.findByRole('table', { name: 'Experiments' });
    const runs = () =>
      within(table)
        .getAllByRole('row')
        .slice(1)
        .map((r) => within(r).getAllByRole('cell')[2]!.textContent);
    expect(runs()).toEqual(['new-prompt', 'baseline-run']);
    expect(screen.getByText('2 experiments')).toBeTruthy();
    expect(within(table).getAllByRole('link', { name: 'refund-answers' })[0]!.getAttribute('href')).toBe(
      `/projects/${PROJECT_UUID}/experiments/${EXPERIMENT_B}`,
    );

    await userEvent.click(within(table).getByRole('button', { name: 'Sort by samples' }));
    expect(runs()).toEqual(['new-prompt', 'baseline-run']);
    await userEvent.click(within(table).getByRole('button', { name: 'Sort by samples' }));
    expect(runs()).toEqual(['baseline-run', 'new-prompt']);
    // The order is in the URL (a link reproduces it); sorting asks the server nothing.
    expect(Object.fromEntries(page.search())).toEqual({ sort: 'samples', dir: 'asc' });
    expect(requestsTo('experiments')).toHaveLength(1);

    await userEvent.click(screen.getByRole('checkbox', { name: 'Compare refund-answers (baseline-run)' }));
    await userEvent.click(screen.getByRole('checkbox', { name: 'Compare refund-answers (new-prompt)' }));
    await userEvent.click(screen.getByRole('button', { name: 'Compare 2 selected experiments' }));
    expect(
      await screen.findByText(
        `Now at /projects/${PROJECT_UUID}/experiments/compare?ids=${EXPERIMENT_A},${EXPERIMENT_B}&baseline=${EXPERIMENT_A}`,
      ),
    ).toBeTruthy();
  });

  it('asks with the filters the URL holds, and writes typed filters into the URL', async () => {
    server.use(answer('experiments', { results: TWO }));
    const page = open('?name=refund&metadata=model%3Dgpt-4o');
    await screen.findByRole('table', { name: 'Experiments' });
    expect(requestsTo('experiments')[0]!.body).toEqual({
      project_uuid: PROJECT_UUID,
      experiment_name_filter: 'refund',
      run_name_filter: null,
      metadata_filter: { model: 'gpt-4o' },
    });
    expect((screen.getByLabelText('Experiment name') as HTMLInputElement).value).toBe('refund');

    await userEvent.type(screen.getByLabelText('Run name'), 'nightly');
    await waitFor(() =>
      expect(lastRequest()).toMatchObject({ experiment_name_filter: 'refund', run_name_filter: 'nightly' }),
    );
    expect(Object.fromEntries(page.search())).toEqual({ name: 'refund', metadata: 'model=gpt-4o', run: 'nightly' });
  });
});
