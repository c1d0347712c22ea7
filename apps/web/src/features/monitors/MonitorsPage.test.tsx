import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { answer, fail, invalid, pending, requestsTo, server, settled } from '../../test/api';
import {
  admin,
  monitor,
  MONITOR_ID,
  monitorDetail,
  monitorSeries,
  PROJECT_UUID,
  project,
  viewer,
} from '../../test/fixtures';
import { renderPage } from '../../test/render';
import MonitorsPage from './MonitorsPage';

const open = () =>
  renderPage(<MonitorsPage />, {
    route: `/projects/${PROJECT_UUID}/monitors`,
    path: '/projects/:projectUuid/monitors',
  });

// No pause between keys: the form renders again at each, and the typing is not what is tested.
const user = userEvent.setup({ delay: null });

async function fill(input: HTMLElement, text: string) {
  await user.clear(input);
  await user.click(input);
  await user.paste(text);
}

async function choose(scope: HTMLElement, label: string, option: string) {
  await user.click(within(scope).getByRole('combobox', { name: label }));
  await user.click(await screen.findByRole('option', { name: option }));
}

const described = (input: HTMLElement) =>
  (input.getAttribute('aria-describedby') ?? '')
    .split(' ')
    .map((id) => document.getElementById(id)?.textContent)
    .join(' ');

beforeEach(() => {
  server.use(
    answer('me', admin),
    answer('projects', [project()]),
    answer('monitor', monitorDetail()),
    answer('previewMonitor', { series: monitorSeries(Array.from({ length: 24 }, () => 0.03)) }),
  );
});

