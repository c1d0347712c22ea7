import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { answer, fail, pending, requestsTo, server } from '../../test/api';
import { OTHER_PROJECT_UUID, PROJECT_UUID, project } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import ProjectsPage from './ProjectsPage';

const open = () => renderPage(<ProjectsPage />, { route: '/projects' });

describe('the projects page', () => {
  it('shows that the projects are loading', async () => {
    server.use(pending('projects'));
    open();
    expect((await screen.findByRole('status')).textContent).toBe('Loading projects…');
  });

  it('explains how to send a first trace when there is no project', async () => {
    server.use(answer('projects', []));
    open();
    expect(await screen.findByRole('heading', { name: 'No traces yet: send your first one' })).toBeTruthy();
    // The setup snippet names this server's base URL, and where a key goes (the console holds none).
    expect(screen.getAllByText('<your API key>').length).toBeGreaterThan(0);
    expect(screen.getByText(`${window.location.origin}/api/svc/v1`)).toBeTruthy();
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
