import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MemoryRouter, useLocation, useSearchParams } from 'react-router';
import { describe, expect, it } from 'vitest';
import { paramsFromView, requestFromView, viewFromParams, DEFAULT_VIEW, type TraceView } from '../lib/trace-view';
import { renderWithKit } from '../test/render';
import { FilterBuilder } from './FilterBuilder';

/** The traces page's wiring: the filter is read from the URL and written back to it. */
function Harness() {
  const [params, setParams] = useSearchParams();
  const view = viewFromParams(params);
  const location = useLocation();
  return (
    <>
      <FilterBuilder
        value={view.filter}
        onChange={(filter) => setParams(paramsFromView({ ...view, page: 1, filter }))}
      />
      <output data-testid="url">{location.search}</output>
    </>
  );
}

const url = () => new URLSearchParams(screen.getByTestId('url').textContent!);

async function choose(label: string, option: string) {
  const user = userEvent.setup();
  await user.click(await screen.findByRole('combobox', { name: label }));
  await user.click(await screen.findByRole('option', { name: option }));
}

describe('the filter builder and the URL', () => {
  it('writes a metadata filter with its key into the URL', async () => {
    const user = userEvent.setup();
    renderWithKit(
      <MemoryRouter initialEntries={['/p?q=refund&page=3']}>
        <Harness />
      </MemoryRouter>,
    );
    await user.click(screen.getByRole('button', { name: 'Filter' }));
    await choose('Field', 'Metadata');
    expect((screen.getByRole('button', { name: 'Apply' }) as HTMLButtonElement).disabled).toBe(true);
    await user.type(screen.getByRole('textbox', { name: 'Key' }), 'environment');
    await choose('Operator', 'equals');
    await user.type(screen.getByRole('textbox', { name: 'Value' }), 'production');
    await user.click(screen.getByRole('button', { name: 'Apply' }));
    expect(Object.fromEntries(url())).toEqual({
      q: 'refund',
      filter: 'metadata',
      key: 'environment',
      op: 'equals',
      value: 'production',
    });
    expect(screen.getByText('metadata.environment equals production')).toBeTruthy();
  });

  it('composes score and annotation fields, and offers only the operators a field takes', async () => {
    const user = userEvent.setup();
    renderWithKit(
      <MemoryRouter initialEntries={['/p']}>
        <Harness />
      </MemoryRouter>,
    );
    await user.click(screen.getByRole('button', { name: 'Filter' }));
    await choose('Field', 'Score…');
    await user.type(screen.getByRole('textbox', { name: 'Score name' }), 'helpfulness');
    await user.click(screen.getByRole('combobox', { name: 'Operator' }));
    const offered = (await screen.findAllByRole('option')).map((o) => o.textContent);
    expect(offered).not.toContain('contains'); // scores are numbers: no `like`
    expect(offered).toHaveLength(10);
    await user.click(screen.getByRole('option', { name: 'is between' }));
    await user.type(screen.getByRole('textbox', { name: 'Value' }), '0.5, 1');
    await user.click(screen.getByRole('button', { name: 'Apply' }));
    expect(Object.fromEntries(url())).toEqual({ filter: 'score:helpfulness', op: 'between', value: '0.5, 1' });

    await user.click(screen.getByRole('button', { name: 'Filter' }));
    await choose('Field', 'Annotation…');
    await choose('Annotation attribute', 'value');
    await user.type(screen.getByRole('textbox', { name: 'Criterion id' }), '7');
    await choose('Operator', 'is set');
    expect(screen.queryByRole('textbox', { name: 'Value' })).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Apply' }));
    expect(Object.fromEntries(url())).toEqual({ filter: 'annotation:value:7', op: 'exists' });
  });

  it('reads a filter from a link: the chip, the builder and the request', async () => {
    const user = userEvent.setup();
    renderWithKit(
      <MemoryRouter initialEntries={['/p?filter=tags&op=in&value=prod,beta&status=error']}>
        <Harness />
      </MemoryRouter>,
    );
    expect(screen.getByText('tags is one of prod,beta')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Filter' }));
    const form = await screen.findByRole('form', { name: 'Filter builder' });
    expect((within(form).getByRole('combobox', { name: 'Field' }) as HTMLInputElement).value).toBe('Tags');
    expect((within(form).getByRole('textbox', { name: 'Value' }) as HTMLInputElement).value).toBe('prod,beta');
    fireEvent.click(screen.getByRole('button', { name: 'Clear' }));
    await waitFor(() => expect(Object.fromEntries(url())).toEqual({ status: 'error' }));
  });

  it('round-trips every part of a view through the URL', () => {
    const views: TraceView[] = [
      DEFAULT_VIEW,
      {
        search: 'refund policy',
        sort: 'slowest',
        status: 'error',
        range: '7d',
        page: 4,
        pageSize: 250,
        filter: { field: 'metadata', key: 'customer', operator: 'like', value: 'acme' },
      },
      { ...DEFAULT_VIEW, filter: { field: 'annotation:score:12', operator: 'greater_than_or_equal', value: '0.5' } },
      { ...DEFAULT_VIEW, filter: { field: 'score:acc:v2', operator: 'is_null' } },
      { ...DEFAULT_VIEW, sort: 'oldest' },
      {
        ...DEFAULT_VIEW,
        filter: { field: 'start_timestamp', operator: 'between', value: '2026-01-01, 2026-01-31 23:59:59' },
      },
    ];
    for (const view of views)
      expect(viewFromParams(new URLSearchParams(paramsFromView(view).toString()))).toEqual(view);
    expect(paramsFromView(DEFAULT_VIEW).toString()).toBe('');
    expect(requestFromView(views[1]!, 'p-1')).toEqual({
      project_uuid: 'p-1',
      page: 4,
      page_size: 250,
      time_range: '7d',
      status: 'error',
      search: 'refund policy',
      sort: 'slowest',
      filter_field: 'metadata',
      filter_operator: 'like',
      filter_value: 'acme',
      filter_key: 'customer',
    });
    // An incomplete filter from a hand-edited link is not sent.
    expect(
      requestFromView({ ...DEFAULT_VIEW, filter: { field: 'metadata', operator: 'equals', value: 'x' } }, 'p')
        .filter_field,
    ).toBeNull();
    // Unknown values fall back to the defaults.
    expect(viewFromParams(new URLSearchParams('status=maybe&range=2w&page=-1&size=7&op=nope&filter=x'))).toEqual(
      DEFAULT_VIEW,
    );
  });
});
