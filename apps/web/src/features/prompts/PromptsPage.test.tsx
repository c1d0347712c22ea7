import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { answer, fail, pending, requestsTo, server, settled } from '../../test/api';
import { admin, deployment, promptVersion, viewer } from '../../test/fixtures';
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
    server.use(answer('deploymentHistory', { deployment_id: 'production', moves: [] }));
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

  it('opens the playground with the selected prompt loaded: its newest version, or the one the URL names', async () => {
    server.use(answer('prompts', [V1, V2, OTHER]), answer('deployments', []));
    const page = open('?name=support-bot&tab=playground');
    expect(((await screen.findByLabelText('Message 1')) as HTMLTextAreaElement).value).toBe(
      'You are a friendly support agent.',
    );
    expect((screen.getByLabelText('Model') as HTMLInputElement).value).toBe('gpt-4o');
    expect((screen.getByRole('combobox', { name: 'Start from' }) as HTMLInputElement).value).toBe('support-bot v2');

    await userEvent.click(screen.getByRole('tab', { name: 'Versions' }));
    const v1 = within(await screen.findByRole('table', { name: 'Versions of support-bot' })).getAllByRole('row')[2]!;
    await userEvent.click(within(v1).getByRole('button', { name: 'Open in playground' }));
    await waitFor(() => expect(page.search().get('version')).toBe('1'));
    expect((screen.getByLabelText('Message 1') as HTMLTextAreaElement).value).toBe('You are a support agent.');
    expect((screen.getByLabelText('Model') as HTMLInputElement).value).toBe('gpt-4o-mini');
  });

  it('edits the model parameters, and saves them with the new version', async () => {
    const tuned = promptVersion({ model_params: { temp: 0.3, max_length: 200, presence_penalty: 0.5 } });
    server.use(answer('prompts', [tuned]), answer('deployments', []));
    server.use(answer('createPrompt', promptVersion({ id: 9, version_number: 2 })));
    open('?name=support-bot&tab=playground');
    const params = await screen.findByRole('group', { name: 'Model parameters' });
    expect((within(params).getByLabelText('Temperature') as HTMLInputElement).value).toBe('0.3');
    expect((within(params).getByLabelText('Max tokens') as HTMLInputElement).value).toBe('200');
    expect((within(params).getByLabelText('Top p') as HTMLInputElement).value).toBe('');

    await userEvent.clear(within(params).getByLabelText('Temperature'));
    await userEvent.type(within(params).getByLabelText('Temperature'), '0.7');
    await userEvent.type(within(params).getByLabelText('Top p'), '0.9');
    await userEvent.click(within(params).getByRole('combobox', { name: 'Response format' }));
    await userEvent.click(await screen.findByRole('option', { name: 'JSON object' }));
    await userEvent.click(screen.getByRole('button', { name: 'Save as new version' }));

    await waitFor(() => expect(requestsTo('createPrompt')).toHaveLength(1));
    expect(requestsTo('createPrompt')[0]!.body).toMatchObject({
      name: 'support-bot',
      model_params: {
        temp: 0.7,
        max_length: 200,
        top_p: 0.9,
        presence_penalty: 0.5,
        response_format: { type: 'json_object' },
      },
    });
  });
});

describe('deployments', () => {
  const history = {
    deployment_id: 'production',
    moves: [
      {
        at: '2026-03-02T10:30:00.000Z',
        by: { label: 'mia@example.com', role: 'member' },
        from: { id: 1, name: 'support-bot', version_number: 1 },
        to: { id: 2, name: 'support-bot', version_number: 2 },
      },
      {
        at: '2026-03-01T09:00:00.000Z',
        by: { label: null, role: 'admin' },
        from: null,
        to: { id: 1, name: 'support-bot', version_number: 1 },
      },
    ],
  };

  it('asks before moving a deployment, naming the version it moves from and to', async () => {
    server.use(answer('prompts', [V1, V2]), answer('deployments', [deployment(V1)]));
    server.use(answer('deploymentHistory', { deployment_id: 'production', moves: [history.moves[1]!] }));
    server.use(answer('deploy', deployment(V2)));
    open();
    const table = await screen.findByRole('table', { name: 'Versions of support-bot' });
    const v2 = within(table).getAllByRole('row')[1]!;

    await userEvent.click(await within(v2).findByRole('button', { name: 'Deploy' }));
    await userEvent.click(await screen.findByRole('button', { name: 'production (now v1)' }));
    let dialog = await screen.findByRole('dialog', { name: 'Move production?' });
    expect(dialog.textContent).toContain('production moves from support-bot v1 to support-bot v2.');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(requestsTo('deploy')).toHaveLength(0);

    await userEvent.click(await within(v2).findByRole('button', { name: 'Deploy' }));
    await userEvent.click(await screen.findByRole('button', { name: 'production (now v1)' }));
    dialog = await screen.findByRole('dialog', { name: 'Move production?' });
    await userEvent.click(within(dialog).getByRole('button', { name: 'Move to v2' }));
    await waitFor(() => expect(requestsTo('deploy')).toHaveLength(1));
    expect(requestsTo('deploy')[0]!.body).toEqual({ prompt_version_id: 2, deployment_id: 'production' });
    // The move reads the deployments and their histories again.
    await waitFor(() => expect(requestsTo('deploymentHistory').length).toBeGreaterThan(1));
  });

  it("shows the deployment's moves newest first, who made them and when, and rolls back once confirmed", async () => {
    server.use(answer('prompts', [V1, V2]), answer('deployments', [deployment(V2)]));
    server.use(answer('deploymentHistory', history), answer('deploy', deployment(V1)));
    open();
    const moves = await screen.findByRole('table', { name: 'History of production' });
    expect(requestsTo('deploymentHistory')[0]!.path).toBe('/deployments/production/history');
    const rows = within(moves).getAllByRole('row').slice(1);
    expect(
      rows.map((r) =>
        within(r)
          .getAllByRole('cell')
          .slice(1)
          .map((c) => c.textContent),
      ),
    ).toEqual([
      ['v1 → v2', 'mia@example.com (member)'],
      ['created at v1', 'an unlabelled key (admin)'],
    ]);
    expect(within(rows[0]!).getByRole('time').getAttribute('datetime')).toBe('2026-03-02T10:30:00.000Z');

    await userEvent.click(screen.getByRole('button', { name: 'Roll back to v1' }));
    const dialog = await screen.findByRole('dialog', { name: 'Roll back production?' });
    expect(dialog.textContent).toContain('production moves from support-bot v2 to support-bot v1.');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Roll back to v1' }));
    await waitFor(() => expect(requestsTo('deploy')).toHaveLength(1));
    expect(requestsTo('deploy')[0]!.body).toEqual({ prompt_version_id: 1, deployment_id: 'production' });
  });

  it('shows a viewer the history, without a roll back or a deploy', async () => {
    server.use(answer('me', viewer));
    server.use(
      answer('prompts', [V1, V2]),
      answer('deployments', [deployment(V2)]),
      answer('deploymentHistory', history),
    );
    open();
    expect(await screen.findByRole('table', { name: 'History of production' })).toBeTruthy();
    await settled();
    expect(screen.queryByRole('button', { name: /Roll back/ })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Deploy' })).toBeNull();
  });

  it('says why the history could not load, and retries', async () => {
    server.use(
      answer('prompts', [V1, V2]),
      answer('deployments', [deployment(V2)]),
      answer('deploymentHistory', history),
    );
    server.use(fail('deploymentHistory', 503, 'the database is unavailable', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('Could not load the history of production')).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'History of production' })).toBeTruthy();
  });
});
