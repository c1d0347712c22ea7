import { Text, Tooltip, type TextProps } from '@mantine/core';
import { formatLocal, formatUtc, parseApiTime } from '../../lib/time';

/** A time in the browser's zone, with the UTC time on hover (the API stores and answers UTC). */
export function Timestamp({ value, ...props }: { value: string | null | undefined } & TextProps) {
  const date = parseApiTime(value);
  if (!date)
    return (
      <Text span c="dimmed" {...props}>
        –
      </Text>
    );
  return (
    <Tooltip label={formatUtc(date)} openDelay={300} withArrow>
      <Text span {...props}>
        <time dateTime={date.toISOString()}>{formatLocal(date)}</time>
      </Text>
    </Tooltip>
  );
}