describe('the monitors page', () => {
  it('shows that the monitors are loading', async () => {
    server.use(pending('monitors'));
    open();
    expect(await screen.findByText('Loading the monitors…')).toBeTruthy();
  });

  it('says what a monitor does when there is none, and offers to create one', async () => {
    server.use(answer('monitors', []));
    open();
    expect(await screen.findByRole('heading', { name: 'No monitors yet' })).toBeTruthy();
    expect(screen.getByText(/tells a webhook or Slack when it crosses a threshold/)).toBeTruthy();
    expect(await screen.findAllByRole('button', { name: 'Create monitor' })).toHaveLength(1);
    expect(requestsTo('monitors')[0]!.query).toEqual({ project_uuid: PROJECT_UUID });
  });

  it('shows why the monitors could not load, and retries', async () => {
    server.use(answer('monitors', [monitor()]));
    server.use(fail('monitors', 503, 'the database is unavailable', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toMatch(/the database is unavailable/);
    await user.click(within(alert).getByRole('button', { name: /retry/i }));
    expect(await screen.findByRole('table', { name: 'Monitors' })).toBeTruthy();
  });

  it('lists each monitor with what it watches, its state, its last day against the threshold and its channels', async () => {
    server.use(
      answer('monitors', [
        monitor(),
        monitor({
          id: 'a4000000-0000-4000-8000-000000000002',
          name: 'slow answers',
          metric: 'latency_p95',
          filters: [],
          condition: { anomaly: { mads: 3 } },
          channels: [{ kind: 'slack', url: 'https://hooks.slack.com/services/T/B/X' }],
          state: 'no_data',
          last_value: null,
          last_evaluated_at: null,
        }),
      ]),
    );
    open();
    const table = await screen.findByRole('table', { name: 'Monitors' });
    const [first, second] = within(table).getAllByRole('row').slice(1);
    expect(within(first!).getByText('Error rate over 15 min, above 5.0%')).toBeTruthy();
    expect(within(first!).getByText(/Where name equals refund · at least 10 traces/)).toBeTruthy();
    expect(within(first!).getByText('Firing')).toBeTruthy();
    expect(within(first!).getByText('13%')).toBeTruthy();
    expect(within(first!).getByText('Webhook: hooks.example.com')).toBeTruthy();
    const spark = await within(first!).findByRole('img');
    expect(spark.getAttribute('aria-label')).toBe(
      'refund errors, Error rate: last 13%, from 2.0% to 13% over 24 hours, threshold 5.0%',
    );
    expect(
      within(second!).getByText('Latency p95 over 15 min, 3 MADs from the same hour of the last 7 days'),
    ).toBeTruthy();
    expect(within(second!).getByText('No data')).toBeTruthy();
    expect(within(second!).getByText('not read yet')).toBeTruthy();
    expect(within(second!).getByText('Slack: hooks.slack.com')).toBeTruthy();
  });

  it('shows a monitor’s changes of state and its deliveries with every attempt', async () => {
    server.use(answer('monitors', [monitor()]));
    open();
    await user.click(await screen.findByRole('button', { name: 'History of refund errors' }));
    const changes = await screen.findByRole('table', { name: 'Changes of state of refund errors' });
    expect(within(changes).getAllByRole('row')[1]!.textContent).toMatch(/OK → Firing13%/);
    const deliveries = screen.getByRole('table', { name: 'Deliveries of refund errors' });
    const [row] = within(deliveries).getAllByRole('row').slice(1);
    expect(within(row!).getByText('delivered')).toBeTruthy();
    expect(within(row!).getByText(/500 · answered 500 · 40 ms/)).toBeTruthy();
    expect(within(row!).getByText(/204\s+· 35 ms/)).toBeTruthy();
  });

  it('reads a delivery still pending again until it has its outcome, then stops', async () => {
    const [sent] = monitorDetail().deliveries;
    const pendingOne = { ...sent!, status: 'pending' as const, attempts: [] };
    let reads = 0;
    server.use(
      answer('monitors', [monitor()]),
      answer('monitor', () => monitorDetail({ deliveries: [++reads === 1 ? pendingOne : sent!] })),
    );
    open();
    await user.click(await screen.findByRole('button', { name: 'History of refund errors' }));
    const deliveries = await screen.findByRole('table', { name: 'Deliveries of refund errors' });
    expect(within(deliveries).getByText('pending')).toBeTruthy();
    expect(await within(deliveries).findByText('delivered', {}, { timeout: 8_000 })).toBeTruthy();
    const settledReads = reads;
    await new Promise((r) => setTimeout(r, 6_000));
    expect(reads).toBe(settledReads);
  }, 20_000);

  it('creates a monitor from a preview of its metric, showing a refused URL beside its field', async () => {
    server.use(answer('monitors', []), answer('createMonitor', monitor()));
    server.use(
      invalid(
        'createMonitor',
        [{ loc: ['body', 'channels', 0, 'url'], msg: 'url refused: it reaches a non-public address' }],
        {
          once: true,
        },
      ),
    );
    open();
    await user.click(await screen.findByRole('button', { name: 'Create monitor' }));
    const dialog = await screen.findByRole('dialog', { name: 'Create monitor' });
    await fill(within(dialog).getByLabelText(/^Name/), 'slow refunds');
    await choose(dialog, 'Metric', 'Latency p95');
    await fill(within(dialog).getByLabelText(/^Window/), '30');
    await fill(within(dialog).getByRole('textbox', { name: 'Threshold' }), '2.5');
    await user.click(within(dialog).getByRole('button', { name: 'Add webhook' }));
    expect(within(dialog).getByText(/To save: complete channel 1 \(give its URL\)/)).toBeTruthy();
    await fill(within(dialog).getByLabelText(/^Webhook URL/), 'https://hooks.example.com/a');
    await fill(within(dialog).getByLabelText(/^Secret/), 'whsec_0123456789abcdef');
    // The preview reads the metric as it is now written.
    await waitFor(() =>
      expect(requestsTo('previewMonitor').at(-1)!.body).toEqual({
        project_uuid: PROJECT_UUID,
        metric: 'latency_p95',
        filters: [],
        window_minutes: 30,
      }),
    );
    expect(within(dialog).getByRole('region', { name: 'Preview' }).querySelector('[role="img"]')).toBeTruthy();
    await user.click(within(dialog).getByRole('button', { name: 'Create monitor' }));
    await waitFor(() => expect(requestsTo('createMonitor')).toHaveLength(1));
    expect(requestsTo('createMonitor')[0]!.body).toEqual({
      name: 'slow refunds',
      project_uuid: PROJECT_UUID,
      metric: 'latency_p95',
      score_name: null,
      filters: [],
      window_minutes: 30,
      condition: { above: 2.5 },
      min_samples: 10,
      enabled: true,
      channels: [{ kind: 'webhook', url: 'https://hooks.example.com/a', secret: 'whsec_0123456789abcdef' }],
    });
    const url = within(dialog).getByLabelText(/^Webhook URL/);
    await waitFor(() => expect(described(url)).toContain('url refused: it reaches a non-public address'));
    await user.click(within(dialog).getByRole('button', { name: 'Create monitor' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it('edits a monitor, keeping a saved webhook’s secret unless a new one is written', async () => {
    server.use(answer('monitors', [monitor()]), answer('updateMonitor', monitor()));
    open();
    await user.click(await screen.findByRole('button', { name: 'Edit refund errors' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit the monitor refund errors' });
    expect((within(dialog).getByLabelText(/^Secret/) as HTMLInputElement).placeholder).toBe('Unchanged');
    await user.click(within(dialog).getByRole('radio', { name: 'Below' }));
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(requestsTo('updateMonitor')).toHaveLength(1));
    expect(requestsTo('updateMonitor')[0]).toMatchObject({
      path: `/monitors/${MONITOR_ID}`,
      body: {
        condition: { below: 0.05 },
        channels: [{ kind: 'webhook', url: 'https://hooks.example.com/sightline' }],
      },
    });
  });

  it('shows a viewer the monitors and their history, without the ways to change them', async () => {
    server.use(answer('me', viewer), answer('monitors', [monitor()]));
    open();
    await screen.findByRole('table', { name: 'Monitors' });
    await settled();
    expect(screen.queryByRole('button', { name: 'Create monitor' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Edit refund errors' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Delete the monitor refund errors' })).toBeNull();
    expect((screen.getByRole('switch', { name: 'refund errors enabled' }) as HTMLInputElement).disabled).toBe(true);
    expect(screen.getByRole('button', { name: 'History of refund errors' })).toBeTruthy();
  });
});
