import { describe, expect, it } from 'vitest';
import { isTimeRange, TIME_RANGE_LABELS } from '../../lib/trace-view';
import { dashboardCodec, requestFromView } from './url-state';

const round = (view: Parameters<typeof dashboardCodec.write>[0]) =>
  dashboardCodec.parse(new URLSearchParams(dashboardCodec.write(view).toString()));

describe("the dashboard's view in the URL", () => {
  it('round-trips every range but all time', () => {
    const ranges = Object.keys(TIME_RANGE_LABELS).filter(isTimeRange);
    for (const range of ranges)
      if (range !== 'na')
        expect(round({ range, filters: [], experiments: false })).toEqual({
          range,
          filters: [],
          experiments: false,
        });
  });

  it('reads all time, or an unknown range, as the last 7 days', () => {
    for (const junk of ['range=na', 'range=2w', 'range=toString', ''])
      expect(dashboardCodec.parse(new URLSearchParams(junk))).toMatchObject({ range: '7d' });
  });

  it("round-trips the traces page's filters and experiment runs, in the traces page's parameters", () => {
    const view = {
      range: '24h' as const,
      filters: [
        { field: 'metadata', key: 'env', operator: 'equals' as const, value: 'prod' },
        { field: 'trace_name', operator: 'equals' as const, value: 'rag-query' },
      ],
      experiments: true,
    };
    expect(round(view)).toEqual(view);
    expect(dashboardCodec.write(view).getAll('filter')).toEqual([
      '["metadata","equals","prod","env"]',
      '["trace_name","equals","rag-query"]',
    ]);
    // A link of old, with its one filter in `filter`, `op` and `value`, reads as that filter.
    expect(dashboardCodec.parse(new URLSearchParams('filter=status&op=equals&value=error')).filters).toEqual([
      { field: 'status', operator: 'equals', value: 'error' },
    ]);
  });

  it('asks for the complete filters alone', () => {
    const request = requestFromView(
      {
        range: '7d',
        filters: [
          { field: 'metadata', key: 'env', operator: 'equals', value: 'prod' },
          { field: 'trace_name', operator: 'equals' },
        ],
        experiments: false,
      },
      'p',
    );
    expect(request).toEqual({
      project_uuid: 'p',
      time_range: '7d',
      filters: [{ field: 'metadata', key: 'env', operator: 'equals', value: 'prod' }],
      include_experiments: false,
    });
  });
});
