import { TextInput } from '@mantine/core';
import { useDebouncedCallback } from '@mantine/hooks';
import { IconSearch } from '@tabler/icons-react';
import { useEffect, useState } from 'react';

/**
 * A search box whose text lives in the URL: typing searches once it settles (Enter at once); a new `value`
 * from the URL (back, a link) only resets the box.
 */
export function SearchBox({
  label,
  placeholder = `${label}…`,
  width,
  value,
  onSearch,
}: {
  label: string;
  placeholder?: string;
  width: number;
  value: string;
  onSearch: (s: string) => void;
}) {
  const [text, setText] = useState(value);
  const search = useDebouncedCallback((s: string) => s.trim() !== value.trim() && onSearch(s), 350);
  useEffect(() => setText(value), [value]);
  return (
    <TextInput
      aria-label={label}
      placeholder={placeholder}
      leftSection={<IconSearch size={16} />}
      w={width}
      value={text}
      onChange={(e) => {
        setText(e.currentTarget.value);
        search(e.currentTarget.value);
      }}
      onKeyDown={(e) => {
        if (e.key !== 'Enter') return;
        search.cancel();
        onSearch(text);
      }}
    />
  );
}
