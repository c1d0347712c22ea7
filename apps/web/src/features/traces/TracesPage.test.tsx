import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { answer, fail, pending, requestsTo, server } from '../../test/api';
import { stubEventSource, type FakeEventSource } from '../../test/event-source';
import { admin, PROJECT_UUID, project, queue, QUEUE_ID, tracePage, traceRow, viewer } from '../../test/fixtures';
import { API_KEY, renderPage } from '../../test/render';
import TracesPage from './TracesPage';

const ROWS = [
  traceRow(),
  traceRow({ trace_id: 'a0000000-0000-4000-8000-000000000002', trace_name: 'classify-ticket', status: 'error' }),
];

const open = (query = '') =>
  renderPage(<TracesPage />, {
    route: `/projects/${PROJECT_UUID}/traces${query}`,
    path: '/projects/:projectUuid/traces',
  });
const lastRequest = () => requestsTo('traces').at(-1)!.body;
const rowNames = () =>
  within(screen.getByRole('table', { name: 'Traces' }))
    .getAllByRole('link')
    .map((a) => a.textContent);

async function choose(label: string, option: string) {
  await userEvent.click(screen.getByRole('combobox', { name: label }));
  await userEvent.click(await screen.findByRole('option', { name: option }));
}

let streams: FakeEventSource[];
beforeEach(() => {
  streams = stubEventSource();
  server.use(answer('me', admin), answer('projects', [project()]));
});
afterEach(() => vi.unstubAllGlobals());

