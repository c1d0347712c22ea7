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
