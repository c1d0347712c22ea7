import { Input, NumberInput, Select, SegmentedControl, Stack, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { FormModal } from '../../../components/ui/FormModal';
import { errorAt, fieldErrors, otherErrors } from '../../../lib/field-errors';
import type { Budget, BudgetCreate } from '../api';
import { parseShares, sharesText } from '../lib/labels';

type ScopeKind = Budget['scope']['kind'];
const SCOPES: { value: ScopeKind; label: string }[] = [
  { value: 'organization', label: 'The organization' },
  { value: 'project', label: 'A project' },
  { value: 'api_key', label: 'An API key' },
  { value: 'end_user', label: 'An end user' },
];
const SCOPE_FIELD: Record<Exclude<ScopeKind, 'organization'>, { label: string; key: string }> = {
  project: { label: 'Project name', key: 'project_name' },
  api_key: { label: 'API key id', key: 'api_key_id' },
  end_user: { label: 'End user identifier', key: 'end_user_identifier' },
};

/** What the form submits: a new budget, or (editing) the fields a budget may change. */
export type BudgetFormValues = Omit<BudgetCreate, 'scope'> & { scope?: BudgetCreate['scope'] };

/**
 * A budget's form, to create one (its scope too) or to change one (its scope stays). A webhook already
 * saved keeps its secret when the secret is left empty.
 */
export function BudgetForm({
  budget,
  onClose,
  onSubmit,
  pending,
  error,
}: {
  budget: Budget | null;
  onClose: () => void;
  onSubmit: (values: BudgetFormValues) => void;
  pending: boolean;
  error: unknown;
}) {
  const webhook = budget?.channels.find((c) => c.kind === 'webhook');
  const slack = budget?.channels.find((c) => c.kind === 'slack');
  const [kind, setKind] = useState<ScopeKind>(budget?.scope.kind ?? 'organization');
  const [who, setWho] = useState('');
  const [limit, setLimit] = useState<number | string>(budget?.limit_usd ?? 100);
  const [period, setPeriod] = useState<Budget['period']>(budget?.period ?? 'month');
  const [action, setAction] = useState<Budget['action']>(budget?.action ?? 'block');
  const [shares, setShares] = useState(sharesText(budget?.alert_at ?? [0.5, 0.8, 1]));
  const [webhookUrl, setWebhookUrl] = useState(webhook?.url ?? '');
  const [secret, setSecret] = useState('');
  const [slackUrl, setSlackUrl] = useState(slack?.url ?? '');
  const errors = fieldErrors(error);
  const parsedShares = parseShares(shares);

  const submit = () => {
    const channels: BudgetCreate['channels'] = [];
    if (webhookUrl)
      channels.push({ kind: 'webhook', url: webhookUrl, ...(secret && { secret }) } as NonNullable<
        BudgetCreate['channels']
      >[number]);
    if (slackUrl) channels.push({ kind: 'slack', url: slackUrl });
    const scope = (
      kind === 'organization' ? { kind } : { kind, [SCOPE_FIELD[kind].key]: who.trim() }
    ) as BudgetCreate['scope'];
    onSubmit({
      ...(!budget && { scope }),
      limit_usd: Number(limit),
      period,
      action,
      alert_at: parsedShares ?? [],
      channels,
    });
  };

  return (
    <FormModal
      title={budget ? 'Edit budget' : 'Create budget'}
      onClose={onClose}
      onSubmit={submit}
      submit={budget ? 'Save' : 'Create budget'}
      pending={pending}
      error={otherErrors(error, /^(scope|limit_usd|period|action|alert_at|channels)/)}
      disabled={!parsedShares || (!budget && kind !== 'organization' && !who.trim())}
    >
      {budget ? (
        <Text size="sm">
          Limits the spend of {SCOPES.find((s) => s.value === budget.scope.kind)?.label.toLowerCase()}.
        </Text>
      ) : (
        <Stack gap="xs">
          <Select
            label="Whose spend"
            data={SCOPES}
            value={kind}
            allowDeselect={false}
            onChange={(v) => setKind((v as ScopeKind) ?? 'organization')}
            error={errorAt(errors, 'scope.kind')}
          />
          {kind !== 'organization' && (
            <TextInput
              label={SCOPE_FIELD[kind].label}
              value={who}
              onChange={(e) => setWho(e.currentTarget.value)}
              error={errorAt(errors, 'scope')}
              required
            />
          )}
        </Stack>
      )}
      <NumberInput
        label="Limit (USD)"
        value={limit}
        onChange={setLimit}
        min={0}
        decimalScale={4}
        prefix="$"
        error={errorAt(errors, 'limit_usd')}
      />
      <Stack gap={4}>
        <Input.Label id="budget-period">Period (UTC)</Input.Label>
        <SegmentedControl
          aria-labelledby="budget-period"
          value={period}
          onChange={(v) => setPeriod(v as Budget['period'])}
          data={[
            { value: 'day', label: 'Day' },
            { value: 'month', label: 'Month' },
          ]}
        />
      </Stack>
      <Select
        label="At the limit"
        data={[
          { value: 'block', label: 'Block: refuse calls with 429' },
          { value: 'alert', label: 'Alert only' },
        ]}
        value={action}
        allowDeselect={false}
        onChange={(v) => setAction((v as Budget['action']) ?? 'block')}
        error={errorAt(errors, 'action')}
      />
      <TextInput
        label="Alert at (% of the limit)"
        description="Each share is told once a period to the channels below"
        value={shares}
        onChange={(e) => setShares(e.currentTarget.value)}
        error={parsedShares ? errorAt(errors, 'alert_at') : 'Percentages separated by commas'}
      />
      <TextInput
        label="Webhook URL"
        value={webhookUrl}
        onChange={(e) => setWebhookUrl(e.currentTarget.value)}
        error={errorAt(errors, 'channels.0.url')}
      />
      {webhookUrl && (
        <TextInput
          label="Webhook secret"
          description={webhook?.url === webhookUrl ? 'Leave empty to keep the saved secret' : 'At least 16 characters'}
          value={secret}
          onChange={(e) => setSecret(e.currentTarget.value)}
          error={errorAt(errors, 'channels.0.secret')}
        />
      )}
      <TextInput
        label="Slack webhook URL"
        value={slackUrl}
        onChange={(e) => setSlackUrl(e.currentTarget.value)}
        error={errorAt(errors, webhookUrl ? 'channels.1' : 'channels.0')}
      />
    </FormModal>
  );
}
