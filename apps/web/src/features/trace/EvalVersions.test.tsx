import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { answer, fail, requestsTo, server, settled } from '../../test/api';
import { admin, criterion, PROJECT_UUID, project, ROOT_ID, skeleton, span } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import TracePage from './TracePage';

// The span's scores tab names the version of each metric that scored it: a score keeps its version after
// the metric is edited.

const open = () =>
  renderPage(<TracePage />, {
    route: `/projects/${PROJECT_UUID}/traces/${ROOT_ID}`,
    path: '/projects/:projectUuid/traces/:traceId',
  });

beforeEach(() => {
  server.use(
    answer('me', admin),
    answer('projects', [project()]),
    answer('criteria', [criterion]),
    answer('skeleton', skeleton),
    answer('span', (request) => span(request.path.split('/').at(-1)!)),
  );
});

const openScores = async () => {
  open();
  await userEvent.click(await screen.findByRole('tab', { name: /^Scores & feedback/ }));
};

describe("a span's evaluation versions", () => {
  it('names the version of each metric that scored the span', async () => {
    server.use(
      answer('spanEvalResults', {
        'says-paris': { score: 1, metric_version: 1 },
        judge: { error: 'no score in the answer', metric_version: 3 },
        // Written before metrics had versions: nothing to name.
        legacy: { score: 0.5 },
      }),
    );
    await openScores();
    const group = await screen.findByRole('group', { name: 'Evaluated by' });
    expect(within(group).getByText('says-paris · version 1')).toBeTruthy();
    expect(within(group).getByText('judge · version 3')).toBeTruthy();
    expect(within(group).queryByText(/legacy/)).toBeNull();
    expect(requestsTo('spanEvalResults')[0]!.path).toBe(`/span/${ROOT_ID}/eval-results`);
  });

  it('shows nothing for a span no metric scored', async () => {
    server.use(answer('spanEvalResults', {}));
    await openScores();
    await waitFor(() => expect(requestsTo('spanEvalResults')).toHaveLength(1));
    await settled();
    expect(screen.queryByRole('group', { name: 'Evaluated by' })).toBeNull();
  });

  it('says when the versions could not be read', async () => {
    server.use(fail('spanEvalResults', 503, 'the database is unavailable'));
    await openScores();
    expect(
      await screen.findByText('The versions of the metrics that scored this span could not be read.'),
    ).toBeTruthy();
  });
});
