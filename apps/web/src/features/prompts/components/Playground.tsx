import {
  ActionIcon,
  Anchor,
  Button,
  Grid,
  Group,
  NumberInput,
  Paper,
  Select,
  Stack,
  Text,
  Textarea,
  TextInput,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconPlayerPlay, IconPlayerStop, IconPlus, IconX } from '@tabler/icons-react';
import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { errorMessage, postStream } from '../../../api/client';
import { useProjects } from '../../../api/projects';
import { usePermissions } from '../../../api/roles';
import type { CompletionDone, PromptVersion, PromptVersionCreate } from '../../../api/types';
import { formatCost, formatCount, formatLatency } from '../../../lib/format';
import { useCreatePromptVersion } from '../api';
import { modelParams, paramFields, templateVariables, type ParamFields } from '../lib/prompts';

type Message = { role: PromptVersionCreate['messages'][number]['role']; content: string };
const ROLES: Message['role'][] = ['system', 'user', 'assistant'];
/** Runs go to this project, so that each shows among its traces like any completion. */
const PLAYGROUND_PROJECT = 'playground';

const messagesOf = (v: PromptVersion | null): Message[] =>
  v
    ? v.messages.map((m) => ({
        role: (m.role as Message['role'] | undefined) ?? 'user',
        content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content),
      }))
    : [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: '{{question}}' },
      ];

/**
 * Runs a prompt through the gateway and shows the answer as it streams in, with its tokens, cost, latency
 * and trace; what was edited can be saved as the prompt's next version.
 */
export function Playground({
  versions,
  initial,
  onOpen,
}: {
  versions: PromptVersion[];
  initial: PromptVersion | null;
  /** Opens a version here (one chosen to start from, or one just saved), or a blank prompt (null). */
  onOpen: (v: PromptVersion | null) => void;
}) {
  const { canWrite } = usePermissions();
  const [name, setName] = useState(initial?.name ?? '');
  const [provider, setProvider] = useState(initial?.provider ?? 'openai');
  const [model, setModel] = useState(initial?.model ?? 'gpt-4o-mini');
  const [messages, setMessages] = useState<Message[]>(() => messagesOf(initial));
  const [params, setParams] = useState<ParamFields>(() => paramFields(initial?.model_params));
  const [values, setValues] = useState<Record<string, string>>({});
  const [answer, setAnswer] = useState('');
  const [done, setDone] = useState<CompletionDone | null>(null);
  const [error, setError] = useState<string | null>(null);
  const running = useRef<AbortController | null>(null);
  const [isRunning, setRunning] = useState(false);
  const save = useCreatePromptVersion();
  const variables = templateVariables(messages);

  const run = async () => {
    const abort = new AbortController();
    running.current = abort;
    setRunning(true);
    setAnswer('');
    setDone(null);
    setError(null);
    const body = {
      project_name: PLAYGROUND_PROJECT,
      trace_name: name ? `playground: ${name}` : 'playground',
      llm_configuration: { provider, model, messages, model_params: modelParams(params, initial?.model_params) },
      inputs: Object.fromEntries(variables.map((v) => [v, values[v] ?? ''])),
    };
    try {
      await postStream(
        '/completion/stream',
        body,
        (data) => {
          const event = data as CompletionDone;
          if (event.chunk) setAnswer((a) => a + event.chunk);
          if (event.status) setDone(event);
        },
        abort.signal,
      );
    } catch (err) {
      if (!abort.signal.aborted) setError(errorMessage(err));
    } finally {
      setRunning(false);
    }
  };
  const saveVersion = () =>
    save.mutate(
      { name: name.trim(), provider, model, messages, model_params: modelParams(params, initial?.model_params) },
      {
        onSuccess: (v) => {
          notifications.show({ color: 'teal', message: `Saved ${v.name} v${v.version_number}.` });
          onOpen(v);
        },
      },
    );
  const setMessage = (i: number, change: Partial<Message>) =>
    setMessages(messages.map((m, j) => (j === i ? { ...m, ...change } : m)));

  return (
    <Grid>
      <Grid.Col span={{ base: 12, lg: 7 }}>
        <Stack gap="sm">
          <Group align="flex-end" gap="sm">
            <Select
              label="Start from"
              placeholder="A blank prompt"
              data={versions.map((v) => ({ value: String(v.id), label: `${v.name} v${v.version_number}` }))}
              value={initial ? String(initial.id) : null}
              onChange={(id) => onOpen(versions.find((x) => String(x.id) === id) ?? null)}
              searchable
              clearable
              w={240}
            />
            <TextInput label="Provider" value={provider} onChange={(e) => setProvider(e.currentTarget.value)} w={120} />
            <TextInput label="Model" value={model} onChange={(e) => setModel(e.currentTarget.value)} w={180} />
          </Group>
          <ParamsFields value={params} onChange={(change) => setParams({ ...params, ...change })} />
          {messages.map((m, i) => (
            <Paper key={i} withBorder radius="md" p="xs">
              <Group justify="space-between" mb={4}>
                <Select
                  aria-label={`Role of message ${i + 1}`}
                  data={ROLES}
                  value={m.role}
                  onChange={(role) => role && setMessage(i, { role: role as Message['role'] })}
                  allowDeselect={false}
                  size="xs"
                  w={130}
                />
                <ActionIcon
                  variant="subtle"
                  color="gray"
                  aria-label={`Remove message ${i + 1}`}
                  onClick={() => setMessages(messages.filter((_, j) => j !== i))}
                  disabled={messages.length === 1}
                >
                  <IconX size={14} />
                </ActionIcon>
              </Group>
              <Textarea
                aria-label={`Message ${i + 1}`}
                autosize
                minRows={2}
                maxRows={12}
                value={m.content}
                onChange={(e) => setMessage(i, { content: e.currentTarget.value })}
              />
            </Paper>
          ))}
          <Group justify="space-between">
            <Button
              variant="subtle"
              size="xs"
              leftSection={<IconPlus size={14} />}
              onClick={() => setMessages([...messages, { role: 'user', content: '' }])}
            >
              Add a message
            </Button>
            {canWrite && (
              <Group gap="xs" align="flex-end">
                <TextInput
                  aria-label="Prompt name"
                  placeholder="prompt name"
                  value={name}
                  onChange={(e) => setName(e.currentTarget.value)}
                  size="xs"
                />
                <Button
                  size="xs"
                  variant="default"
                  onClick={saveVersion}
                  loading={save.isPending}
                  disabled={!name.trim()}
                >
                  Save as new version
                </Button>
              </Group>
            )}
          </Group>
          {save.isError && (
            <Text size="sm" c="red" role="alert">
              {errorMessage(save.error)}
            </Text>
          )}
        </Stack>
      </Grid.Col>
      <Grid.Col span={{ base: 12, lg: 5 }}>
        <Stack gap="sm">
          {variables.length > 0 && (
            <Paper withBorder radius="md" p="sm">
              <Text size="sm" fw={600} mb={4}>
                Variables
              </Text>
              {variables.map((v) => (
                <Textarea
                  key={v}
                  label={`{{${v}}}`}
                  autosize
                  minRows={1}
                  value={values[v] ?? ''}
                  onChange={(e) => setValues({ ...values, [v]: e.currentTarget.value })}
                />
              ))}
            </Paper>
          )}
          {isRunning ? (
            <Button color="gray" leftSection={<IconPlayerStop size={16} />} onClick={() => running.current?.abort()}>
              Stop
            </Button>
          ) : (
            <Button leftSection={<IconPlayerPlay size={16} />} onClick={() => void run()} disabled={!canWrite}>
              Run
            </Button>
          )}
          <Paper withBorder radius="md" p="sm" mih={160} aria-live="polite" aria-label="Answer">
            {error ? (
              <Text size="sm" c="red" role="alert">
                {error}
              </Text>
            ) : (
              <Text size="sm" style={{ whiteSpace: 'pre-wrap' }} c={answer ? undefined : 'dimmed'}>
                {answer || (isRunning ? 'Waiting for the first tokens…' : 'Run the prompt to see its answer here.')}
              </Text>
            )}
          </Paper>
          {done && <RunFigures done={done} />}
        </Stack>
      </Grid.Col>
    </Grid>
  );
}

