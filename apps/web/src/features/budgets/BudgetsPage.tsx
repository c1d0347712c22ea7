import { Button, Stack, Text } from '@mantine/core';
import { IconPigMoney, IconPlus } from '@tabler/icons-react';
import { useState } from 'react';
import { usePermissions } from '../../api/roles';
import { PageHeading } from '../../components/ui/PageHeading';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { useBudgets, useCreateBudget, useDeleteBudget, useUpdateBudget, type Budget, type BudgetCreate } from './api';
import { BudgetForm, type BudgetFormValues } from './components/BudgetForm';
import { BudgetTable } from './components/BudgetTable';

/**
 * The organization's budgets, each with its bar of spend against its limit in the current period; admins
 * create, change and delete them.
 */
export default function BudgetsPage() {
  const budgets = useBudgets();
  const { isAdmin } = usePermissions();
  // null: closed; 'new': creating; a budget: editing it.
  const [editing, setEditing] = useState<Budget | 'new' | null>(null);
  const create = useCreateBudget();
  const update = useUpdateBudget();
  const remove = useDeleteBudget();
  const mutation = editing === 'new' ? create : update;

  const close = () => {
    create.reset();
    update.reset();
    setEditing(null);
  };
  const submit = (values: BudgetFormValues) => {
    if (editing === 'new') create.mutate(values as BudgetCreate, { onSuccess: close });
    else if (editing) update.mutate({ ...values, id: editing.id }, { onSuccess: close });
  };
  const newButton = isAdmin && (
    <Button leftSection={<IconPlus size={16} />} onClick={() => setEditing('new')}>
      Create budget
    </Button>
  );

  return (
    <Stack gap="md">
      <PageHeading crumbs={[{ label: 'Budgets' }]} title="Budgets" right={budgets.data?.length ? newButton : null} />
      {budgets.isPending ? (
        <LoadingState label="Loading the budgets" />
      ) : budgets.isError ? (
        <ErrorState error={budgets.error} title="Could not load the budgets" onRetry={() => budgets.refetch()} />
      ) : budgets.data.length === 0 ? (
        <EmptyState title="No budgets yet" icon={<IconPigMoney size={26} />}>
          <Text size="sm" c="dimmed">
            A budget limits what the gateway's completions cost the organization, a project, an API key or an end user
            over a UTC day or month: it refuses calls past the limit, or only alerts a webhook or Slack.
          </Text>
          {newButton}
        </EmptyState>
      ) : (
        <BudgetTable
          budgets={budgets.data}
          onEdit={isAdmin ? setEditing : null}
          onDelete={isAdmin ? (b) => remove.mutateAsync(b.id) : null}
        />
      )}
      {editing && (
        <BudgetForm
          budget={editing === 'new' ? null : editing}
          onClose={close}
          onSubmit={submit}
          pending={mutation.isPending}
          error={mutation.error}
        />
      )}
    </Stack>
  );
}
