import { Badge, Button, Code, Group, Image, Paper, Stack, Text } from '@mantine/core';
import { IconTool } from '@tabler/icons-react';
import { useState, type ReactNode } from 'react';
import Markdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { useKeyboardScroll } from '../../hooks/use-keyboard-scroll';
import { formatBytes } from '../../lib/format';
import { MARKDOWN_LIMIT, preview } from '../../lib/truncate';
import type { ChatMessage, ChatPart } from '../../lib/chat';
import { ROLE_COLORS } from '../../theme';

// Markdown from a model is untrusted: react-markdown renders no raw HTML, and links open elsewhere.
const MARKDOWN: Components = {
  pre: ({ children }) => <>{children}</>,
  code: ({ className, children }) => {
    const text = String(children ?? '');
    const block = /language-/.test(className ?? '') || text.includes('\n');
    return block ? (
      <Code block fz="xs" my={6} style={{ whiteSpace: 'pre-wrap' }} data-language={className?.replace('language-', '')}>
        {text.replace(/\n$/, '')}
      </Code>
    ) : (
      <Code fz="sm">{text}</Code>
    );
  },
  a: ({ href, children }) => (
    <a href={href} target="_blank" rel="noreferrer noopener">
      {children}
    </a>
  ),
  img: ({ src, alt }) => (
    <Text span size="sm" c="dimmed">
      [image: {alt || String(src ?? '')}]
    </Text>
  ),
};

function LongText({ text }: { text: string }) {
  const [all, setAll] = useState(false);
  const { shown, hidden } = preview(text, all);
  return (
    <>
      {shown.length > MARKDOWN_LIMIT ? (
        <Text size="sm" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
          {shown}
        </Text>
      ) : (
        <div className="markdown">
          <Markdown remarkPlugins={[remarkGfm]} components={MARKDOWN}>
            {shown}
          </Markdown>
        </div>
      )}
      {hidden > 0 && (
        <Group gap="xs" mt={6}>
          <Text size="xs" c="dimmed">
            Showing the first {formatBytes(shown.length)} of {formatBytes(text.length)}.
          </Text>
          <Button size="compact-xs" variant="light" onClick={() => setAll(true)}>
            Show all
          </Button>
        </Group>
      )}
    </>
  );
}

function Part({ part }: { part: ChatPart }) {
  switch (part.type) {
    case 'text':
      return <LongText text={part.text} />;
    case 'image':
      return part.url.startsWith('http') || part.url.startsWith('data:image/') ? (
        <Image src={part.url} alt="image in the message" maw={320} radius="sm" />
      ) : (
        <Text size="sm" c="dimmed">
          [image]
        </Text>
      );
    case 'tool_call':
      return (
        <Paper withBorder p="xs" radius="sm" bg="var(--mantine-color-default)" aria-label={`Call of ${part.name}`}>
          <Group gap={6} mb={4}>
            <IconTool size={14} />
            <Text size="sm" fw={600} ff="monospace">
              {part.name}()
            </Text>
            {part.id && (
              <Text size="xs" c="dimmed" ff="monospace">
                {part.id}
              </Text>
            )}
          </Group>
          <Code block fz="xs" style={{ whiteSpace: 'pre-wrap' }}>
            {part.arguments}
          </Code>
        </Paper>
      );
    case 'tool_result':
      return <ToolResult content={part.content} id={part.id} />;
    case 'json':
      return (
        <Code block fz="xs" style={{ whiteSpace: 'pre-wrap' }}>
          {JSON.stringify(part.value, null, 2)}
        </Code>
      );
  }
}

function ToolResult({ content, id }: { content: string; id?: string }) {
  const shown = preview(content, false).shown;
  const scroll = useKeyboardScroll<HTMLPreElement>(id ? `Result of ${id}` : 'Tool result', shown);
  return (
    <div>
      {id && (
        <Text size="xs" c="dimmed" ff="monospace" mb={2}>
          result of {id}
        </Text>
      )}
      <Code block fz="xs" {...scroll} style={{ whiteSpace: 'pre-wrap', maxHeight: 320, overflow: 'auto' }}>
        {shown}
      </Code>
    </div>
  );
}

/** A conversation: each message with its role, Markdown text, code blocks and tool or function calls. */
export function ChatView({ messages }: { messages: ChatMessage[] }) {
  return (
    <Stack gap="sm" role="list" aria-label="Messages">
      {messages.map((m, i) => (
        <Message key={i} message={m}>
          {m.parts.length ? (
            m.parts.map((p, j) => <Part key={j} part={p} />)
          ) : (
            <Text size="sm" c="dimmed">
              (no content)
            </Text>
          )}
        </Message>
      ))}
    </Stack>
  );
}

function Message({ message, children }: { message: ChatMessage; children: ReactNode }) {
  const color = ROLE_COLORS[message.role] ?? 'gray';
  return (
    <Paper
      role="listitem"
      withBorder
      radius="md"
      p="sm"
      style={{ borderLeft: `3px solid var(--mantine-color-${color}-5)` }}
      aria-label={`${message.role} message`}
    >
      <Group gap={6} mb={6}>
        <Badge size="sm" variant="light" color={color}>
          {message.role}
        </Badge>
        {message.name && (
          <Text size="xs" c="dimmed" ff="monospace">
            {message.name}
          </Text>
        )}
        {message.fromOutput && (
          <Text size="xs" c="dimmed">
            output
          </Text>
        )}
      </Group>
      <Stack gap={6}>{children}</Stack>
    </Paper>
  );
}