function RunFigures({ done }: { done: CompletionDone }) {
  const projects = useProjects();
  const project = projects.data?.find((p) => p.name === PLAYGROUND_PROJECT);
  const refetch = projects.refetch;
  // The first run creates the project: read the list again to link its trace.
  useEffect(() => {
    if (done.trace_id) void refetch();
  }, [done.trace_id, refetch]);
  return (
    <Group gap="lg" role="status">
      {done.status === 'error' && (
        <Text size="sm" c="red">
          {done.error ?? 'The completion failed'}
        </Text>
      )}
      <Text size="sm">
        Tokens <b>{formatCount(done.input_tokens)}</b> in / <b>{formatCount(done.output_tokens)}</b> out
      </Text>
      <Text size="sm">
        Cost <b>{formatCost(done.cost)}</b>
      </Text>
      <Text size="sm">
        Latency <b>{formatLatency(done.latency)}</b>
      </Text>
      {done.trace_id && project && (
        <Anchor component={Link} to={`/projects/${project.uuid}/traces/${done.trace_id}`} size="sm">
          Open its trace
        </Anchor>
      )}
    </Group>
  );
}

const FORMATS = [
  { value: 'text', label: 'Text' },
  { value: 'json_object', label: 'JSON object' },
];

/** Temperature, max tokens, top_p and the response format; a field left empty is the provider's default. */
function ParamsFields({ value, onChange }: { value: ParamFields; onChange: (change: Partial<ParamFields>) => void }) {
  return (
    <Group align="flex-end" gap="sm" role="group" aria-label="Model parameters">
      <NumberInput
        label="Temperature"
        placeholder="default"
        min={0}
        max={2}
        step={0.1}
        decimalScale={2}
        clampBehavior="strict"
        value={value.temp}
        onChange={(v) => onChange({ temp: v })}
        w={120}
      />
      <NumberInput
        label="Max tokens"
        placeholder="default"
        min={1}
        step={1}
        allowDecimal={false}
        allowNegative={false}
        value={value.max_length}
        onChange={(v) => onChange({ max_length: v })}
        w={120}
      />
      <NumberInput
        label="Top p"
        placeholder="default"
        min={0}
        max={1}
        step={0.05}
        decimalScale={2}
        clampBehavior="strict"
        value={value.top_p}
        onChange={(v) => onChange({ top_p: v })}
        w={120}
      />
      <Select
        label="Response format"
        data={
          value.response_format === 'json_schema'
            ? [...FORMATS, { value: 'json_schema', label: 'JSON schema' }]
            : FORMATS
        }
        value={value.response_format}
        onChange={(v) => v && onChange({ response_format: v as ParamFields['response_format'] })}
        allowDeselect={false}
        w={160}
      />
    </Group>
  );
}
