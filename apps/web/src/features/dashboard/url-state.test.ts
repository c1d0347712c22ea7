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
        expect(round({ range, search: '', status: '', filters: [], experiments: false })).toEqual({
          range,
          search: '',
          status: '',
          filters: [],
          experiments: false,
        });
  });

  it('reads all time, or an unknown range, as the last 7 days', () => {
    for (const junk of ['range=na', 'range=2w', 'range=toString', ''])
      expect(dashboardCodec.parse(new URLSearchParams(junk))).toMatchObject({ range: '7d' });
  });

  it("round-trips the traces page's search, status, filters and experiment runs, in its parameters", () => {
    const view = {
      range: '24h' as const,
      search: 'refund -"gift card"',
      status: 'error' as const,
      filters: [
        { field: 'metadata', key: 'env', operator: 'equals' as const, value: 'prod' },
        { field: 'trace_name', operator: 'equals' as const, value: 'rag-query' },
      ],
      experiments: true,
    };
    expect(round(view)).toEqual(view);
    expect(dashboardCodec.write(view).get('q')).toBe('refund -"gift card"');
    expect(dashboardCodec.write(view).get('status')).toBe('error');
    expect(dashboardCodec.write(view).getAll('filter')).toEqual([
      '["metadata","equals","prod","env"]',
      '["trace_name","equals","rag-query"]',
    ]);
    // A link of old, with its one filter in `filter`, `op` and `value`, reads as that filter.
    expect(dashboardCodec.parse(new URLSearchParams('filter=status&op=equals&value=error')).filters).toEqual([
      { field: 'status', operator: 'equals', value: 'error' },
    ]);
  });

  it('reads an unknown status as any', () => {
    expect(dashboardCodec.parse(new URLSearchParams('status=failed')).status).toBe('');
  });

  it('asks for the complete filters alone, and for the search and status the view has', () => {
    const request = requestFromView(
      {
        range: '7d',
        search: '  refund ',
        status: 'success',
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
      status: 'success',
      search: 'refund',
      filters: [{ field: 'metadata', key: 'env', operator: 'equals', value: 'prod' }],
      include_experiments: false,
    });
    // Neither: none asked for, as the traces page asks.
    const none = requestFromView({ range: '7d', search: ' ', status: '', filters: [], experiments: false }, 'p');
    expect(none).toMatchObject({ status: null, search: null });
  });
});
