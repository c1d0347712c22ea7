import { queryOptions, useQuery } from '@tanstack/react-query';
import type { AgreementSchema, CriterionPatchSchema } from '@sightline/schemas';
import type { z } from 'zod';
import { api } from './client';
import type { Criterion } from './types';

export const criterionKeys = { all: ['annotation-criteria'] as const };

/** `PATCH /annotation-criteria/{id}`: name the evaluation metric a criterion corresponds to, or forget it (null). */
export type CriterionPatch = z.input<typeof CriterionPatchSchema>;
/** How far a criterion's metric (its judge) agrees with people, and people with each other. */
export type Agreement = z.output<typeof AgreementSchema>;
/** One side's figures: a score criterion's (Spearman's ρ, mean difference) or a value criterion's (Cohen's κ). */
export type AgreementFigures = Agreement['people'];

const criteriaQueryOptions = queryOptions({
  queryKey: criterionKeys.all,
  queryFn: ({ signal }) => api<Criterion[]>('/annotation-criteria', { signal }),
  staleTime: 60_000,
});

/** What spans are annotated by (a span's remarks, and the settings that manage them). */
export const useCriteria = () => useQuery(criteriaQueryOptions);

export const agreementKeys = {
  of: (id: string) => ['criterion-agreement', id] as const,
};

/** The periods agreement can be measured over, in days back from now (the API's default is 30). */
export const AGREEMENT_DAYS = [7, 30, 90] as const;
export type AgreementDays = (typeof AGREEMENT_DAYS)[number];

const DAY_MS = 86_400_000;

/** How far a criterion's judge agrees with people over the last `days` days, in one project when given. */
const agreementQueryOptions = (id: string, days: AgreementDays, projectUuid: string | null) =>
  queryOptions({
    queryKey: [...agreementKeys.of(id), days, projectUuid] as const,
    queryFn: ({ signal }) => {
      const to = new Date();
      const params = new URLSearchParams({
        from: new Date(to.getTime() - days * DAY_MS).toISOString(),
        to: to.toISOString(),
        ...(projectUuid && { project_uuid: projectUuid }),
      });
      return api<Agreement>(`/annotation-criteria/${id}/agreement?${params}`, { signal });
    },
    // The figures move only as spans are annotated and scored: no polling, and reopening a panel within
    // five minutes shows what was read.
    staleTime: 5 * 60_000,
  });

/**
 * A criterion's agreement: over the organization's spans (the criterion's settings, read only when its panel
 * opens), or over one project's (an annotation queue's).
 */
export const useAgreement = (id: string, days: AgreementDays, projectUuid: string | null = null) =>
  useQuery(agreementQueryOptions(id, days, projectUuid));
