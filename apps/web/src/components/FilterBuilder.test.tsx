import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MemoryRouter, useLocation } from 'react-router';
import { describe, expect, it } from 'vitest';
import { useUrlState } from '../hooks/use-url-state';
import type { FilterCondition } from '../lib/filter-fields';
import { readFilter, writeFilter } from '../lib/trace-view';
import type { UrlCodec } from '../lib/url-codec';
import { renderWithKit } from '../test/render';
import { FilterBuilder } from './FilterBuilder';

/** One filter in the URL (an experiment's samples), the other parameters kept and the page reset. */
const codec: UrlCodec<{ params: URLSearchParams; filter: FilterCondition | null }> = {
  parse: (params) => ({ params, filter: readFilter(params) }),
  write: ({ params, filter }) => {
    const next = new URLSearchParams(params);
    for (const name of ['filter', 'key', 'op', 'value', 'page']) next.delete(name);
    writeFilter(next, filter);
    return next;
  },
};

/** A page's wiring: the filter is read from the URL and written back to it. */
function Harness() {
  const [view, setView] = useUrlState(codec);
  const location = useLocation();
  return (
    <>
      <FilterBuilder value={view.filter} onChange={(filter) => setView({ filter })} />
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
});
