import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { answer, requestsTo, server, settled } from '../../test/api';
import {
  admin,
  CHILD_ID,
  criterion,
  EXPERIMENT_A,
  EXPERIMENT_B,
  experiment,
  PROJECT_UUID,
  project,
  ROOT_ID,
  skeleton,
  span,
} from '../../test/fixtures';
import { renderPage } from '../../test/render';
import TracePage from './TracePage';

// The trace page's header for a trace an experiment run logged (the skeleton names the run, so that no
// payload is fetched for it): the way back to its experiment, and to its case in the comparison it was
// opened from. The rest of the page is TracePage.test.tsx's.

const open = (query = '') =>
  renderPage(<TracePage />, {
    route: `/projects/${PROJECT_UUID}/traces/${ROOT_ID}${query}`,
    path: '/projects/:projectUuid/traces/:traceId',
  });
const runLinks = () => screen.findByRole('group', { name: 'Experiment run' });

beforeEach(() => {
  server.use(
    answer('me', admin),
    answer('projects', [project()]),
    answer('criteria', [criterion]),
    answer('span', (r) => span(r.path.split('/').at(-1)!)),
    answer('experiments', { results: [experiment({ uuid: EXPERIMENT_B, run_name: 'new-prompt' })] }),
  );
});

describe('a trace of an experiment run', () => {
  it('links to its experiment', async () => {
    server.use(answer('skeleton', { ...skeleton, experiment_uuid: EXPERIMENT_B }));
    open();
    const links = await runLinks();
    const link = await within(links).findByRole('link', { name: 'refund-answers · new-prompt' });
    expect(link.getAttribute('href')).toBe(`/projects/${PROJECT_UUID}/experiments/${EXPERIMENT_B}`);
    expect(requestsTo('experiments')[0]!.body).toEqual({ experiment_uuids: [EXPERIMENT_B] });
    // Opened from no comparison: no case to go back to.
    expect(within(links).queryByRole('link', { name: 'Its case in the comparison' })).toBeNull();
  });

  it('links to its case in the comparison it was opened from, as long as the page is open', async () => {
    server.use(answer('skeleton', { ...skeleton, experiment_uuid: EXPERIMENT_B }));
    const page = open(`?compare=${EXPERIMENT_A},${EXPERIMENT_B}&baseline=${EXPERIMENT_A}`);
    const links = await runLinks();
    const back = new URLSearchParams({
      ids: `${EXPERIMENT_A},${EXPERIMENT_B}`,
      baseline: EXPERIMENT_A,
      page: '1',
      trace: ROOT_ID,
    });
    const caseLink = () => within(links).getByRole('link', { name: 'Its case in the comparison' });
    expect(caseLink().getAttribute('href')).toBe(`/projects/${PROJECT_UUID}/experiments/compare?${back}`);

    // Picking another span keeps the way back.
    await userEvent.click(await screen.findByRole('treeitem', { name: /call-model/ }));
    await waitFor(() => expect(page.search().get('span')).toBe(CHILD_ID));
    expect(page.search().get('compare')).toBe(`${EXPERIMENT_A},${EXPERIMENT_B}`);
    expect(caseLink().getAttribute('href')).toBe(`/projects/${PROJECT_UUID}/experiments/compare?${back}`);
  });

  it('shows nothing of the kind for production traffic', async () => {
    server.use(answer('skeleton', { ...skeleton, experiment_uuid: null }));
    open();
    expect(await screen.findByRole('tree', { name: 'Spans of the trace' })).toBeTruthy();
    await settled();
    expect(screen.queryByRole('group', { name: 'Experiment run' })).toBeNull();
    expect(requestsTo('experiments')).toHaveLength(0);
  });
});
