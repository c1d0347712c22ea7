import { Anchor, Code, Group, SegmentedControl, Stack, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { Link } from 'react-router';
import {
  AGREEMENT_DAYS,
  useAgreement,
  type Agreement,
  type AgreementDays,
  type AgreementFigures,
} from '../api/criteria';
import type { Criterion } from '../api/types';
import { formatCount } from '../lib/format';
import { CopyIcon } from './ui/CopyField';
import { ErrorState, LoadingState } from './ui/StateViews';
import { Timestamp } from './ui/Timestamp';

type ValueFigures = Extract<AgreementFigures, { kappa: unknown }>;
type Disagreement = Agreement['disagreements'][number];

const isValue = (f: AgreementFigures): f is ValueFigures => 'kappa' in f;

/** Two decimals, with a true minus sign: κ = −0.12. */
const fixed = (x: number) => x.toFixed(2).replace('-', '−');
const interval = (ci: [number, number] | null) => (ci ? ` (${fixed(ci[0])}–${fixed(ci[1])})` : '');

/** One statistic with its 95% interval, or why there is none (`null`: too few spans, or no spread). */
function statistic(symbol: string, value: number | null, ci: [number, number] | null, n: number, flat: string) {
  if (value === null) return `${symbol} undefined (${n < 2 ? 'one span is too few' : flat})`;
  return `${symbol} = ${fixed(value)}${interval(ci)}`;
}

/** "κ = 0.62 (0.51–0.72), n = 340" or "ρ = 0.81 (0.70–0.88), mean difference 0.11, n = 340". */
export function describeFigures(f: AgreementFigures): string {
  const n = `n = ${formatCount(f.n)}`;
  if (isValue(f)) return `${statistic('κ', f.kappa, f.kappa_ci, f.n, 'every rating is the same value')}, ${n}`;
  const diff = f.mean_abs_diff === null ? '' : `, mean difference ${fixed(f.mean_abs_diff)}`;
  return `${statistic('ρ', f.spearman, f.spearman_ci, f.n, 'the scores do not vary')}${diff}, ${n}`;
}

/** A span's rating: a value, or a score (a judge's 0 or 1 as such). */
const rating = (v: number | string) => (typeof v !== 'number' ? v : Number.isInteger(v) ? String(v) : fixed(v));

/**
 * A criterion's agreement, read when it is mounted (the criteria settings and a queue mount it only when
 * opened): the judge (its evaluation metric) against people, people against each other, the confusion
 * matrix of a value criterion and the spans where the judge is furthest from the people. Over the
 * organization's spans, or one project's (`projectUuid`: an annotation queue's).
 */
export function CriterionAgreement({
  criterion,
  projectUuid = null,
}: {
  criterion: Criterion;
  projectUuid?: string | null;
}) {
  const [days, setDays] = useState<AgreementDays>(30);
  const agreement = useAgreement(criterion.id, days, projectUuid);
  return (
    <Stack gap="sm">
      <Group justify="space-between" align="flex-end" wrap="wrap">
        <div>
          <Title order={4} size="h5">
            Agreement of {criterion.name} with the metric {criterion.eval_metric_name}
          </Title>
          {agreement.data && (
            <Text size="xs" c="dimmed">
              Spans annotated from <Timestamp value={agreement.data.from} size="xs" /> to{' '}
              <Timestamp value={agreement.data.to} size="xs" />, with 95% bootstrap intervals.
            </Text>
          )}
        </div>
        <SegmentedControl
          size="xs"
          aria-label="Period"
          value={String(days)}
          onChange={(v) => setDays(Number(v) as AgreementDays)}
          data={AGREEMENT_DAYS.map((d) => ({ value: String(d), label: `Last ${d} days` }))}
        />
      </Group>
      {agreement.isPending ? (
        <LoadingState label="Measuring the agreement" />
      ) : agreement.isError ? (
        <ErrorState
          error={agreement.error}
          title="The agreement could not be measured"
          onRetry={() => agreement.refetch()}
        />
      ) : (
        <Figures criterion={criterion} agreement={agreement.data} />
      )}
    </Stack>
  );
}

function Figures({ criterion, agreement }: { criterion: Criterion; agreement: Agreement }) {
  const { judge, people, disagreements } = agreement;
  const metric = agreement.eval_metric_name ?? criterion.eval_metric_name;
  // The people's scores are compared on [0, 1] when the criterion has bounds (the API maps them onto it).
  const scaled = agreement.kind === 'score' && criterion.min != null && criterion.max != null;
  return (
    <Stack gap="sm">
      {judge === null ? (
        <Text size="sm">The criterion names no evaluation metric: only people are compared.</Text>
      ) : judge.n === 0 ? (
        <Stack gap={2}>
          <Text size="sm" fw={500}>
            No span has been scored both by the metric {metric} and by a person yet.
          </Text>
          <Text size="sm" c="dimmed">
            To measure how far the metric agrees with people, annotate {criterion.name} on spans the metric scored (in
            the trace view or an annotation queue), or run the metric on spans people annotated (an eval rule, and its
            backfill). Then open this panel again.
          </Text>
        </Stack>
      ) : (
        <Text size="sm">
          <Text span fw={600}>
            Judge agrees with people:
          </Text>{' '}
          {describeFigures(judge)}
        </Text>
      )}
      <Text size="sm">
        <Text span fw={600}>
          People agree with each other:
        </Text>{' '}
        {people.n < 2 ? 'not enough spans rated by two people' : describeFigures(people)}
      </Text>
      {scaled && judge !== null && judge.n > 0 && (
        <Text size="xs" c="dimmed">
          People's scores are read on 0 to 1 ({criterion.min} is 0, {criterion.max} is 1) before the metric's are
          compared with them.
        </Text>
      )}
      {judge !== null && isValue(judge) && judge.n > 0 && <Confusion criterion={criterion} figures={judge} />}
      {disagreements.length > 0 && <Disagreements criterion={criterion} rows={disagreements} />}
    </Stack>
  );
}

/** Rows: the people's value; columns: the judge's. The diagonal is where they agree. */
function Confusion({ criterion, figures }: { criterion: Criterion; figures: ValueFigures }) {
  const { labels, confusion } = figures;
  return (
    <Table
      withTableBorder
      withColumnBorders
      w="auto"
      fz="sm"
      aria-label={`Confusion matrix of ${criterion.name}`}
      captionSide="top"
    >
      <Table.Caption>Spans by the people's value (rows) and the judge's (columns)</Table.Caption>
      <Table.Thead>
        <Table.Tr>
          <Table.Td />
          {labels.map((l) => (
            <Table.Th key={l} scope="col">
              Judge: {l}
            </Table.Th>
          ))}
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {labels.map((row, i) => (
          <Table.Tr key={row}>
            <Table.Th scope="row">People: {row}</Table.Th>
            {labels.map((col, j) => (
              <Table.Td
                key={col}
                ta="right"
                fw={i === j ? 600 : undefined}
                bg={i === j ? 'var(--mantine-color-teal-light)' : undefined}
              >
                {formatCount(confusion[i]?.[j] ?? 0)}
              </Table.Td>
            ))}
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/**
 * Each span opens in its trace's page, in the project it was written to; a span stored without a project
 * has no page, and is shown by its id, to copy.
 */
function Disagreements({ criterion, rows }: { criterion: Criterion; rows: Disagreement[] }) {
  return (
    <Stack gap={4}>
      <Text size="sm" fw={600}>
        Where the judge and people disagree most
      </Text>
      <Table fz="sm" verticalSpacing={4} aria-label={`Disagreements on ${criterion.name}`}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Span</Table.Th>
            <Table.Th>People</Table.Th>
            <Table.Th>Judge</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((d) => (
            <Table.Tr key={d.trace_id}>
              <Table.Td>
                {d.project_uuid ? (
                  <Anchor
                    component={Link}
                    to={`/projects/${d.project_uuid}/traces/${d.root_trace_id}?span=${d.trace_id}`}
                    ff="monospace"
                    size="sm"
                    aria-label={`Open the span ${d.trace_id}`}
                  >
                    {d.trace_id}
                  </Anchor>
                ) : (
                  <Group gap={2} wrap="nowrap">
                    <Code>{d.trace_id}</Code>
                    <CopyIcon value={d.trace_id} label={`Copy the trace id ${d.trace_id}`} />
                  </Group>
                )}
              </Table.Td>
              <Table.Td>{rating(d.people)}</Table.Td>
              <Table.Td>{rating(d.judge)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}
