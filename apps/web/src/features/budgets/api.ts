import { queryOptions, useQuery } from '@tanstack/react-query';
import type { BudgetCreateSchema, BudgetPatchSchema, BudgetSchema } from '@sightline/schemas';
import type { z } from 'zod';
import { api } from '../../api/client';
import { useInvalidatingMutation } from '../../lib/react-query';

// Wire types of the budget routes, from the API's zod schemas (type-only: no schema code reaches the bundle).
export type Budget = z.output<typeof BudgetSchema>;
export type BudgetCreate = z.input<typeof BudgetCreateSchema>;
export type BudgetPatch = z.input<typeof BudgetPatchSchema>;

const budgetKeys = {
  all: ['budgets'] as const,
  list: () => [...budgetKeys.all, 'list'] as const,
};

const budgetsQueryOptions = () =>
  queryOptions({
    queryKey: budgetKeys.list(),
    queryFn: ({ signal }) => api<Budget[]>('/budgets', { signal }),
    // Spend moves with every call through the gateway: read it again now and then.
    refetchInterval: 30_000,
  });

/** The organization's budgets, each with its spend in the current period. */
export const useBudgets = () => useQuery(budgetsQueryOptions());

export const useCreateBudget = () =>
  useInvalidatingMutation(budgetKeys.all, (body: BudgetCreate) => api<Budget>('/budgets', { method: 'POST', body }));

export const useUpdateBudget = () =>
  useInvalidatingMutation(budgetKeys.all, ({ id, ...body }: BudgetPatch & { id: string }) =>
    api<Budget>(`/budgets/${id}`, { method: 'PATCH', body }),
  );

export const useDeleteBudget = () =>
  useInvalidatingMutation(budgetKeys.all, (id: string) => api(`/budgets/${id}`, { method: 'DELETE' }));
