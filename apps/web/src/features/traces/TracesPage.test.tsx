import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { http, HttpResponse } from 'msw';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { answer, fail, pending, requestsTo, server } from '../../test/api';
import { stubEventSource, type FakeEventSource } from '../../test/event-source';
import { admin, PROJECT_UUID, project, queue, QUEUE_ID, tracePage, traceRow, viewer } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import TracesPage from './TracesPage';

const ROWS = [
  traceRow(),
  traceRow({ trace_id: 'a0000000-0000-4000-8000-000000000002', trace_name: 'classify-ticket', status: 'error' }),
];

/** A full page of 100 rows. */
const FULL = Array.from({ length: 100 }, (_, i) =>
  traceRow({ trace_id: `a0000000-0000-4000-8000-${String(i).padStart(12, '0')}` }),
);

const open = (query = '') =>
  renderPage(<TracesPage />, {
    route: `/projects/${PROJECT_UUID}/traces${query}`,
    path: '/projects/:projectUuid/traces',
  });
const lastRequest = () => requestsTo('traces').at(-1)!.body;
const sentFilters = () => (lastRequest() as { filters?: unknown[] }).filters;
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
    // The first-run guide writes to this project, and warns that the clients default to their vendor.
    await waitFor(() =>
      expect(screen.getByRole('group', { name: 'Python program' }).textContent).toContain('project_name="support-bot"'),
    );
    expect(screen.getByRole('alert').textContent).toContain('Set PAREA_BASE_URL');
    await userEvent.click(screen.getByRole('tab', { name: 'curl (first trace)' }));
    expect(screen.getByRole('group', { name: 'first-trace curl command' }).textContent).toContain(
      '"project_name": "support-bot"',
    );
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

  it('marks the tokens and cost of a trace whose usage was counted from its text, for eyes and screen readers', async () => {
    server.use(answer('traces', tracePage([traceRow({ usage_estimated: true }), ROWS[1]!])));
    open();
    await screen.findByRole('table', { name: 'Traces' });
    const marks = screen.getAllByText('estimated');
    // The first row's two figures, and nothing of the second's, whose usage was reported.
    expect(marks.map((m) => m.parentElement!.textContent)).toEqual(['≈ estimated 120', '≈ estimated $0.0012']);
    for (const mark of marks) expect(mark.previousElementSibling!.getAttribute('aria-hidden')).toBe('true');
  });

  it('shows a page without waiting for the count of every matching trace', async () => {
    // The page came without its count: it knows only that more may follow.
    server.use(
      answer('traces', tracePage(FULL, { total: 100, total_exact: false, total_pages: 2 })),
      pending('traceCount'),
    );
    open('?status=error&sort=oldest');
    expect(await screen.findByText('100+ traces · counting…')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Page 2' })).toBeTruthy();
    expect(lastRequest()).toMatchObject({ count: false, status: 'error', sort: 'oldest' });
    const [asked] = requestsTo('traceCount');
    expect(asked!.body).toMatchObject({ project_uuid: PROJECT_UUID, status: 'error' });
    expect(asked!.body).not.toHaveProperty('page');
    expect(asked!.body).not.toHaveProperty('sort');
  });

  it('counts the matching traces once for every page and order', async () => {
    server.use(
      answer('traces', tracePage(FULL, { total: 100, total_exact: false, total_pages: 2 })),
      answer('traceCount', { total: 1234 }),
    );
    open('?status=error');
    expect(await screen.findByText('1,234 traces')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Page 13' })).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Page 2' }));
    await waitFor(() => expect(lastRequest()).toMatchObject({ page: 2 }));
    await choose('Sort', 'Oldest first');
    await waitFor(() => expect(lastRequest()).toMatchObject({ sort: 'oldest' }));
    expect(screen.getByText('1,234 traces')).toBeTruthy();
    expect(requestsTo('traceCount')).toHaveLength(1);
  });

  it('keeps the lower bound when the search is too common to count', async () => {
    server.use(
      answer('traces', tracePage(FULL, { total: 100, total_exact: false, total_pages: 2 })),
      answer('traceCount', { total: null }),
    );
    open('?q=the');
    await waitFor(() => expect(requestsTo('traceCount')).toHaveLength(1));
    expect(await screen.findByText('100+ traces')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Page 2' })).toBeTruthy();
  });

  it('asks for no count when the page holds every matching trace', async () => {
    server.use(answer('traces', tracePage(ROWS)));
    open();
    expect(await screen.findByText('2 traces')).toBeTruthy();
    expect(requestsTo('traceCount')).toHaveLength(0);
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

  it('opens the live tail with the session cookie, no key in its URL, and puts a new trace on top', async () => {
    server.use(answer('traces', tracePage(ROWS)));
    open();
    await screen.findByRole('table', { name: 'Traces' });
    const url = new URL(streams[0]!.url, window.location.origin);
    expect(url.pathname).toBe('/api/svc/v1/traces/live');
    expect(Object.fromEntries(url.searchParams)).toEqual({ project_uuid: PROJECT_UUID });

    streams[0]!.emit('ready');
    expect(await screen.findByText('Live')).toBeTruthy();
    const fresh = traceRow({ trace_id: 'a0000000-0000-4000-8000-000000000003', trace_name: 'fresh-trace' });
    streams[0]!.emit('trace', JSON.stringify(fresh));
    await waitFor(() => expect(rowNames()).toEqual(['fresh-trace', 'answer-question', 'classify-ticket']));
    expect(screen.getByText('3 traces')).toBeTruthy();
  });

  describe('several filters', () => {
    const link = (...pairs: [string, string][]) => `?${new URLSearchParams(pairs).toString()}`;
    const chips = () =>
      within(screen.getByRole('list', { name: 'Conditions of this view' }))
        .getAllByRole('listitem')
        .map((li) => li.textContent);

    it('reads every filter of a link: a chip each, all in the request', async () => {
      server.use(answer('traces', tracePage(ROWS)));
      const page = open(
        link(
          ['filter', '["trace_name","equals","rag-query"]'],
          ['filter', '["metadata","equals","prod","env"]'],
          ['filter', '["latency","greater_than","2"]'],
          ['status', 'error'],
          ['range', '24h'],
        ),
      );
      await screen.findByRole('table', { name: 'Traces' });
      expect(lastRequest()).toMatchObject({
        filters: [
          { field: 'trace_name', operator: 'equals', value: 'rag-query' },
          { field: 'metadata', key: 'env', operator: 'equals', value: 'prod' },
          { field: 'latency', operator: 'greater_than', value: '2' },
        ],
        status: 'error',
        time_range: '24h',
        include_experiments: false,
      });
      expect(chips()).toEqual([
        'last 24 hours',
        'status error',
        'name equals rag-query',
        'metadata.env equals prod',
        'latency (s) > 2',
      ]);

      await userEvent.click(screen.getByRole('button', { name: 'Remove metadata.env equals prod' }));
      await waitFor(() => expect(sentFilters()).toHaveLength(2));
      expect(page.search().getAll('filter')).toEqual([
        '["trace_name","equals","rag-query"]',
        '["latency","greater_than","2"]',
      ]);
      await userEvent.click(screen.getByRole('button', { name: 'Remove status error' }));
      await waitFor(() => expect(lastRequest()).toMatchObject({ status: null }));
      expect(page.search().get('status')).toBeNull();
    });

    it('reads a link of old with its one filter', async () => {
      server.use(answer('traces', tracePage(ROWS)));
      open('?filter=metadata&key=env&op=equals&value=prod');
      await screen.findByRole('table', { name: 'Traces' });
      expect(sentFilters()).toEqual([{ field: 'metadata', key: 'env', operator: 'equals', value: 'prod' }]);
      expect(chips()).toEqual(['metadata.env equals prod']);
    });

    it('adds a filter to those of the view', async () => {
      server.use(answer('traces', tracePage(ROWS)));
      const page = open(link(['filter', '["trace_name","equals","rag-query"]']));
      await screen.findByRole('table', { name: 'Traces' });
      await userEvent.click(screen.getByRole('button', { name: 'Add filter' }));
      const form = await screen.findByRole('form', { name: 'New filter' });
      await userEvent.click(within(form).getByRole('combobox', { name: 'Field' }));
      await userEvent.click(await screen.findByRole('option', { name: 'User' }));
      await userEvent.type(within(form).getByRole('textbox', { name: 'Value' }), 'ann');
      await userEvent.click(within(form).getByRole('button', { name: 'Add' }));
      await waitFor(() => expect(sentFilters()).toHaveLength(2));
      expect(page.search().getAll('filter')).toEqual([
        '["trace_name","equals","rag-query"]',
        '["end_user_identifier","equals","ann"]',
      ]);
      expect(chips()).toEqual(['name equals rag-query', 'user equals ann']);
    });

    it('edits a filter in place from its chip, by the keyboard; Escape leaves it as it was', async () => {
      server.use(answer('traces', tracePage(ROWS)));
      const page = open(
        link(
          ['filter', '["trace_name","equals","rag-query"]'],
          ['filter', '["metadata","equals","prod","env"]'],
          ['filter', '["latency","greater_than","2"]'],
          ['page', '3'],
        ),
      );
      await screen.findByRole('table', { name: 'Traces' });
      const chip = screen.getByRole('button', { name: 'Edit filter: metadata.env equals prod' });
      chip.focus();
      await userEvent.keyboard('{Enter}');
      let form = await screen.findByRole('form', { name: 'Edit filter' });
      // Prefilled with the condition.
      expect((within(form).getByRole('combobox', { name: 'Field' }) as HTMLInputElement).value).toBe('Metadata');
      expect((within(form).getByRole('textbox', { name: 'Key' }) as HTMLInputElement).value).toBe('env');
      const value = within(form).getByRole('textbox', { name: 'Value' }) as HTMLInputElement;
      expect(value.value).toBe('prod');

      // Escape: no change, the chip as it was.
      await userEvent.clear(value);
      await userEvent.type(value, 'staging');
      await userEvent.keyboard('{Escape}');
      await waitFor(() => expect(screen.queryByRole('form', { name: 'Edit filter' })).toBeNull());
      expect(page.search().getAll('filter')[1]).toBe('["metadata","equals","prod","env"]');
      expect(chips()[1]).toBe('metadata.env equals prod');

      // Saved: in its place, in the URL and the request, from the first page.
      await userEvent.click(screen.getByRole('button', { name: 'Edit filter: metadata.env equals prod' }));
      form = await screen.findByRole('form', { name: 'Edit filter' });
      const again = within(form).getByRole('textbox', { name: 'Value' }) as HTMLInputElement;
      expect(again.value).toBe('prod');
      await userEvent.clear(again);
      await userEvent.type(again, 'staging{Enter}');
      await waitFor(() =>
        expect(sentFilters()).toContainEqual({ field: 'metadata', key: 'env', operator: 'equals', value: 'staging' }),
      );
      expect(page.search().getAll('filter')).toEqual([
        '["trace_name","equals","rag-query"]',
        '["metadata","equals","staging","env"]',
        '["latency","greater_than","2"]',
      ]);
      expect(page.search().get('page')).toBeNull();
      expect(chips()).toEqual(['name equals rag-query', 'metadata.env equals staging', 'latency (s) > 2']);
      expect(screen.queryByRole('form', { name: 'Edit filter' })).toBeNull();
    });

    it('leaves experiment runs out unless they are included', async () => {
      server.use(answer('traces', tracePage(ROWS)));
      const page = open();
      await screen.findByRole('table', { name: 'Traces' });
      expect(lastRequest()).toMatchObject({ include_experiments: false });
      await userEvent.click(screen.getByRole('switch', { name: 'Include experiment runs' }));
      await waitFor(() => expect(lastRequest()).toMatchObject({ include_experiments: true }));
      expect(page.search().get('experiments')).toBe('1');
      await userEvent.click(screen.getByRole('button', { name: 'Remove experiment runs included' }));
      await waitFor(() => expect(lastRequest()).toMatchObject({ include_experiments: false }));
    });
  });

  it('sorts by a column when its header is clicked, and says so', async () => {
    server.use(answer('traces', tracePage(ROWS)));
    const page = open();
    await screen.findByRole('table', { name: 'Traces' });
    const header = (name: string) => screen.getByRole('columnheader', { name: new RegExp(`^${name}`) });
    expect(header('Start').getAttribute('aria-sort')).toBe('descending');
    expect(header('Cost').getAttribute('aria-sort')).toBe('none');
    // Columns the listing cannot sort by have no sort state.
    expect(header('Status').getAttribute('aria-sort')).toBeNull();

    await userEvent.click(within(header('Cost')).getByRole('button'));
    await waitFor(() => expect(lastRequest()).toMatchObject({ sort: 'costliest', page: 1 }));
    expect(page.search().get('sort')).toBe('costliest');
    expect(header('Cost').getAttribute('aria-sort')).toBe('descending');
    expect(header('Start').getAttribute('aria-sort')).toBe('none');

    await userEvent.click(within(header('Cost')).getByRole('button'));
    await waitFor(() => expect(lastRequest()).toMatchObject({ sort: 'cheapest' }));
    expect(header('Cost').getAttribute('aria-sort')).toBe('ascending');

    await userEvent.click(within(header('Tokens')).getByRole('button'));
    await waitFor(() => expect(lastRequest()).toMatchObject({ sort: 'most_tokens' }));
    await userEvent.click(within(header('Name')).getByRole('button'));
    await waitFor(() => expect(lastRequest()).toMatchObject({ sort: 'name_asc' }));
    expect(header('Name').getAttribute('aria-sort')).toBe('ascending');
  });

  describe('content columns', () => {
    const CONTENT_ROWS = [
      traceRow({
        input_preview: '{"question": "How do I export to CSV?"}',
        output_preview: 'Use the export button.\nThen pick CSV.',
        metadata_values: { environment: 'staging' },
      }),
      traceRow({
        trace_id: 'a0000000-0000-4000-8000-000000000002',
        trace_name: 'classify-ticket',
        status: 'error',
        error: 'RateLimitError: 429 Too Many Requests\n    at callProvider (provider.ts:88:11)',
      }),
    ];
    beforeEach(() => localStorage.removeItem(`sightline.traceContent.${PROJECT_UUID}`));
    const headers = () =>
      within(screen.getByRole('table', { name: 'Traces' }))
        .getAllByRole('columnheader')
        .map((th) => th.textContent);

    it('shows the input, the output and a metadata key chosen in the column menu, kept for the project', async () => {
      server.use(answer('traces', tracePage(CONTENT_ROWS)));
      open();
      await screen.findByRole('table', { name: 'Traces' });
      expect(lastRequest()).toMatchObject({ content: false, metadata_keys: [] });
      await userEvent.click(screen.getByRole('button', { name: 'Columns' }));
      const menu = await screen.findByRole('group', { name: 'Content columns' });
      await userEvent.click(within(menu).getByRole('checkbox', { name: 'Input' }));
      await userEvent.click(within(menu).getByRole('checkbox', { name: 'Output' }));
      await userEvent.type(within(menu).getByRole('textbox', { name: 'Metadata key' }), 'environment{Enter}');
      await waitFor(() => expect(lastRequest()).toMatchObject({ content: true, metadata_keys: ['environment'] }));
      expect(headers()).toEqual(expect.arrayContaining(['Name', 'Input', 'Output', 'environment']));
      // A payload's first line; JSON in monospace.
      const input = screen.getByText('{"question": "How do I export to CSV?"}');
      expect(getComputedStyle(input).fontFamily).toMatch(/monospace/);
      expect(getComputedStyle(screen.getByText('Use the export button.')).fontFamily).not.toMatch(/monospace/);
      expect(screen.getByText('Use the export button.')).toBeTruthy();
      expect(screen.getByText('staging')).toBeTruthy();
      expect(JSON.parse(localStorage.getItem(`sightline.traceContent.${PROJECT_UUID}`)!)).toMatchObject({
        input: true,
        output: true,
        metadata: ['environment'],
      });
    });

    it('shows the error message when the view lists failed traces, unless it is turned off', async () => {
      server.use(answer('traces', tracePage(CONTENT_ROWS)));
      open('?status=error');
      await screen.findByRole('table', { name: 'Traces' });
      expect(headers()).toContain('Error');
      expect(screen.getByText('RateLimitError: 429 Too Many Requests')).toBeTruthy();
      await userEvent.click(screen.getByRole('button', { name: 'Columns' }));
      const menu = await screen.findByRole('group', { name: 'Content columns' });
      await userEvent.click(within(menu).getByRole('checkbox', { name: 'Error message' }));
      await waitFor(() => expect(headers()).not.toContain('Error'));
    });
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

/** A Blob's text (jsdom's Blob has no text()). */
const textOf = (blob: Blob) =>
  new Promise<string>((resolve) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result as string);
    reader.readAsText(blob);
  });

describe('Export', () => {
  const FILE = '{"trace_id":"a"}\n{"trace_id":"b"}\n';
  let saved: Blob[];
  let sent: unknown[];
  /** POST /traces/export answering `body` (a stream that never ends, for one) with the file's headers. */
  const exportAnswers = (body: BodyInit, status = 200) =>
    http.post('/api/svc/v1/traces/export', async ({ request }) => {
      sent.push(await request.json());
      return new HttpResponse(body, {
        status,
        headers: {
          'content-type': status === 200 ? 'application/x-ndjson' : 'application/json',
          'content-disposition': 'attachment; filename="demo-spans-2026-12-02.csv"',
        },
      });
    });
  async function exportDialog() {
    await userEvent.click(await screen.findByRole('button', { name: 'Export' }));
    return screen.findByRole('dialog', { name: 'Export traces' });
  }
  beforeEach(() => {
    saved = [];
    sent = [];
    vi.spyOn(URL, 'createObjectURL').mockImplementation((blob) => {
      saved.push(blob as Blob);
      return 'blob:export';
    });
    vi.spyOn(URL, 'revokeObjectURL').mockImplementation(() => {});
  });
  afterEach(() => vi.restoreAllMocks());

  it("exports the view's traces in the format and shape chosen, and saves the file whole", async () => {
    server.use(
      answer('traces', tracePage(ROWS, { total: 2 })),
      answer('exportProgress', { traces: 2, spans: 7, state: 'done' }),
      exportAnswers(FILE),
    );
    open('?status=error&sort=slowest');
    const dialog = await exportDialog();
    expect(within(dialog).getByText(/The 2 traces this view shows/)).toBeTruthy();
    await userEvent.click(within(dialog).getByText('CSV'));
    await userEvent.click(within(dialog).getByRole('radio', { name: /span, with its trace and parent ids/ }));
    await userEvent.click(within(dialog).getByRole('button', { name: 'Export' }));
    await within(dialog).findByText(/^Saved demo-spans-2026-12-02\.csv: .*, 2 traces and 7 spans\.$/);
    expect(sent).toEqual([
      expect.objectContaining({
        project_uuid: PROJECT_UUID,
        status: 'error',
        sort: 'slowest',
        format: 'csv',
        shape: 'spans',
        export_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      }),
    ]);
    expect(sent[0]).not.toHaveProperty('page');
    expect(saved).toHaveLength(1);
    expect(await textOf(saved[0]!)).toBe(FILE);
  });

  it('stops an export under way when asked, and saves nothing', async () => {
    server.use(
      answer('traces', tracePage(ROWS)),
      answer('exportProgress', { traces: 1, spans: 5, state: 'running' }),
      // The first line, then nothing more: an export still being written.
      exportAnswers(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode(FILE)) })),
    );
    open();
    const dialog = await exportDialog();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Export' }));
    await within(dialog).findByText(/^Exporting: 5 spans of 1 trace so far/);
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel export' }));
    await within(dialog).findByText('Export cancelled: nothing was saved.');
    expect(saved).toEqual([]);
  });

  it('says why an export was refused, and offers to try again', async () => {
    server.use(
      answer('traces', tracePage(ROWS)),
      fail('exportProgress', 404, 'export not found'),
      exportAnswers(JSON.stringify({ detail: '2 exports are running on this server; retry when one ends' }), 429),
    );
    open();
    const dialog = await exportDialog();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Export' }));
    expect((await within(dialog).findByRole('alert')).textContent).toMatch(/2 exports are running on this server/);
    expect(within(dialog).getByRole('button', { name: 'Export again' })).toBeTruthy();
    expect(saved).toEqual([]);
  });
});

/** The page the request asked for, as the server would answer it. */
function pageOf(body: unknown) {
  const { page = 1, page_size = 100 } = body as { page?: number; page_size?: number };
  return { page, page_size };
}