describe('the traces page', () => {
  it('shows that the traces are loading', async () => {
    server.use(pending('traces'));
    open();
    expect(await screen.findByText('Loading traces…')).toBeTruthy();
  });

  it('explains how to send traces to an empty project', async () => {
    server.use(answer('traces', tracePage([])));
    open();
    expect(await screen.findByRole('heading', { name: 'No traces in this project yet' })).toBeTruthy();
    expect(screen.getByText('Traces written to this project appear here as they arrive.')).toBeTruthy();
  });

  it('offers to reset a view nothing matches', async () => {
    server.use(answer('traces', tracePage([])));
    const page = open('?status=error');
    expect(await screen.findByRole('heading', { name: 'No trace matches this view' })).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Reset the view' }));
    await waitFor(() => expect(lastRequest()).toMatchObject({ status: null }));
    expect(page.search().toString()).toBe('');
  });

  it('shows why the traces could not load, and retries', async () => {
    server.use(answer('traces', tracePage(ROWS)));
    server.use(fail('traces', 500, 'the search timed out', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('Could not load the traces')).toBeTruthy();
    expect(within(alert).getByText(/The server could not answer \(500\): the search timed out/)).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('link', { name: 'classify-ticket' })).toBeTruthy();
    expect(requestsTo('traces')).toHaveLength(2);
  });

  it('lists the traces of the project, each linking to its trace', async () => {
    server.use(answer('traces', tracePage(ROWS)));
    open();
    await screen.findByRole('table', { name: 'Traces' });
    expect(rowNames()).toEqual(['answer-question', 'classify-ticket']);
    expect(screen.getByRole('link', { name: 'classify-ticket' }).getAttribute('href')).toBe(
      `/projects/${PROJECT_UUID}/traces/${ROWS[1]!.trace_id}`,
    );
    expect(screen.getByText('2 traces')).toBeTruthy();
    expect(lastRequest()).toMatchObject({ project_uuid: PROJECT_UUID, page: 1, page_size: 100, search: null });
  });

  it('asks for the view the URL describes', async () => {
    server.use(answer('traces', tracePage(ROWS, { page: 2, total: 120, total_pages: 3, page_size: 50 })));
    open('?q=refund&status=error&sort=oldest&range=24h&size=50&page=2');
    await screen.findByRole('table', { name: 'Traces' });
    expect(requestsTo('traces')).toHaveLength(1);
    expect(lastRequest()).toMatchObject({
      project_uuid: PROJECT_UUID,
      search: 'refund',
      status: 'error',
      sort: 'oldest',
      time_range: '24h',
      page_size: 50,
      page: 2,
    });
    expect((screen.getByRole('textbox', { name: /^Search/ }) as HTMLInputElement).value).toBe('refund');
    expect((screen.getByRole('combobox', { name: 'Status' }) as HTMLInputElement).value).toBe('Error');
    expect((screen.getByRole('combobox', { name: 'Time range' }) as HTMLInputElement).value).toBe('Last 24 hours');
  });

  it('writes each change of the controls into the URL and asks again', async () => {
    server.use(answer('traces', (request) => tracePage(ROWS, { total: 250, total_pages: 3, ...pageOf(request.body) })));
    const page = open();
    await screen.findByRole('table', { name: 'Traces' });

    await choose('Status', 'Error');
    await waitFor(() => expect(lastRequest()).toMatchObject({ status: 'error', page: 1 }));
    expect(page.search().get('status')).toBe('error');

    await userEvent.type(screen.getByRole('textbox', { name: /^Search/ }), 'refund{Enter}');
    await waitFor(() => expect(lastRequest()).toMatchObject({ status: 'error', search: 'refund' }));
    expect(Object.fromEntries(page.search())).toEqual({ status: 'error', q: 'refund' });

    await userEvent.click(await screen.findByRole('button', { name: 'Page 2' }));
    await waitFor(() => expect(lastRequest()).toMatchObject({ search: 'refund', page: 2 }));
    expect(page.search().get('page')).toBe('2');
  });

  it('opens the live tail with the session key and puts a new trace on top', async () => {
    server.use(answer('traces', tracePage(ROWS)));
    open();
    await screen.findByRole('table', { name: 'Traces' });
    const url = new URL(streams[0]!.url, window.location.origin);
    expect(url.pathname).toBe('/api/svc/v1/traces/live');
    expect(Object.fromEntries(url.searchParams)).toEqual({ project_uuid: PROJECT_UUID, api_key: API_KEY });

    streams[0]!.emit('ready');
    expect(await screen.findByText('Live')).toBeTruthy();
    const fresh = traceRow({ trace_id: 'a0000000-0000-4000-8000-000000000003', trace_name: 'fresh-trace' });
    streams[0]!.emit('trace', JSON.stringify(fresh));
    await waitFor(() => expect(rowNames()).toEqual(['fresh-trace', 'answer-question', 'classify-ticket']));
    expect(screen.getByText('3 traces')).toBeTruthy();
  });

  describe('add to queue', () => {
    const toQueue = async (button: string) => {
      await userEvent.click(await screen.findByRole('button', { name: button }));
      const dialog = await screen.findByRole('dialog');
      await userEvent.click(within(dialog).getByRole('combobox', { name: 'Annotation queue' }));
      await userEvent.click(await screen.findByRole('option', { name: 'refund-answers' }));
      return dialog;
    };
    beforeEach(() => server.use(answer('queues', [queue()]), answer('addItems', { added: 1 })));
    afterEach(() => vi.useRealTimers());

    it('sends the selected traces to a queue', async () => {
      server.use(answer('traces', tracePage(ROWS)));
      open();
      await userEvent.click(await screen.findByRole('checkbox', { name: 'Select classify-ticket' }));
      const dialog = await toQueue('Add 1 to queue');
      expect(within(dialog).getByText(/The trace selected in the table/)).toBeTruthy();
      await userEvent.click(within(dialog).getByRole('button', { name: 'Add to queue' }));
      await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
      expect(requestsTo('addItems').map((r) => [r.path, r.body])).toEqual([
        [`/annotation-queues/${QUEUE_ID}/items`, { trace_ids: [ROWS[1]!.trace_id] }],
      ]);
      expect(requestsTo('queues')[0]!.query).toEqual({ project_uuid: PROJECT_UUID });
      // Added: the selection is cleared.
      expect(screen.queryByRole('button', { name: /^Add \d+ to queue/ })).toBeNull();
    });

    it("sends a sample of the view's traces: its filter, status and time range, from when the dialog opened", async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(new Date('2026-03-02T12:00:00.000Z'));
      server.use(answer('traces', tracePage(ROWS, { total: 40 })));
      open('?status=error&range=24h&filter=metadata&key=env&op=equals&value=prod');
      const dialog = await toQueue('Add to queue');
      expect(within(dialog).getByText(/A random sample of the traces in this view \(40\)/)).toBeTruthy();
      expect(
        within(dialog)
          .getAllByRole('listitem')
          .map((li) => li.textContent),
      ).toEqual(['metadata.env equals prod', 'status equals error', 'start ≥ 2026-03-01 12:00:00']);
      expect((within(dialog).getByRole('textbox', { name: /^Sample size/ }) as HTMLInputElement).value).toBe('40');
      await userEvent.click(within(dialog).getByRole('button', { name: 'Add to queue' }));
      await waitFor(() => expect(requestsTo('addItems')).toHaveLength(1));
      expect(requestsTo('addItems')[0]!.body).toEqual({
        filters: [
          { field: 'metadata', key: 'env', operator: 'equals', value: 'prod' },
          { field: 'status', operator: 'equals', value: 'error' },
          { field: 'start_timestamp', operator: 'greater_than_or_equal', value: '2026-03-01 12:00:00' },
        ],
        sample_size: 40,
      });
    });

    it('does not sample a search, which no filter expresses', async () => {
      server.use(answer('traces', tracePage(ROWS)));
      open('?q=refund');
      const dialog = await toQueue('Add to queue');
      expect(within(dialog).getByRole('status').textContent).toMatch(/a search is not one/);
      expect((within(dialog).getByRole('button', { name: 'Add to queue' }) as HTMLButtonElement).disabled).toBe(true);
    });

    it('is not offered to a viewer', async () => {
      server.use(answer('me', viewer), answer('traces', tracePage(ROWS)));
      open();
      await screen.findByRole('table', { name: 'Traces' });
      expect(screen.queryByRole('button', { name: 'Add to queue' })).toBeNull();
    });
  });
});

/** The page the request asked for, as the server would answer it. */
function pageOf(body: unknown) {
  const { page = 1, page_size = 100 } = body as { page?: number; page_size?: number };
  return { page, page_size };
}
