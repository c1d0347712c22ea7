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
const ExperimentsPage = lazy(() => import('./pages/ExperimentsPage'));
const ExperimentPage = lazy(() => import('./pages/ExperimentPage'));
const ComparePage = lazy(() => import('./pages/ComparePage'));
const DatasetsPage = lazy(() => import('./pages/DatasetsPage'));
const DatasetPage = lazy(() => import('./pages/DatasetPage'));
const PromptsPage = lazy(() => import('./pages/PromptsPage'));
const EvalMetricsPage = lazy(() => import('./pages/EvalMetricsPage'));
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
      { path: 'projects/:projectUuid/experiments', element: <ExperimentsPage /> },
      { path: 'projects/:projectUuid/experiments/compare', element: <ComparePage /> },
      { path: 'projects/:projectUuid/experiments/:experimentUuid', element: <ExperimentPage /> },
      { path: 'datasets', element: <DatasetsPage /> },
      { path: 'datasets/:datasetId', element: <DatasetPage /> },
      { path: 'prompts', element: <PromptsPage /> },
      { path: 'evals', element: <EvalMetricsPage /> },
      { path: 'settings', element: <SettingsPage /> },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
]);
