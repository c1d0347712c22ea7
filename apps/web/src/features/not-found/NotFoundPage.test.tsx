import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { expect, it } from 'vitest';
import { renderPage } from '../../test/render';
import NotFoundPage from './NotFoundPage';

it('says the page does not exist, and its link leads back to the projects', async () => {
  renderPage(<NotFoundPage />, { route: '/no/such/page' });
  expect(screen.getByRole('heading', { name: 'This page does not exist' })).toBeTruthy();
  expect(screen.getByText(/may be mistyped/)).toBeTruthy();
  await userEvent.click(screen.getByRole('link', { name: 'Go to the projects' }));
  expect(await screen.findByText('Now at /projects')).toBeTruthy();
});
