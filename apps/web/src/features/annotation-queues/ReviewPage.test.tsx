import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { answer, fail, pending, requestsTo, server, settled } from '../../test/api';
import {
  admin,
  CHILD_ID,
  helpfulness,
  PROJECT_UUID,
  project,
  queue,
  QUEUE_ID,
  ROOT_ID,
  skeleton,
  tone,
  viewer,
} from '../../test/fixtures';
import { renderPage } from '../../test/render';
import { LEASE_RENEW_MS } from './components/ReviewItem';
import ReviewPage from './ReviewPage';
import { leased, SECOND_TRACE_ID, secondSkeleton, spanOf } from './test-fixtures';

const open = () =>
  renderPage(<ReviewPage />, {
    route: `/projects/${PROJECT_UUID}/annotation-queues/${QUEUE_ID}/review`,
    path: '/projects/:projectUuid/annotation-queues/:queueId/review',
  });
const LAPSED = 'you do not hold this item: its lease lapsed, or another reviewer has it; ask for the next one';
const second = leased({ item_id: 2, trace_id: SECOND_TRACE_ID, lease_expires_at: '2026-03-02T09:20:00.000Z' });
/** `/next` answers the first item, then `then` (the second item by default) each time after. */
const items = (then: ReturnType<typeof leased> | null = second) => {
  let asked = 0;
  return answer('next', () => (asked++ === 0 ? leased() : then));
};
const itemShown = (name: string) => screen.findByRole('heading', { level: 3, name });
const criterion = (name: string) => screen.getByLabelText(`Criterion ${name}`);
const press = (keys: string) => userEvent.keyboard(keys);

