import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { answer, fail, invalid, pending, requestsTo, server, settled } from '../../test/api';
import { admin, evalMetric, viewer } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import EvalMetricsPage from './EvalMetricsPage';

const open = (route = '/evals') => renderPage(<EvalMetricsPage />, { route });
const METRICS = [evalMetric(), evalMetric({ id: 2, name: 'is-json', type: 'json_valid', config: {} })];

describe('the evaluation metrics page', () => {
  it('shows that the metrics are loading', async () => {
    server.use(answer('me', admin), pending('evalMetrics'));
    open();
    expect(await screen.findByText('Loading the metrics…')).toBeTruthy();
  });

  it('says to create a metric when there is none', async () => {
    server.use(answer('me', admin), answer('evalMetrics', []));
    open();
    expect(await screen.findByText('No metrics yet: create one with the form.')).toBeTruthy();
    expect(await screen.findByRole('button', { name: 'Create metric' })).toBeTruthy();
  });

  it('shows why the metrics could not load, and retries', async () => {
    server.use(answer('me', admin), answer('evalMetrics', METRICS));
    server.use(fail('evalMetrics', 503, 'the database is unavailable', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText(/\(503\): the database is unavailable/)).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'Evaluation metrics' })).toBeTruthy();
    expect(requestsTo('evalMetrics')).toHaveLength(2);
  });

  it('lists the metrics with their types, deletable by a member or admin', async () => {
    server.use(answer('me', admin), answer('evalMetrics', METRICS));
    open();
    const table = await screen.findByRole('table', { name: 'Evaluation metrics' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(
      rows.map((r) =>
        within(r)
          .getAllByRole('cell')
          .slice(0, 2)
          .map((c) => c.textContent),
      ),
    ).toEqual([
      ['exact-answer', 'Exact match'],
      ['is-json', 'Valid JSON'],
    ]);
    expect(await within(table).findByRole('button', { name: 'Delete the metric is-json' })).toBeTruthy();
  });

  it('shows a viewer the metrics without the form or deletion', async () => {
    server.use(answer('me', viewer), answer('evalMetrics', METRICS));
    open();
    await screen.findByRole('table', { name: 'Evaluation metrics' });
    await settled();
    expect(requestsTo('me')).toHaveLength(1);
    expect(screen.queryByRole('button', { name: 'Create metric' })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Delete the metric/ })).toBeNull();
  });

  it('opens a metric from the list: its configuration filled in, its versions listed, kept in the URL', async () => {
    const contains = evalMetric({
      id: 3,
      name: 'says-paris',
      type: 'contains',
      config: { value: 'Paris' },
      version: 2,
    });
    server.use(
      answer('me', admin),
      answer('evalMetrics', [...METRICS, contains]),
      answer('evalMetricVersions', [
        { version: 2, type: 'contains', config: { value: 'Paris' }, created_at: '2026-03-02 00:00:00' },
        { version: 1, type: 'contains', config: { value: 'paris' }, created_at: '2026-03-01 00:00:00' },
      ]),
    );
    const page = open();
    await userEvent.click(await screen.findByRole('button', { name: 'Edit the metric says-paris' }));
    expect(page.search().get('metric')).toBe('3');
    const form = await screen.findByRole('form', { name: 'says-paris: version 2' });
    expect((within(form).getByLabelText('Value') as HTMLInputElement).value).toBe('Paris');
    expect(within(form).getByRole('textbox', { name: 'Name' })).toHaveProperty('disabled', true);
    const versions = await screen.findByRole('list', { name: 'Versions of says-paris' });
    const items = within(versions).getAllByRole('listitem');
    expect(items.map((i) => within(i).getByText(/^Version \d/).textContent)).toEqual(['Version 2', 'Version 1']);
    expect(within(items[1]).getByText(/"paris"/)).toBeTruthy();
    expect(requestsTo('evalMetricVersions')[0].path).toBe('/eval-metrics/3/versions');
  });

  it('saves an edited configuration as the next version, and shows a refused one beside its field', async () => {
    const regex = evalMetric({ id: 4, name: 'starts-a', type: 'regex_match', config: { pattern: '^a', flags: null } });
    const saved = { ...regex, config: { pattern: '^b', flags: null }, version: 2 };
    let current = regex;
    server.use(
      answer('me', admin),
      answer('evalMetrics', () => [current]),
      answer('evalMetricVersions', []),
      answer('updateEvalMetric', () => {
        current = saved;
        return saved;
      }),
    );
    server.use(
      invalid('updateEvalMetric', [{ loc: ['body', 'config', 'pattern'], msg: 'RE2 has no backreferences' }], {
        once: true,
      }),
    );
    open('/evals?metric=4');
    const form = await screen.findByRole('form', { name: 'starts-a: version 1' });
    const save = within(form).getByRole('button', { name: 'Save as version 2' });
    // Nothing changed yet: nothing to save.
    expect(save).toHaveProperty('disabled', true);
    const pattern = within(form).getByRole('textbox', { name: 'Pattern' });
    await userEvent.clear(pattern);
    await userEvent.type(pattern, '(a)\\1');
    await userEvent.click(save);
    expect(await within(form).findByText('RE2 has no backreferences')).toBeTruthy();
    await userEvent.clear(pattern);
    await userEvent.type(pattern, '^b');
    await userEvent.click(save);
    expect(await screen.findByRole('form', { name: 'starts-a: version 2' })).toBeTruthy();
    expect(requestsTo('updateEvalMetric').map((r) => [r.path, r.body])).toEqual([
      ['/eval-metrics/4', { type: 'regex_match', config: { pattern: '(a)\\1', flags: null } }],
      ['/eval-metrics/4', { type: 'regex_match', config: { pattern: '^b', flags: null } }],
    ]);
  });

  it('tries an existing metric on a pasted output, with its configuration as it stands in the form', async () => {
    const judge = evalMetric({
      id: 5,
      name: 'judge',
      type: 'llm_judge',
      config: { prompt_template: 'Rate {{output}}', provider: 'openai', model: 'gpt-4o', model_params: { temp: 0 } },
    });
    server.use(
      answer('me', admin),
      answer('evalMetrics', [judge]),
      answer('evalMetricVersions', []),
      answer('tryMetric', { score: 0.5, reason: 'fair' }),
    );
    open('/evals?metric=5');
    const form = await screen.findByRole('form', { name: 'judge: version 1' });
    await userEvent.type(within(form).getByRole('textbox', { name: 'Output' }), 'Lyon');
    await userEvent.click(within(form).getByRole('button', { name: 'Try' }));
    expect(await within(form).findByText('Score 0.50: fair')).toBeTruthy();
    expect(requestsTo('tryMetric')[0].body).toEqual({
      metric: {
        name: 'judge',
        type: 'llm_judge',
        // Its settings without a field in the form are kept.
        config: { prompt_template: 'Rate {{output}}', provider: 'openai', model: 'gpt-4o', model_params: { temp: 0 } },
      },
      output: 'Lyon',
      target: null,
    });
  });

  it("shows a viewer a metric's configuration and versions, read-only", async () => {
    server.use(answer('me', viewer), answer('evalMetrics', METRICS), answer('evalMetricVersions', []));
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'View the metric exact-answer' }));
    const form = await screen.findByRole('form', { name: 'exact-answer: version 1' });
    // Disabled by the form's fieldset, as a browser and a screen reader take it.
    expect(within(form).getByRole('switch', { name: 'Case sensitive' }).matches(':disabled')).toBe(true);
    expect(within(form).queryByRole('button', { name: /^Save/ })).toBeNull();
    expect(within(form).queryByRole('button', { name: 'Try' })).toBeNull();
  });

  it('says so when the metric in the link no longer exists', async () => {
    server.use(answer('me', admin), answer('evalMetrics', METRICS));
    open('/evals?metric=99');
    expect(await screen.findByText('The metric in the link no longer exists: pick one in the list.')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Create metric' })).toBeTruthy();
  });
});
