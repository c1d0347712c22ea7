// Wire types of the console's API calls, derived from the API's own zod schemas (type-only imports: no
// schema code reaches the browser bundle).
import type { z } from 'zod';
import type {
  AcceptInvitationSchema,
  ApiKeyCreatedSchema,
  ApiKeyRole,
  ApiKeySchema,
  AuditLogPageSchema,
  AuditTargetKind,
  BootstrapAdminSchema,
  CompareRequestSchema,
  CompareRowsRequestSchema,
  CompareRowsSchema,
  CompareSchema,
  CompletionResponseSchema,
  CriterionCreateSchema,
  CriterionSchema,
  DashboardRequestSchema,
  DashboardSchema,
  DatasetListSchema,
  DeploymentHistorySchema,
  DeploymentSchema,
  EvalBackfillSchema,
  EvalMetricCreateSchema,
  EvalMetricSchema,
  EvalMetricTrySchema,
  EvalMetricUpdateSchema,
  EvalMetricVersionSchema,
  EvalResult as EvalResultSchema,
  EvalRuleCreateSchema,
  EvalRulePatchSchema,
  EvalRulePreviewRequestSchema,
  EvalRulePreviewSchema,
  EvalRuleSchema,
  ExperimentListSchema,
  ExperimentSamplesRequestSchema,
  ExperimentSamplesSchema,
  ExperimentSummariesSchema,
  InvitationCreatedSchema,
  InvitationPreviewSchema,
  InvitationSchema,
  LoginSchema,
  ProjectSummarySchema,
  PromptVersionCreateSchema,
  PromptVersionSchema,
  ProviderKeySchema,
  SignedInSchema,
  SignInOptionsSchema,
  TraceLogFields,
  TraceGroupSchema,
  TraceGroupsRequestSchema,
  TraceGroupsSchema,
  TraceRowsRequestSchema,
  TraceRowsSchema,
  TraceCountSchema,
  TestCasePageSchema,
  TestCaseSchema,
  TraceSearchSchema,
  TraceSkeletonSchema,
  TraceExportProgressSchema,
  TraceExportRequestSchema,
  UserSchema,
  WhoAmISchema,
} from '@sightline/schemas';
import type { FILTER_OPERATORS } from '@sightline/core/filters';

export type { TimeRange } from '@sightline/schemas';
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export type WhoAmI = z.output<typeof WhoAmISchema>;
export type SignInOptions = z.output<typeof SignInOptionsSchema>;
export type SignedIn = z.output<typeof SignedInSchema>;
export type Login = z.input<typeof LoginSchema>;
export type BootstrapAdmin = z.input<typeof BootstrapAdminSchema>;
export type ProjectSummary = z.output<typeof ProjectSummarySchema>;
/** What the console sends: page, page_size and time_range have defaults on the server. */
export type TraceRowsRequest = z.input<typeof TraceRowsRequestSchema>;
export type TraceRows = z.output<typeof TraceRowsSchema>;
export type TraceCount = z.output<typeof TraceCountSchema>;
export type TraceRow = TraceRows['results'][number];
export type TraceSort = NonNullable<TraceRowsRequest['sort']>;
export type TraceSkeleton = z.output<typeof TraceSkeletonSchema>;
export type TraceExportRequest = z.input<typeof TraceExportRequestSchema>;
export type TraceExportProgress = z.output<typeof TraceExportProgressSchema>;
export type SkeletonSpan = TraceSkeleton['spans'][number];
export type TraceSearch = z.output<typeof TraceSearchSchema>;
export type ApiKey = z.output<typeof ApiKeySchema>;
export type ApiKeyCreated = z.output<typeof ApiKeyCreatedSchema>;
export type ProviderKey = z.output<typeof ProviderKeySchema>;
export type Role = ApiKeyRole;
export type Criterion = z.output<typeof CriterionSchema>;
export type CriterionCreate = z.input<typeof CriterionCreateSchema>;
export type DashboardRequest = z.input<typeof DashboardRequestSchema>;
export type Dashboard = z.output<typeof DashboardSchema>;
export type TraceGroupsRequest = z.input<typeof TraceGroupsRequestSchema>;
export type TraceGroups = z.output<typeof TraceGroupsSchema>;
export type TraceGroup = z.output<typeof TraceGroupSchema>;
/** A console comment as `GET /span` answers it: the client's own comments have no `id`. */
export type SpanComment = NonNullable<Span['comments']>[number] & { id?: string };