beforeEach(() => {
  server.use(
    answer('me', admin),
    answer('projects', [project()]),
    answer('criteria', [helpfulness, tone]),
    answer('skeleton', (r) => (r.path.includes(SECOND_TRACE_ID) ? secondSkeleton : skeleton)),
    answer('span', (r) => spanOf(r.path.split('/').at(-1)!)),
    answer('queue', queue()),
  );
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('the review page of a queue', () => {
  it('shows that the next item is being taken', async () => {
    server.use(pending('next'));
    open();
    expect(await screen.findByText('Taking the next item…')).toBeTruthy();
  });

  it('shows the leased item: the instructions, the progress, the trace and the queue’s criteria', async () => {
    server.use(items());
    open();
    expect(await screen.findByRole('heading', { level: 2, name: 'Review: refund-answers' })).toBeTruthy();
    expect(await itemShown('answer-question')).toBeTruthy();
    expect(requestsTo('next').map((r) => r.path)).toEqual([`/annotation-queues/${QUEUE_ID}/next`]);
    const instructions = screen.getByRole('region', { name: 'Instructions' });
    expect(within(instructions).getByText('Is the refund policy stated correctly?')).toBeTruthy();
    expect(screen.getByRole('progressbar', { name: 'Reviewed in refund-answers' }).getAttribute('aria-valuenow')).toBe(
      '30',
    );
    expect(screen.getByText('3 of 10 reviewed')).toBeTruthy();
    expect(screen.getByRole('note', { name: 'Keyboard shortcuts' }).textContent).toContain(
      'complete and take the next',
    );
    expect(screen.getByRole('link', { name: 'Open the trace' }).getAttribute('href')).toBe(
      `/projects/${PROJECT_UUID}/traces/${ROOT_ID}`,
    );
    // The span tree, the root selected; its payload beside it.
    const tree = screen.getByRole('tree', { name: 'Spans of the trace' });
    expect(
      within(tree)
        .getAllByRole('treeitem')
        .map((i) => i.getAttribute('aria-selected')),
    ).toEqual(['true', 'false']);
    const selected = screen.getByRole('region', { name: 'Selected span' });
    expect(await within(selected).findByText(/How do refunds work\?/)).toBeTruthy();
    // The queue's criteria, in its order, the first one the keys' (its options numbered when it has some).
    const review = screen.getByRole('region', { name: 'Review' });
    expect((await within(review).findAllByLabelText(/^Criterion /)).map((c) => c.getAttribute('aria-label'))).toEqual([
      'Criterion helpfulness',
      'Criterion tone',
    ]);
    expect(criterion('helpfulness').getAttribute('aria-current')).toBe('true');
    expect(within(criterion('tone')).getByText('1 friendly · 2 neutral · 3 rude')).toBeTruthy();
  });

  it('moves between spans with j and k, showing the conversation of a model call', async () => {
    server.use(items());
    open();
    await itemShown('answer-question');
    await press('j');
    const selected = screen.getByRole('region', { name: 'Selected span' });
    expect(await within(selected).findByRole('heading', { name: 'call-model' })).toBeTruthy();
    expect(await within(selected).findByLabelText('user message')).toBeTruthy();
    expect(within(screen.getByRole('tree')).getAllByRole('treeitem')[1]!.getAttribute('aria-selected')).toBe('true');
    await waitFor(() => expect(requestsTo('span').map((r) => r.path)).toContain(`/span/${CHILD_ID}`));
    await press('k');
    expect(await within(selected).findByRole('heading', { name: 'answer-question' })).toBeTruthy();
  });

  it('annotates the trace by number keys: a score, and after c the next criterion’s option', async () => {
    server.use(
      items(),
      answer('annotate', (r) => ({
        created_at: '2026-03-02 09:01:00',
        user_id: 'ada@example.com',
        score: (r.body as { score?: number }).score ?? null,
        value: (r.body as { value?: string }).value ?? null,
        annotation_name: r.path.endsWith(tone.id) ? 'tone' : 'helpfulness',
      })),
    );
    open();
    await itemShown('answer-question');
    await within(screen.getByRole('region', { name: 'Review' })).findByLabelText('Criterion helpfulness');
    await press('4');
    await press('9'); // beyond helpfulness's 1–5: nothing
    await press('c');
    expect(criterion('tone').getAttribute('aria-current')).toBe('true');
    await press('2');
    await waitFor(() => expect(requestsTo('annotate')).toHaveLength(2));
    expect(requestsTo('annotate').map((r) => [r.method, r.path, r.body])).toEqual([
      ['PUT', `/trace_log/${ROOT_ID}/annotations/${helpfulness.id}`, { score: 4 }],
      ['PUT', `/trace_log/${ROOT_ID}/annotations/${tone.id}`, { value: 'neutral' }],
    ]);
  });

  it('leaves the keys to a field being written in', async () => {
    server.use(items());
    open();
    await itemShown('answer-question');
    const score = await screen.findByRole('textbox', { name: 'Your helpfulness' });
    await userEvent.click(score);
    await press('3s{Enter}j');
    expect((score as HTMLInputElement).value).toBe('3');
    await settled();
    expect(requestsTo('annotate')).toHaveLength(0);
    expect(requestsTo('skip')).toHaveLength(0);
    expect(requestsTo('complete')).toHaveLength(0);
    expect(within(screen.getByRole('tree')).getAllByRole('treeitem')[0]!.getAttribute('aria-selected')).toBe('true');
    // Escape leaves the field: the keys are the page's again.
    await press('{Escape}j');
    await waitFor(() =>
      expect(within(screen.getByRole('tree')).getAllByRole('treeitem')[1]!.getAttribute('aria-selected')).toBe('true'),
    );
  });

  it('completes the item with Enter and brings the next one', async () => {
    server.use(items(), answer('complete', { item_id: 1, status: 'done' }));
    open();
    await itemShown('answer-question');
    await press('{Enter}');
    expect(await itemShown('cancel-order')).toBeTruthy();
    expect(requestsTo('complete').map((r) => r.path)).toEqual([`/annotation-queues/${QUEUE_ID}/items/1/complete`]);
    expect(requestsTo('next')).toHaveLength(2);
    expect(requestsTo('skip')).toHaveLength(0);
    // The counts are read again with it.
    expect(requestsTo('queue').length).toBeGreaterThanOrEqual(2);
    const selected = screen.getByRole('region', { name: 'Selected span' });
    expect(await within(selected).findByText(/How do I cancel an order\?/)).toBeTruthy();
  });

  it('skips the item with s; when nothing is left, says so', async () => {
    server.use(items(null), answer('skip', { item_id: 1, status: 'skipped' }));
    open();
    await itemShown('answer-question');
    await press('s');
    expect(
      await screen.findByRole('heading', { name: 'All done — nothing left to review in this queue' }),
    ).toBeTruthy();
    expect(requestsTo('skip').map((r) => r.path)).toEqual([`/annotation-queues/${QUEUE_ID}/items/1/skip`]);
    expect(requestsTo('complete')).toHaveLength(0);
    expect(requestsTo('next')).toHaveLength(2);
  });

  it('says all is done when the queue has nothing left, with the way back', async () => {
    server.use(answer('next', null));
    open();
    expect(
      await screen.findByRole('heading', { name: 'All done — nothing left to review in this queue' }),
    ).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Back to the queues' }).getAttribute('href')).toBe(
      `/projects/${PROJECT_UUID}/annotation-queues`,
    );
    expect(screen.queryByRole('note', { name: 'Keyboard shortcuts' })).toBeNull();
  });

  it('says the lease lapsed when completing is refused, and takes the next item', async () => {
    server.use(items(), fail('complete', 409, LAPSED));
    open();
    await itemShown('answer-question');
    await press('{Enter}');
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('Your lease on this item lapsed')).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Complete' }) as HTMLButtonElement).disabled).toBe(true);
    await userEvent.click(within(alert).getByRole('button', { name: 'Take the next item' }));
    expect(await itemShown('cancel-order')).toBeTruthy();
    expect(screen.queryByText('Your lease on this item lapsed')).toBeNull();
    expect(requestsTo('next')).toHaveLength(2);
  });

  it('says the lease lapsed when skipping is refused', async () => {
    server.use(items(), fail('skip', 409, LAPSED));
    open();
    await itemShown('answer-question');
    await press('s');
    expect(await screen.findByText('Your lease on this item lapsed')).toBeTruthy();
    // Enter now takes the next item.
    await press('{Enter}');
    expect(await itemShown('cancel-order')).toBeTruthy();
  });

  it('renews the lease every 4 minutes while the item is open', async () => {
    const timers: (() => void)[] = [];
    const setInterval = window.setInterval.bind(window);
    vi.spyOn(window, 'setInterval').mockImplementation(((run: () => void, ms?: number) => {
      if (ms === LEASE_RENEW_MS) timers.push(run);
      return setInterval(run, ms);
    }) as typeof window.setInterval);
    server.use(items(), answer('lease', leased({ lease_expires_at: '2026-03-02T09:14:00.000Z' })));
    open();
    await itemShown('answer-question');
    expect(timers).toHaveLength(1);
    act(() => timers[0]!());
    await waitFor(() =>
      expect(requestsTo('lease').map((r) => r.path)).toEqual([`/annotation-queues/${QUEUE_ID}/items/1/lease`]),
    );
  });

  it('tells a viewer that reviewing takes a member’s key, and leases nothing', async () => {
    server.use(answer('me', viewer));
    open();
    expect(await screen.findByRole('heading', { name: "Reviewing takes a member's or an admin's key" })).toBeTruthy();
    await settled();
    expect(requestsTo('next')).toHaveLength(0);
  });

  it('says when the queue does not exist', async () => {
    server.use(fail('queue', 404, 'annotation queue not found'), answer('next', null));
    open();
    expect(await screen.findByRole('heading', { name: 'This queue does not exist' })).toBeTruthy();
  });
});
