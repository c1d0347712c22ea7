import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { answer, fail, pending, requestsTo, server } from '../../test/api';
import { admin, CHILD_ID, criterion, PROJECT_UUID, project, ROOT_ID, skeleton, span } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import TracePage from './TracePage';

const open = (query = '') =>
  renderPage(<TracePage />, {
    route: `/projects/${PROJECT_UUID}/traces/${ROOT_ID}${query}`,
    path: '/projects/:projectUuid/traces/:traceId',
  });
const detail = () => screen.getByLabelText('Selected span');
const spansAsked = () => requestsTo('span').map((r) => r.path);

beforeEach(() => {
  server.use(
    answer('me', admin),
    answer('projects', [project()]),
    answer('criteria', [criterion]),
    // Each span answers with its own payload, as the server does.
    answer('span', (request) => span(request.path.split('/').at(-1)!)),
  );
});

describe('the trace page', () => {
  it('shows that the trace is loading', async () => {
    server.use(pending('skeleton'));
    open();
    expect(await screen.findByText('Loading the trace…')).toBeTruthy();
  });

  it('says when the trace does not exist, with the way back', async () => {
    server.use(fail('skeleton', 404, 'trace log not found'));
    open();
    expect(await screen.findByRole('heading', { name: 'This trace does not exist' })).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Back to the traces' }).getAttribute('href')).toBe(
      `/projects/${PROJECT_UUID}/traces`,
    );
  });

  it('shows why the trace could not load, and retries', async () => {
    server.use(answer('skeleton', skeleton));
    server.use(fail('skeleton', 503, 'writes are still being applied', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('Could not load the trace')).toBeTruthy();
    expect(within(alert).getByText(/\(503\): writes are still being applied/)).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('tree', { name: 'Spans of the trace' })).toBeTruthy();
    expect(requestsTo('skeleton')).toHaveLength(2);
  });

  it('says when the trace has no spans yet', async () => {
    server.use(answer('skeleton', { root_trace_id: ROOT_ID, spans: [] }));
    open();
    expect(await screen.findByRole('heading', { name: 'This trace has no spans yet' })).toBeTruthy();
  });

  it('draws the tree and opens the root span', async () => {
    server.use(answer('skeleton', skeleton));
    open();
    expect(await screen.findByRole('heading', { level: 2, name: 'answer-question' })).toBeTruthy();
    const items = within(screen.getByRole('tree')).getAllByRole('treeitem');
    expect(items.map((i) => i.getAttribute('aria-selected'))).toEqual(['true', 'false']);
    expect(within(items[1]!).getByText('call-model')).toBeTruthy();
    expect(await within(detail()).findByText(/How do refunds work\?/)).toBeTruthy();
    expect(within(detail()).getByText(/Refunds are paid within 30 days/)).toBeTruthy();
    expect(spansAsked()).toEqual([`/span/${ROOT_ID}`]);
  });

  it('opens the span the URL names, and writes the span picked in the tree into the URL', async () => {
    server.use(answer('skeleton', skeleton));
    const page = open(`?span=${CHILD_ID}`);
    expect(await within(await screen.findByLabelText('Selected span')).findByText(CHILD_ID)).toBeTruthy();
    expect(within(detail()).getByRole('heading', { name: 'call-model' })).toBeTruthy();
    expect(spansAsked()).toEqual([`/span/${CHILD_ID}`]);

    await userEvent.click(within(screen.getByRole('tree')).getAllByRole('treeitem')[0]!);
    await waitFor(() => expect(page.search().get('span')).toBe(ROOT_ID));
    expect(await within(detail()).findByRole('heading', { name: 'answer-question' })).toBeTruthy();
    await waitFor(() => expect(spansAsked()).toEqual([`/span/${CHILD_ID}`, `/span/${ROOT_ID}`]));
  });
});