/**
 * `GET /span/{trace_id}`: one span with every field, as a trace log reads back, without its children.
 * (SpanSchema types only the typed columns and lets the rest through; the fields are TraceLogFields'.)
 */
export type Span = z.output<typeof TraceLogFields> & {
  trace_id: string;
  root_trace_id: string;
  parent_trace_id: string;
  project_uuid: string | null;
  project_name?: string | null;
};

export type ExperimentListRequest = z.input<typeof ExperimentListSchema>;
export type ExperimentSummary = z.output<typeof ExperimentSummariesSchema>['results'][number];
export type ExperimentSamplesRequest = z.input<typeof ExperimentSamplesRequestSchema>;
export type ExperimentSamples = z.output<typeof ExperimentSamplesSchema>;
export type ExperimentSample = ExperimentSamples['results'][number];

export type CompareRequest = z.input<typeof CompareRequestSchema>;
export type CompareResult = z.output<typeof CompareSchema>;
export type CompareMetric = CompareResult['metrics'][number];
export type Comparison = CompareMetric['comparisons'][number];
export type CompareRowsRequest = z.input<typeof CompareRowsRequestSchema>;
export type CompareOutcome = NonNullable<CompareRowsRequest['outcome']>;
export type CompareRows = z.output<typeof CompareRowsSchema>;
export type CompareCell = NonNullable<CompareRows['rows'][number]['runs'][number]>;

export type DatasetSummary = z.output<typeof DatasetListSchema>['results'][number];
export type TestCasePage = z.output<typeof TestCasePageSchema>;
export type TestCase = TestCasePage['results'][number];
export type TestCaseDraft = z.input<typeof TestCaseSchema>;

export type PromptVersion = z.output<typeof PromptVersionSchema>;
export type PromptVersionCreate = z.input<typeof PromptVersionCreateSchema>;
export type Deployment = z.output<typeof DeploymentSchema>;
export type DeploymentHistory = z.output<typeof DeploymentHistorySchema>;
/** A streamed completion's last event: the whole answer's figures (its other events carry only `chunk`). */
export type CompletionDone = Partial<z.output<typeof CompletionResponseSchema>> & { chunk: string };
export type EvalMetric = z.output<typeof EvalMetricSchema>;
export type EvalMetricCreate = z.input<typeof EvalMetricCreateSchema>;
export type EvalMetricTry = z.input<typeof EvalMetricTrySchema>;
export type EvalMetricUpdate = z.input<typeof EvalMetricUpdateSchema>;
export type EvalMetricVersion = z.output<typeof EvalMetricVersionSchema>;
export type EvalResult = z.output<typeof EvalResultSchema>;

export type EvalRule = z.output<typeof EvalRuleSchema>;
export type EvalRuleCreate = z.input<typeof EvalRuleCreateSchema>;
export type EvalRulePatch = z.input<typeof EvalRulePatchSchema>;
export type EvalRulePreviewRequest = z.input<typeof EvalRulePreviewRequestSchema>;
export type EvalRulePreview = z.output<typeof EvalRulePreviewSchema>;
export type EvalBackfill = z.output<typeof EvalBackfillSchema>;

export type AuditLogPage = z.output<typeof AuditLogPageSchema>;
export type AuditEntry = AuditLogPage['entries'][number];
export type { AuditTargetKind };

export type Person = z.output<typeof UserSchema>;
export type Invitation = z.output<typeof InvitationSchema>;
export type InvitationCreated = z.output<typeof InvitationCreatedSchema>;
export type InvitationPreview = z.output<typeof InvitationPreviewSchema>;
export type Acceptance = z.input<typeof AcceptInvitationSchema>;
