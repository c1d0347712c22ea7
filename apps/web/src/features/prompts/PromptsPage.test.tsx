import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { answer, fail, pending, requestsTo, server } from '../../test/api';
import { admin, deployment, promptVersion } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import PromptsPage from './PromptsPage';

const V1 = promptVersion();
const V2 = promptVersion({
  id: 2,
  version_number: 2,
  model: 'gpt-4o',
  messages: [{ role: 'system', content: 'You are a friendly support agent.' }],
});
const OTHER = promptVersion({ id: 3, name: 'triage', model: 'claude-haiku', provider: 'anthropic' });

const open = (query = '') => renderPage(<PromptsPage />, { route: `/prompts${query}` });
const nav = () => screen.getByRole('navigation', { name: 'Prompts' });

beforeEach(() => {
  server.use(answer('me', admin));
});

describe('the prompts page', () => {
  it('shows that the prompts are loading', async () => {
    server.use(pending('prompts'), answer('deployments', []));
    open();
    expect(await screen.findByText('Loading the prompts…')).toBeTruthy();
  });

  it('says how to write a first prompt when there is none', async () => {
    server.use(answer('prompts', []), answer('deployments', []));
    open();
    expect(await screen.findByRole('heading', { name: 'No prompts yet' })).toBeTruthy();
    expect(screen.getByText(/Open the playground, write a prompt, run it/)).toBeTruthy();
    expect(within(nav()).getByText('No prompts yet: write one in the playground and save it.')).toBeTruthy();
  });

  it('shows why the deployments could not load, and retries', async () => {
    server.use(answer('prompts', [V1]), answer('deployments', []));
    server.use(fail('deployments', 503, 'the database is unavailable', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText(/\(503\): the database is unavailable/)).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'Versions of support-bot' })).toBeTruthy();
    expect(requestsTo('deployments')).toHaveLength(2);
  });

  it('lists the prompts with their versions and deployments', async () => {
    server.use(answer('prompts', [V1, V2, OTHER]), answer('deployments', [deployment(V2)]));
    open();
    const table = await screen.findByRole('table', { name: 'Versions of support-bot' });
    expect(within(nav()).getByText('2 versions · 1 deployed')).toBeTruthy();
    expect(within(nav()).getByText('1 version')).toBeTruthy();
    const rows = within(table).getAllByRole('row').slice(1);
    expect(
      rows.map((r) =>
        within(r)
          .getAllByRole('cell')
          .slice(0, 2)
          .map((c) => c.textContent),
      ),
    ).toEqual([
      ['v2', 'openai/gpt-4o'],
      ['v1', 'openai/gpt-4o-mini'],
    ]);
    expect(within(rows[0]!).getByText('production')).toBeTruthy();
  });

  it('opens the prompt and tab the URL names, and writes the choices into the URL', async () => {
    server.use(answer('prompts', [V1, V2, OTHER]), answer('deployments', []));
    const page = open('?name=triage');
    expect(await screen.findByRole('table', { name: 'Versions of triage' })).toBeTruthy();

    await userEvent.click(within(nav()).getByText('support-bot'));
    expect(await screen.findByRole('table', { name: 'Versions of support-bot' })).toBeTruthy();
    expect(Object.fromEntries(page.search())).toEqual({ name: 'support-bot', tab: 'versions' });

    await userEvent.click(screen.getByRole('tab', { name: 'Diff' }));
    await waitFor(() => expect(page.search().get('tab')).toBe('diff'));
    expect(screen.getByLabelText('Changes from v1 to v2').textContent).toContain('friendly');
  });
});
