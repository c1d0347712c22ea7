import { lazy, Suspense } from 'react';
import { createBrowserRouter, Navigate } from 'react-router';
import { AppLayout } from './components/AppLayout';
import { LoadingState } from './components/StateViews';

// Each page is its own chunk, loaded when first visited: the entry holds the kit, the shell and sign-in.
const SignInPage = lazy(() => import('./pages/SignInPage'));
const ProjectsPage = lazy(() => import('./pages/ProjectsPage'));
const TracesPage = lazy(() => import('./pages/TracesPage'));
const TracePage = lazy(() => import('./pages/TracePage'));
const DashboardPage = lazy(() => import('./pages/DashboardPage'));
const SessionsPage = lazy(() => import('./pages/SessionsPage'));
const SettingsPage = lazy(() => import('./pages/SettingsPage'));
const NotFoundPage = lazy(() => import('./pages/NotFoundPage'));

export const router = createBrowserRouter([
  {
    path: '/sign-in',
    element: (
      <Suspense fallback={<LoadingState label="Loading" />}>
        <SignInPage />
      </Suspense>
    ),
  },
  {
    element: <AppLayout />,
    children: [
      { index: true, element: <Navigate to="/projects" replace /> },
      { path: 'projects', element: <ProjectsPage /> },
      { path: 'projects/:projectUuid/traces', element: <TracesPage /> },
      { path: 'projects/:projectUuid/traces/:traceId', element: <TracePage /> },
      { path: 'projects/:projectUuid/dashboard', element: <DashboardPage /> },
      { path: 'projects/:projectUuid/sessions', element: <SessionsPage /> },
      { path: 'settings', element: <SettingsPage /> },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
]);
