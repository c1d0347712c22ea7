import { cleanup, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { answer, fail, pending, requestsTo, server, type Fixture } from '../../test/api';
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

// A trace with failures deep down, and words in names and contents:
//   agent-run
//   ├ plan → tool-a → lookup (failed, depth 3)
//   ├ answer → draft → check → fetch-refund (failed, depth 4)
//   └ wrap-up (its output mentions a refund: a content match only)
const id = (n: number) => `c0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const NAMES = ['agent-run', 'plan', 'tool-a', 'lookup', 'answer', 'draft', 'check', 'fetch-refund', 'wrap-up'];
const PARENTS = [0, 0, 1, 2, 0, 4, 5, 6, 0];
const FAILED = new Set(['lookup', 'fetch-refund']);
const deepTrace: Fixture<'skeleton'> = {
  root_trace_id: id(0),
  spans: NAMES.map((name, i) => ({
    trace_id: id(i),
    parent_trace_id: id(PARENTS[i]!),
    trace_name: name,
    kind: null,
    start_timestamp: `2026-03-02T09:00:0${i}.000Z`,
    end_timestamp: null,
    latency: i ? 0.5 : 9,
    status: FAILED.has(name) ? 'error' : 'success',
    input_tokens: null,
    output_tokens: null,
    total_tokens: null,
    cost: null,
    usage_estimated: false,
    depth: 0,
    execution_order: i,
  })),
};
const rowNames = () =>
  within(screen.getByRole('tree'))
    .getAllByRole('treeitem')
    .map((row) => NAMES[Number(row.id.slice(-12))]);
const selectedName = () =>
  NAMES[Number(within(screen.getByRole('tree')).getByRole('treeitem', { selected: true }).id.slice(-12))];
const row = (name: string) => document.getElementById(`span-${id(NAMES.indexOf(name))}`)!;

describe("a big trace's failures", () => {
  beforeEach(() => server.use(answer('skeleton', deepTrace)));

  it('marks the collapsed spans with failures below them, counts them, and steps through them with e', async () => {
    const page = open();
    await screen.findByRole('tree');
    expect(screen.getByLabelText('2 failed spans')).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Collapse all' }));
    expect(rowNames()).toEqual(['agent-run', 'plan', 'answer', 'wrap-up']);
    expect(within(row('plan')).getByText('1 failed below')).toBeTruthy();
    expect(within(row('answer')).getByText('1 failed below')).toBeTruthy();
    expect(within(row('wrap-up')).queryByText(/failed below/)).toBeNull();
    // The root is open: its failures are drawn under it, not counted on it.
    expect(within(row('agent-run')).queryByText(/failed below/)).toBeNull();

    await userEvent.keyboard('e');
    await waitFor(() => expect(selectedName()).toBe('lookup'));
    expect(page.search().get('span')).toBe(id(3));
    expect(rowNames()).toEqual(['agent-run', 'plan', 'tool-a', 'lookup', 'answer', 'wrap-up']);
    expect(within(row('answer')).getByText('1 failed below')).toBeTruthy();

    await userEvent.keyboard('e');
    await waitFor(() => expect(selectedName()).toBe('fetch-refund'));
    expect(rowNames()).toContain('fetch-refund');
    // Past the last, back to the first; Shift+E goes the other way.
    await userEvent.keyboard('e');
    await waitFor(() => expect(selectedName()).toBe('lookup'));
    await userEvent.keyboard('{Shift>}E{/Shift}');
    await waitFor(() => expect(selectedName()).toBe('fetch-refund'));
    await userEvent.click(screen.getByRole('button', { name: 'Next failed span' }));
    await waitFor(() => expect(selectedName()).toBe('lookup'));
    expect(await within(detail()).findByRole('heading', { name: 'lookup' })).toBeTruthy();
  });

  it('leaves the key e to a search box being typed in', async () => {
    open();
    await screen.findByRole('tree');
    await userEvent.type(screen.getByRole('textbox', { name: 'Search the spans' }), 'che');
    expect(selectedName()).toBe('agent-run');
    expect((screen.getByRole('textbox', { name: 'Search the spans' }) as HTMLInputElement).value).toBe('che');
  });

  it('counts the failures of a 10,000-span trace, and finds one deep down with e', async () => {
    // Four children to a parent: span 9,000 is seven levels down under the root's first child, 9,999 under its second.
    const spans = Array.from({ length: 10_000 }, (_, i) => ({
      ...deepTrace.spans[1]!,
      trace_id: id(100_000 + i),
      parent_trace_id: id(100_000 + (i ? Math.floor((i - 1) / 4) : 0)),
      trace_name: `step-${i}`,
      status: i === 9000 || i === 9999 ? 'error' : 'success',
      execution_order: i,
    }));
    server.use(answer('skeleton', { root_trace_id: id(100_000), spans }));
    open();
    await screen.findByRole('tree');
    expect(screen.getByLabelText('2 failed spans')).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Collapse all' }));
    expect(within(screen.getByRole('tree')).getAllByRole('treeitem')).toHaveLength(5);
    expect(within(document.getElementById(`span-${id(100_001)}`)!).getByText('1 failed below')).toBeTruthy();
    expect(within(document.getElementById(`span-${id(100_002)}`)!).getByText('1 failed below')).toBeTruthy();
    await userEvent.keyboard('e');
    const found = await within(screen.getByRole('tree')).findByRole('treeitem', { selected: true });
    expect(found.id).toBe(`span-${id(109_000)}`);
    expect(found.getAttribute('aria-level')).toBe('8');
  });
});

describe('the search within a trace', () => {
  beforeEach(() =>
    server.use(
      answer('skeleton', deepTrace),
      // The server finds contents: wrap-up's output says "refund"; fetch-refund holds it in its name.
      answer('traceSearch', (request) => ({
        trace_ids: request.query.text === 'refund' ? [id(7), id(8)] : [],
      })),
    ),
  );

  it('filters the tree to the matches by name at once, adds those by content, and steps through them', async () => {
    const page = open();
    await screen.findByRole('tree');
    await userEvent.type(screen.getByRole('textbox', { name: 'Search the spans' }), 'refund');
    // The matches with the spans on the way to them; the content match once the server answered.
    await waitFor(() =>
      expect(rowNames()).toEqual(['agent-run', 'answer', 'draft', 'check', 'fetch-refund', 'wrap-up']),
    );
    expect(screen.getByRole('status').textContent).toBe('2 matches');
    expect(requestsTo('traceSearch').at(-1)!.query).toEqual({ text: 'refund' });
    expect(page.search().get('search')).toBe('refund');

    await userEvent.click(screen.getByRole('button', { name: 'Next match' }));
    await waitFor(() => expect(selectedName()).toBe('fetch-refund'));
    expect(screen.getByRole('status').textContent).toBe('1 of 2');
    await userEvent.type(screen.getByRole('textbox', { name: 'Search the spans' }), '{Enter}');
    await waitFor(() => expect(selectedName()).toBe('wrap-up'));
    expect(screen.getByRole('status').textContent).toBe('2 of 2');
    await userEvent.click(screen.getByRole('button', { name: 'Previous match' }));
    await waitFor(() => expect(selectedName()).toBe('fetch-refund'));

    await userEvent.click(screen.getByRole('button', { name: 'Clear the search' }));
    await waitFor(() => expect(rowNames()).toHaveLength(NAMES.length));
    expect(page.search().get('search')).toBeNull();
  });

  it('opens the spans a link names with its search, and says when nothing matches', async () => {
    open('?search=nothing%20here');
    expect(await screen.findByRole('heading', { name: 'No span matches the search' })).toBeTruthy();
    expect(screen.getByText(/holds “nothing here” in its name, inputs, output or metadata/)).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: 'Show every span' }));
    expect((await screen.findAllByRole('treeitem')).length).toBe(NAMES.length);
  });

  it('keeps the matches by name when the contents cannot be searched, and retries', async () => {
    server.use(fail('traceSearch', 503, 'writes are still being applied', { once: true }));
    open('?search=CHECK');
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('1 by name only'));
    expect(rowNames()).toEqual(['agent-run', 'answer', 'draft', 'check']);
    await userEvent.click(screen.getByRole('button', { name: 'Retry the content search' }));
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Retry the content search' })).toBeNull());
    expect(screen.getByRole('status').textContent).toBe('1 match');
  });
});

describe("the timeline's axis", () => {
  const Original = globalThis.ResizeObserver;
  /** Every element measures `width` pixels, as a browser's ResizeObserver would report it. */
  const measureAs = (width: number) => {
    globalThis.ResizeObserver = class {
      constructor(private readonly callback: ResizeObserverCallback) {}
      observe(target: Element) {
        const entry = {
          target,
          contentRect: { width, height: 20 },
          borderBoxSize: [{ inlineSize: width, blockSize: 20 }],
        };
        this.callback([entry as unknown as ResizeObserverEntry], this as unknown as ResizeObserver);
      }
      unobserve() {}
      disconnect() {}
    } as unknown as typeof ResizeObserver;
  };
  afterEach(() => void (globalThis.ResizeObserver = Original));
  const labels = () =>
    within(screen.getByTestId('timeline-axis'))
      .queryAllByText(/./)
      .map((l) => l.textContent);

  it('labels as many round times as the width holds', async () => {
    server.use(answer('skeleton', deepTrace));
    measureAs(700);
    open();
    await waitFor(() => expect(labels()).toEqual(['0', '2.00 s', '4.00 s', '6.00 s', '9.00 s']));
    cleanup();
    measureAs(130);
    open();
    await waitFor(() => expect(labels()).toEqual(['0', '9.00 s']));
  });
});
