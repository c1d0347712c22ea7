import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import type { ReactElement } from 'react';
import { createMemoryRouter, RouterProvider, useLocation } from 'react-router';
import { session } from '../api/session';
import { theme } from '../theme';

export function renderWithKit(ui: ReactElement) {
  return render(<MantineProvider theme={theme}>{ui}</MantineProvider>);
}

/** What a link or a redirect out of the page under test shows: where it led. */
function Elsewhere() {
  const { pathname, search } = useLocation();
  return <p>Now at {pathname + search}</p>;
}

type PageOptions = {
  /** The address the page opens at, with its query: `/projects/p1/traces?status=error`. */
  route: string;
  /** The router's pattern for the page (`/projects/:projectUuid/traces`); the route's path by default. */
  path?: string;
  /** False for a page before sign-in (its session ended or never was); else the session's cookie works. */
  signedIn?: boolean;
};

/**
 * Renders a page as the console runs it: Mantine's theme, a fresh query cache that does not retry (an
 * error shows at once), and a router at `route`. Any other address renders "Now at <address>".
 */
export function renderPage(page: ReactElement, { route, path = route.split('?')[0], signedIn = true }: PageOptions) {
  if (signedIn) session.signedIn();
  else session.signOut();
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  const router = createMemoryRouter(
    [
      { path, element: page },
      { path: '*', element: <Elsewhere /> },
    ],
    { initialEntries: [route] },
  );
  const view = render(
    <MantineProvider theme={theme}>
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </MantineProvider>,
  );
  return {
    ...view,
    /** The query of the page's current address. */
    search: () => new URLSearchParams(router.state.location.search),
  };
}
