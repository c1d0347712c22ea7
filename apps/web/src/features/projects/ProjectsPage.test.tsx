import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { answer, fail, pending, requestsTo, server, settled } from '../../test/api';
import { admin, apiKey, OTHER_PROJECT_UUID, PROJECT_UUID, project, viewer } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import ProjectsPage from './ProjectsPage';

const open = () => renderPage(<ProjectsPage />, { route: '/projects' });
/** A snippet of the first-run guide, by name (its tab open). */
const snippet = (name: string) => screen.getByRole('group', { name });
const KEY = 'sl_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQwxyz';
/** Each snippet that carries the key, and its tab. */
const SNIPPETS = [
  ['Python', 'Python setup'],
  ['TypeScript', 'TypeScript setup'],
  ['curl (first trace)', 'first-trace curl command'],
  ['Gateway', 'gateway curl command'],
  ['OpenTelemetry', 'OpenTelemetry variables'],
] as const;

describe('the projects page', () => {
  it('shows that the projects are loading', async () => {
    server.use(pending('projects'));
    open();
    expect((await screen.findByRole('status')).textContent).toBe('Loading projects…');
  });

  it('explains how to send a first trace when there is no project, warning about the vendor', async () => {
    server.use(answer('projects', []), answer('me', admin));
    open();
    expect(await screen.findByRole('heading', { name: 'No traces yet: send your first one' })).toBeTruthy();
    expect(screen.getByText(`${window.location.origin}/api/svc/v1`)).toBeTruthy();
    const ways = screen.getByRole('tablist', { name: 'Ways to send traces' });
    expect(
      within(ways)
        .getAllByRole('tab')
        .map((t) => t.textContent),
    ).toEqual(['Python', 'TypeScript', 'curl (first trace)', 'Gateway', 'OpenTelemetry']);
    // The clients send everything to their vendor unless the variable points them here: said beside them.
    const python = screen.getByRole('tabpanel', { name: 'Python' });
    expect(within(python).getByRole('alert').textContent).toMatch(
      /^Set PAREA_BASE_URL, or your traces leave this server.*sends every trace, and your API key, to Parea's hosted service/,
    );
    expect(snippet('Python setup').textContent).toContain(
      `export PAREA_BASE_URL=${window.location.origin}/api/svc/v1\nexport PAREA_API_KEY='<your API key>'`,
    );
    await userEvent.click(screen.getByRole('tab', { name: 'TypeScript' }));
    const typescript = screen.getByRole('tabpanel', { name: 'TypeScript' });
    expect(within(typescript).getByRole('alert').textContent).toContain('Set PAREA_BASE_URL');
    expect(within(typescript).getByRole('group', { name: 'TypeScript setup' }).textContent).toContain(
      `export PAREA_BASE_URL=${window.location.origin}/api/svc/v1`,
    );
    // An admin is led to where the gateway's provider keys are saved.
    await userEvent.click(screen.getByRole('tab', { name: 'Gateway' }));
    expect(screen.getByRole('link', { name: 'Settings → Provider keys' }).getAttribute('href')).toBe('/settings');
  });

  it('makes a key for a first trace, fills every snippet with it masked, and copies it whole', async () => {
    const user = userEvent.setup();
    server.use(
      answer('projects', []),
      answer('me', admin),
      answer('createApiKey', { ...apiKey({ label: 'first trace', role: 'member' }), key: KEY }),
    );
    open();
    await user.click(await screen.findByRole('button', { name: 'Create an API key' }));
    expect(await screen.findByText('sl_…wxyz')).toBeTruthy();
    expect(requestsTo('createApiKey').map((r) => [r.body, r.csrf])).toEqual([
      [{ role: 'member', label: 'first trace', service: false }, '1'],
    ]);
    expect(screen.queryByRole('button', { name: 'Create an API key' })).toBeNull();

    // Shown masked in every snippet, until revealed; copied whole.
    const shown = async () => {
      const texts: string[] = [];
      for (const [tab, name] of SNIPPETS) {
        await user.click(screen.getByRole('tab', { name: tab }));
        texts.push(snippet(name).textContent!);
      }
      await user.click(screen.getByRole('tab', { name: 'Python' }));
      return texts;
    };
    for (const text of await shown()) {
      expect(text).toContain('sl_…wxyz');
      expect(text).not.toContain(KEY);
    }
    await user.click(within(snippet('Python setup')).getByRole('button', { name: 'Copy the Python setup' }));
    expect(await navigator.clipboard.readText()).toBe(
      `pip install parea-ai\nexport PAREA_BASE_URL=${window.location.origin}/api/svc/v1\nexport PAREA_API_KEY=${KEY}`,
    );
    await user.click(screen.getByRole('tab', { name: 'curl (first trace)' }));
    await user.click(screen.getByRole('button', { name: 'Copy the first-trace curl command' }));
    const curl = await navigator.clipboard.readText();
    expect(curl).toContain(`curl -sS ${window.location.origin}/api/svc/v1/trace_log \\\n  -H 'x-api-key: ${KEY}'`);
    expect(curl).toContain('"project_name": "my-app"');
    expect(curl).not.toContain('timestamp');
    await user.click(screen.getByRole('button', { name: 'Copy the API key' }));
    expect(await navigator.clipboard.readText()).toBe(KEY);

    const reveal = screen.getByRole('button', { name: 'Show the key' });
    expect(reveal.getAttribute('aria-pressed')).toBe('false');
    await user.click(reveal);
    expect(reveal.getAttribute('aria-pressed')).toBe('true');
    expect(screen.getByTestId('first-run-key').textContent).toBe(KEY);
    for (const text of await shown()) expect(text).toContain(KEY);
  });

  it('says why no key was made', async () => {
    server.use(
      answer('projects', []),
      answer('me', admin),
      fail(
        'createApiKey',
        403,
        "your role (viewer) cannot make member keys: a key's role is no higher than its maker's",
      ),
    );
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'Create an API key' }));
    const alert = await screen.findByRole('alert', { name: 'No key was made' });
    expect(alert.textContent).toContain('cannot make member keys');
    expect(snippet('Python setup').textContent).toContain("export PAREA_API_KEY='<your API key>'");
  });

  it('asks a viewer to get a key from an admin, keeping the placeholder', async () => {
    server.use(answer('projects', []), answer('me', viewer));
    open();
    expect(
      await screen.findByText(/Your role \(viewer\) cannot make a key that writes traces: ask an admin of Acme/),
    ).toBeTruthy();
    await settled();
    expect(screen.queryByRole('button', { name: 'Create an API key' })).toBeNull();
    expect(snippet('Python setup').textContent).toContain("export PAREA_API_KEY='<your API key>'");
    // Provider keys are an admin's to save.
    expect(screen.getByText(/saved in Settings → Provider keys by an admin/)).toBeTruthy();
    expect(screen.queryByRole('link', { name: 'Settings → Provider keys' })).toBeNull();
  });

  it('shows why the projects could not load, and retries', async () => {
    server.use(answer('projects', [project()]));
    server.use(fail('projects', 503, 'the database is unavailable', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('Could not load the projects')).toBeTruthy();
    expect(within(alert).getByText(/The server could not answer \(503\): the database is unavailable/)).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('link', { name: 'support-bot' })).toBeTruthy();
    expect(requestsTo('projects')).toHaveLength(2);
  });

  it('lists the projects, most recently active first, each leading to its traces', async () => {
    server.use(
      answer('projects', [
        project({ uuid: OTHER_PROJECT_UUID, name: 'quiet-app', last_activity: null, error_rate_24h: null }),
        project(),
      ]),
    );
    open();
    const table = await screen.findByRole('table', { name: 'Projects' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getAllByRole('cell')[0]!.textContent)).toEqual([
      expect.stringContaining('support-bot'),
      expect.stringContaining('quiet-app'),
    ]);
    expect(within(rows[0]!).getByText('1,234')).toBeTruthy();
    expect(within(rows[0]!).getByText('2.0%')).toBeTruthy();
    expect(within(rows[1]!).getByText('never')).toBeTruthy();
    expect(screen.getByText('2 projects; activity over the last 24 hours.')).toBeTruthy();
    // The session is the browser's cookie; the header proves the call comes from the console.
    expect(requestsTo('projects')[0]!.csrf).toBe('1');

    await userEvent.click(within(rows[0]!).getByRole('link', { name: 'support-bot' }));
    expect(await screen.findByText(`Now at /projects/${PROJECT_UUID}/traces`)).toBeTruthy();
  });
});
