import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { answer, fail, invalid, pending, requestsTo, server, settled } from '../../test/api';
import {
  admin,
  CHILD_ID,
  helpfulness,
  OTHER_QUEUE_ID,
  PROJECT_UUID,
  project,
  queue,
  QUEUE_ID,
  ROOT_ID,
  tone,
  viewer,
} from '../../test/fixtures';
import { renderPage } from '../../test/render';
import AnnotationQueuesPage from './AnnotationQueuesPage';

const open = () =>
  renderPage(<AnnotationQueuesPage />, {
    route: `/projects/${PROJECT_UUID}/annotation-queues`,
    path: '/projects/:projectUuid/annotation-queues',
  });
const dialog = () => screen.findByRole('dialog');

async function choose(scope: HTMLElement, label: string, option: string) {
  await userEvent.click(within(scope).getByRole('combobox', { name: label }));
  await userEvent.click(await screen.findByRole('option', { name: option }));
}

beforeEach(() => {
  server.use(answer('me', admin), answer('projects', [project()]), answer('criteria', [helpfulness, tone]));
});

describe('the annotation queues page', () => {
  it('shows that the queues are loading', async () => {
    server.use(pending('queues'));
    open();
    expect(await screen.findByText('Loading the queues…')).toBeTruthy();
  });

  it('says what a queue is when there is none, and offers to create one', async () => {
    server.use(answer('queues', []));
    open();
    expect(await screen.findByRole('heading', { name: 'No queues yet' })).toBeTruthy();
    expect(screen.getByText(/A queue brings traces to reviewers one at a time/)).toBeTruthy();
    // Only the empty state's button: the header does not repeat it.
    expect(await screen.findAllByRole('button', { name: 'Create queue' })).toHaveLength(1);
    expect(requestsTo('queues')[0]!.query).toEqual({ project_uuid: PROJECT_UUID });
  });

  it('shows why the queues could not load, and retries', async () => {
    server.use(answer('queues', [queue()]));
    server.use(fail('queues', 503, 'the database is unavailable', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('Could not load the queues')).toBeTruthy();
    expect(within(alert).getByText(/\(503\): the database is unavailable/)).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'Annotation queues' })).toBeTruthy();
    expect(requestsTo('queues')).toHaveLength(2);
  });

  it('lists the queues with their criteria, progress and reviewers', async () => {
    server.use(
      answer('queues', [
        queue(),
        queue({
          id: OTHER_QUEUE_ID,
          name: 'tone-check',
          criterion_ids: [tone.id],
          instructions: '',
          counts: { pending: 0, in_review: 0, done: 0, skipped: 0 },
          reviewers: [],
        }),
      ]),
    );
    open();
    const table = await screen.findByRole('table', { name: 'Annotation queues' });
    const [first, second] = within(table).getAllByRole('row').slice(1);
    expect(within(first!).getByText('refund-answers')).toBeTruthy();
    expect(within(first!).getByText('Is the refund policy stated correctly?')).toBeTruthy();
    expect(within(first!).getByText('helpfulness')).toBeTruthy();
    expect(within(first!).getByText('tone')).toBeTruthy();
    const bar = within(first!).getByRole('progressbar', { name: 'Reviewed in refund-answers' });
    expect(bar.getAttribute('aria-valuenow')).toBe('30');
    expect(within(first!).getByText('3 of 10 reviewed')).toBeTruthy();
    expect(within(first!).getByText('6 pending · 1 in review · 2 done · 1 skipped')).toBeTruthy();
    expect(within(first!).getByText('ada@example.com')).toBeTruthy();
    expect(within(first!).getByText('2 done · 1 skipped')).toBeTruthy();
    expect((await within(first!).findByRole('link', { name: 'Review refund-answers' })).getAttribute('href')).toBe(
      `/projects/${PROJECT_UUID}/annotation-queues/${QUEUE_ID}/review`,
    );
    expect(within(second!).getByText('No items yet')).toBeTruthy();
    expect(within(second!).getByText('None yet')).toBeTruthy();
    expect(within(second!).getByRole('progressbar').getAttribute('aria-valuenow')).toBe('0');
  });

  it("shows how far a criterion's judge agrees with people on the project's spans, the disagreements a click away", async () => {
    const judged = { ...tone, eval_metric_name: 'tone-judge' };
    server.use(
      answer('criteria', [helpfulness, judged]),
      answer('queues', [queue()]),
      answer('agreement', {
        criterion_id: tone.id,
        kind: 'value',
        eval_metric_name: 'tone-judge',
        from: '2026-02-01T09:00:00.000Z',
        to: '2026-03-03T09:00:00.000Z',
        judge: {
          n: 340,
          kappa: 0.6234,
          kappa_ci: [0.51, 0.7249],
          labels: ['friendly', 'neutral', 'rude'],
          confusion: [
            [200, 20, 0],
            [30, 60, 5],
            [0, 5, 20],
          ],
        },
        people: { n: 0, kappa: null, kappa_ci: null, labels: ['friendly', 'neutral', 'rude'], confusion: [] },
        disagreements: [
          {
            trace_id: CHILD_ID,
            root_trace_id: ROOT_ID,
            project_uuid: PROJECT_UUID,
            people: 'rude',
            judge: 'friendly',
          },
        ],
      }),
    );
    open();
    const table = await screen.findByRole('table', { name: 'Annotation queues' });
    const [row] = within(table).getAllByRole('row').slice(1);
    expect(await within(row!).findByText('Judge agrees with people: κ = 0.62 (0.51–0.72), n = 340')).toBeTruthy();
    // Only the criterion that names a metric is measured, over the queue's project.
    expect(requestsTo('agreement').map((r) => [r.path, r.query.project_uuid])).toEqual([
      [`/annotation-criteria/${tone.id}/agreement`, PROJECT_UUID],
    ]);
    await userEvent.click(within(row!).getByRole('button', { name: 'Agreement of tone: details' }));
    const details = await screen.findByRole('dialog', { name: 'Agreement of tone' });
    const worst = within(details).getByRole('link', { name: `Open the span ${CHILD_ID}` });
    expect(worst.getAttribute('href')).toBe(`/projects/${PROJECT_UUID}/traces/${ROOT_ID}?span=${CHILD_ID}`);
    expect(within(details).getByRole('table', { name: 'Confusion matrix of tone' })).toBeTruthy();
  });

  it('creates a queue with its criteria and instructions, and shows a refused criterion beside the field', async () => {
    server.use(answer('queues', []), answer('createQueue', queue()));
    server.use(
      invalid('createQueue', [{ loc: ['body', 'criterion_ids', 1], msg: 'no such annotation criterion' }], {
        once: true,
      }),
    );
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'Create queue' }));
    const form = await dialog();
    await userEvent.type(within(form).getByRole('textbox', { name: 'Name' }), ' refund-answers ');
    await choose(form, 'Criteria', 'helpfulness');
    await choose(form, 'Criteria', 'tone');
    await userEvent.type(
      within(form).getByRole('textbox', { name: 'Instructions' }),
      'Is the refund policy stated correctly?',
    );
    await userEvent.click(within(form).getByRole('button', { name: 'Create queue' }));

    const refusal = await within(form).findByText('tone: no such annotation criterion');
    const field = refusal.closest<HTMLElement>('.mantine-InputWrapper-root')!;
    expect(within(field).getByText('Criteria')).toBeTruthy();
    expect(within(form).queryByRole('alert')).toBeNull(); // nothing left over for under the form
    expect(requestsTo('createQueue')[0]!.body).toEqual({
      name: 'refund-answers',
      project_uuid: PROJECT_UUID,
      criterion_ids: [helpfulness.id, tone.id],
      instructions: 'Is the refund policy stated correctly?',
    });

    // The second try is taken: the dialog closes and the list is read again.
    await userEvent.click(within(form).getByRole('button', { name: 'Create queue' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(requestsTo('createQueue')).toHaveLength(2);
    expect(requestsTo('queues')).toHaveLength(2);
  });

  it('says beside the name that it is taken', async () => {
    server.use(answer('queues', []));
    server.use(fail('createQueue', 409, "the project already has an annotation queue named 'refund-answers'"));
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'Create queue' }));
    const form = await dialog();
    await userEvent.type(within(form).getByRole('textbox', { name: 'Name' }), 'refund-answers');
    await userEvent.click(within(form).getByRole('button', { name: 'Create queue' }));
    const refusal = await within(form).findByText(/already has an annotation queue named/);
    expect(within(refusal.closest<HTMLElement>('.mantine-InputWrapper-root')!).getByText('Name')).toBeTruthy();
    expect(requestsTo('createQueue')[0]!.body).toEqual({
      name: 'refund-answers',
      project_uuid: PROJECT_UUID,
      criterion_ids: [],
      instructions: '',
    });
  });

  it('edits a queue', async () => {
    server.use(answer('queues', [queue()]), answer('updateQueue', queue({ name: 'refunds' })));
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'Edit refund-answers' }));
    const form = await dialog();
    const name = within(form).getByRole('textbox', { name: 'Name' });
    await userEvent.clear(name);
    await userEvent.type(name, 'refunds');
    await userEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    const [patch] = requestsTo('updateQueue');
    expect(patch!.path).toBe(`/annotation-queues/${QUEUE_ID}`);
    expect(patch!.body).toEqual({
      name: 'refunds',
      criterion_ids: [helpfulness.id, tone.id],
      instructions: 'Is the refund policy stated correctly?',
    });
  });

  it('adds a sample of the traces that pass a filter', async () => {
    server.use(answer('queues', [queue()]), answer('addItems', { added: 20 }));
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'Add traces to refund-answers' }));
    const form = await dialog();
    expect(within(form).getByRole('heading', { name: 'Add traces to refund-answers' })).toBeTruthy();
    await userEvent.click(within(form).getByRole('button', { name: 'Add filter' }));
    await userEvent.type(within(form).getByRole('textbox', { name: 'Value' }), 'answer-question');
    const size = within(form).getByRole('textbox', { name: 'Sample size' });
    await userEvent.clear(size);
    await userEvent.type(size, '20');
    await userEvent.click(within(form).getByRole('button', { name: 'Add traces' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    const [add] = requestsTo('addItems');
    expect(add!.path).toBe(`/annotation-queues/${QUEUE_ID}/items`);
    expect(add!.body).toEqual({
      filters: [{ field: 'trace_name', operator: 'equals', value: 'answer-question' }],
      sample_size: 20,
    });
  });

  it('adds traces by id, and names the one the API refuses', async () => {
    const [good, bad] = ['b0000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-0000000000ff'];
    server.use(answer('queues', [queue()]));
    server.use(invalid('addItems', [{ loc: ['body', 'trace_ids', 1], msg: "not a trace of the queue's project" }]));
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'Add traces to refund-answers' }));
    const form = await dialog();
    await userEvent.click(within(form).getByText('By trace id'));
    await userEvent.type(within(form).getByRole('textbox', { name: 'Trace ids' }), `${good}\n${bad}`);
    await userEvent.click(within(form).getByRole('button', { name: 'Add traces' }));
    expect(await within(form).findByText(`${bad}: not a trace of the queue's project`)).toBeTruthy();
    expect(requestsTo('addItems')[0]!.body).toEqual({ trace_ids: [good, bad] });
  });

  it('shows a viewer the queues without the ways to change or review them', async () => {
    server.use(answer('me', viewer), answer('queues', [queue()]));
    open();
    await screen.findByRole('table', { name: 'Annotation queues' });
    await settled();
    expect(screen.queryByRole('button', { name: 'Create queue' })).toBeNull();
    expect(screen.queryByRole('link', { name: /^Review / })).toBeNull();
    expect(screen.queryByRole('button', { name: /^(Edit|Add traces to|Delete the queue) / })).toBeNull();
  });
});
