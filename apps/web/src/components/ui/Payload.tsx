import { Button, Code, Group, Text } from '@mantine/core';
import { useMemo, useState } from 'react';
import { useKeyboardScroll } from '../../hooks/use-keyboard-scroll';
import { formatBytes } from '../../lib/format';
import { asText, preview } from '../../lib/truncate';
import { CopyIcon } from './CopyField';

/**
 * A payload (inputs, output, metadata, ...) as text, cut to a preview when large: a 5 MB input is one
 * string the browser lays out only when asked to.
 */
export function Payload({ value, label, maxHeight = 360 }: { value: unknown; label: string; maxHeight?: number }) {
  const text = useMemo(() => asText(value), [value]);
  const [all, setAll] = useState(false);
  const { shown, hidden } = preview(text, all);
  const scroll = useKeyboardScroll<HTMLPreElement>(label.charAt(0).toUpperCase() + label.slice(1), shown);
  if (value == null || text === '' || text === '{}')
    return (
      <Text size="sm" c="dimmed">
        None
      </Text>
    );
  return (
    <div style={{ position: 'relative' }}>
      <div style={{ position: 'absolute', top: 4, right: 4, zIndex: 1 }}>
        <CopyIcon value={text} label={`Copy ${label}`} />
      </div>
      <Code
        block
        fz="xs"
        {...scroll}
        style={{
          maxHeight: all ? undefined : maxHeight,
          overflow: 'auto',
          whiteSpace: 'pre-wrap',
          wordBreak: 'break-word',
          paddingRight: 36,
        }}
      >
        {shown}
      </Code>
      {(hidden > 0 || all) && text.length > shown.length - 1 && (
        <Group gap="xs" mt={4}>
          {hidden > 0 ? (
            <>
              <Text size="xs" c="dimmed">
                Showing {formatBytes(shown.length)} of {formatBytes(text.length)}.
              </Text>
              <Button size="compact-xs" variant="light" onClick={() => setAll(true)}>
                Show all
              </Button>
            </>
          ) : (
            text.length > 20_000 && (
              <Button size="compact-xs" variant="subtle" onClick={() => setAll(false)}>
                Show less
              </Button>
            )
          )}
        </Group>
      )}
    </div>
  );
}
