import { lazy, Suspense } from 'react';
import { createBrowserRouter, Navigate } from 'react-router';
import { LoadingState } from '../components/ui/StateViews';
import { AppLayout } from './AppLayout';

// Each page is its own chunk, loaded when first visited: the entry holds the kit, the shell and sign-in.
const SignInPage = lazy(() => import('../features/auth/SignInPage'));
const AcceptInvitationPage = lazy(() => import('../features/auth/AcceptInvitationPage'));
const ProjectsPage = lazy(() => import('../features/projects/ProjectsPage'));
const TracesPage = lazy(() => import('../features/traces/TracesPage'));
const TracePage = lazy(() => import('../features/trace/TracePage'));
const DashboardPage = lazy(() => import('../features/dashboard/DashboardPage'));
const SessionsPage = lazy(() => import('../features/sessions/SessionsPage'));
const ExperimentsPage = lazy(() => import('../features/experiments/ExperimentsPage'));
const ExperimentPage = lazy(() => import('../features/experiments/ExperimentPage'));
const ComparePage = lazy(() => import('../features/experiments/ComparePage'));
const EvalRulesPage = lazy(() => import('../features/eval-rules/EvalRulesPage'));
const AnnotationQueuesPage = lazy(() => import('../features/annotation-queues/AnnotationQueuesPage'));
const ReviewPage = lazy(() => import('../features/annotation-queues/ReviewPage'));
const MonitorsPage = lazy(() => import('../features/monitors/MonitorsPage'));
const BudgetsPage = lazy(() => import('../features/budgets/BudgetsPage'));
const DatasetsPage = lazy(() => import('../features/datasets/DatasetsPage'));
const DatasetPage = lazy(() => import('../features/datasets/DatasetPage'));
const PromptsPage = lazy(() => import('../features/prompts/PromptsPage'));
const EvalMetricsPage = lazy(() => import('../features/evals/EvalMetricsPage'));
const SettingsPage = lazy(() => import('../features/settings/SettingsPage'));
const AuditLogPage = lazy(() => import('../features/audit-log/AuditLogPage'));
const PeoplePage = lazy(() => import('../features/people/PeoplePage'));
const NotFoundPage = lazy(() => import('../features/not-found/NotFoundPage'));

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
    path: '/accept-invitation',
    element: (
      <Suspense fallback={<LoadingState label="Loading" />}>
        <AcceptInvitationPage />
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
      { path: 'projects/:projectUuid/eval-rules', element: <EvalRulesPage /> },
      { path: 'projects/:projectUuid/annotation-queues', element: <AnnotationQueuesPage /> },
      { path: 'projects/:projectUuid/annotation-queues/:queueId/review', element: <ReviewPage /> },
      { path: 'projects/:projectUuid/monitors', element: <MonitorsPage /> },
      { path: 'datasets', element: <DatasetsPage /> },
      { path: 'datasets/:datasetId', element: <DatasetPage /> },
      { path: 'prompts', element: <PromptsPage /> },
      { path: 'evals', element: <EvalMetricsPage /> },
      { path: 'budgets', element: <BudgetsPage /> },
      { path: 'settings', element: <SettingsPage /> },
      { path: 'settings/audit-log', element: <AuditLogPage /> },
      { path: 'settings/people', element: <PeoplePage /> },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
]);
